#include <csiop/driverdeployment/registrar_logs.hpp>

#include <vector>

namespace csiop::driverdeployment {
namespace {

std::string_view trimmed(std::string_view line) {
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = line.find_last_not_of(" \t\r");
  return line.substr(first, last - first + 1);
}

} // namespace

std::string logEvidence(std::string_view log, std::size_t lines) {
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
  std::string out;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    std::string line = printableLine(*it, kRegistrarLogLineMax);
    if (it->size() > kRegistrarLogLineMax) {
      line += "...";
    }
    out += (out.empty() ? "\"" : " / \"") + line + "\"";
  }
  return out;
}

bool RegistrarLogs::due(const UnregisteredNode& node, Clock::time_point now) const {
  const auto read = byPod_.find(node.podUid);
  return read == byPod_.end() || read->second.restarts != node.restarts ||
         read->second.previous != node.previousLog || now - read->second.at >= kRegistrarLogRefresh;
}

void RegistrarLogs::record(const UnregisteredNode& node, std::string evidence, bool readable,
                           Clock::time_point now) {
  byPod_[node.podUid] = {node.restarts, node.previousLog, readable, std::move(evidence), now};
}

std::string RegistrarLogs::noteFor(const UnregisteredNode& node) const {
  const auto read = byPod_.find(node.podUid);
  if (read == byPod_.end()) {
    return {};
  }
  const char* which = read->second.previous ? "the exited registrar's log" : "the registrar's log";
  if (!read->second.readable) {
    return std::string("; ") + which + " could not be read (" + read->second.evidence + ")";
  }
  if (read->second.evidence.empty()) {
    return std::string("; ") + which + " is empty";
  }
  return std::string("; ") + which + " ends: " + read->second.evidence;
}

void RegistrarLogs::retain(const std::set<std::string>& podUids) {
  std::erase_if(byPod_, [&](const auto& entry) { return !podUids.contains(entry.first); });
}

} // namespace csiop::driverdeployment
