#include <csiop/driverdeployment/registrar_logs.hpp>

#include <algorithm>
#include <vector>

namespace csiop::driverdeployment {
namespace {

std::string_view trimmed(std::string_view line, std::string_view blanks = " \t\r") {
  const auto first = line.find_first_not_of(blanks);
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = line.find_last_not_of(blanks);
  return line.substr(first, last - first + 1);
}

} // namespace

std::vector<std::string> logLines(std::string_view log, std::size_t lines) {
  std::vector<std::string_view> kept;
  while (!log.empty() && kept.size() < lines) {
    const auto end = log.find_last_not_of('\n');
    if (end == std::string_view::npos) {
      break;
    }
    log = log.substr(0, end + 1);
    const auto start = log.find_last_of('\n');
    const std::string_view line =
        trimmed(start == std::string_view::npos ? log : log.substr(start + 1));
    log = start == std::string_view::npos ? std::string_view() : log.substr(0, start);
    if (!line.empty()) {
      kept.push_back(line);
    }
  }
  std::vector<std::string> out;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    std::string squeezed;
    for (const char ch : *it) {
      if (ch != ' ' || squeezed.empty() || squeezed.back() != ' ') {
        squeezed += ch;
      }
    }
    std::string line = printableLine(squeezed, kRegistrarLogLineMax);
    if (squeezed.size() > kRegistrarLogLineMax) {
      line += "...";
    }
    out.push_back(std::move(line));
  }
  return out;
}

std::optional<std::string> kubeletLogError(std::string_view log) {
  // The kubelet's, and the CRI log reader's, words for a log it could not read (a container
  // whose log file is gone or not there yet: kuberuntime's GetContainerLogs, cri-client's
  // ReadLogs).
  constexpr std::string_view kUnreadable[] = {"unable to retrieve container logs for ",
                                              "failed to try resolving symlinks in path ",
                                              "failed to open log file ",
                                              "failed to read log file ",
                                              "failed to tail ",
                                              "failed to seek "};
  const std::string_view text = trimmed(log, " \t\r\n");
  if (text.find('\n') != std::string_view::npos ||
      std::ranges::none_of(kUnreadable,
                           [&](std::string_view prefix) { return text.starts_with(prefix); })) {
    return std::nullopt;
  }
  return printableLine(text, kRegistrarLogLineMax);
}

std::string quotedTail(const std::vector<std::string>& lines, std::size_t budget) {
  if (lines.empty()) {
    return {};
  }
  constexpr std::string_view kSeparator = " / ";
  constexpr std::string_view kLeftOut = "... / ";
  std::size_t first = lines.size();
  std::size_t size = 0;
  while (first > 0) {
    const std::size_t more = lines[first - 1].size() + 2 + (first < lines.size() ? 3 : 0);
    const std::size_t leftOut = first - 1 > 0 ? kLeftOut.size() : 0;
    if (size + more + leftOut > budget && first < lines.size()) {
      break;
    }
    size += more;
    --first;
  }
  std::string out = first > 0 ? std::string(kLeftOut) : std::string();
  for (std::size_t i = first; i < lines.size(); ++i) {
    out += (i > first ? std::string(kSeparator) : std::string()) + "\"" + lines[i] + "\"";
  }
  return out;
}

bool RegistrarLogs::due(const UnregisteredNode& node, Clock::time_point now) const {
  const auto read = byPod_.find(node.podUid);
  if (read == byPod_.end() || read->second.restarts != node.restarts ||
      read->second.previous != node.previousLog) {
    return true;
  }
  return now - read->second.at >=
         (read->second.passing ? kRegistrarLogRetry : kRegistrarLogRefresh);
}

void RegistrarLogs::record(const UnregisteredNode& node, std::vector<std::string> lines,
                           std::string error, Clock::time_point now, bool passing) {
  passing = passing && !error.empty();
  byPod_[node.podUid] = {node.restarts,    node.previousLog, std::move(lines),
                         std::move(error), passing,          now};
}

std::chrono::seconds RegistrarLogs::readAgainIn() const {
  const bool retry =
      std::ranges::any_of(byPod_, [](const auto& entry) { return entry.second.passing; });
  return retry ? kRegistrarLogRetry : kRegistrarLogRefresh;
}

std::string RegistrarLogs::noteFor(const UnregisteredNode& node, std::size_t budget) const {
  const auto read = byPod_.find(node.podUid);
  if (read == byPod_.end()) {
    return {};
  }
  const std::string which =
      read->second.previous ? "the exited registrar's log" : "the registrar's log";
  if (!read->second.error.empty()) {
    return "; " + which + " could not be read (" + read->second.error + ")";
  }
  if (read->second.lines.empty()) {
    return "; " + which + " is empty";
  }
  const std::string lead = "; " + which + " ends: ";
  return lead + quotedTail(read->second.lines, budget > lead.size() ? budget - lead.size() : 0);
}

void RegistrarLogs::retain(const std::set<std::string>& podUids) {
  std::erase_if(byPod_, [&](const auto& entry) { return !podUids.contains(entry.first); });
}

} // namespace csiop::driverdeployment
