// The registrar's own words for a node where the driver is not registered
// (registration_problems.hpp): the last lines of its log, read through the API server
// (pods/log, which the chart grants with rbac.podLogs), and how often.
//
// A log is read for a reported node's registrar only: at most once per
// kRegistrarLogRefresh per pod (kRegistrarLogRetry after a read that failed for a passing reason),
// again at once when the registrar restarted since, and for at most
// kRegistrarLogsPerPass nodes of a DriverDeployment per pass (those the status shows first). Each
// read asks for the last kRegistrarLogLines lines and kRegistrarLogBytes bytes: a bounded cost
// whatever the number of nodes or the size of the log.
//
// Pure: the caller passes the time and does the reading.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <csiop/driverdeployment/registration_problems.hpp>

namespace csiop::driverdeployment {

inline constexpr std::chrono::seconds kRegistrarLogRefresh{60};
inline constexpr std::chrono::seconds kRegistrarLogRetry{10};
inline constexpr std::size_t kRegistrarLogsPerPass = 3;
inline constexpr std::int64_t kRegistrarLogLines = 6;
inline constexpr std::int64_t kRegistrarLogBytes = 4096;
// A log line longer than this is cut (a message stays readable).
inline constexpr std::size_t kRegistrarLogLineMax = 400;

// The last `lines` non-blank lines of a log, each trimmed, its runs of spaces squeezed to one
// (klog pads its header) and cut at kRegistrarLogLineMax ("..." added), as printable ASCII.
std::vector<std::string> logLines(std::string_view log, std::size_t lines = kRegistrarLogLines);

// The kubelet's answer when it cannot read a container's log file (the container was removed
// while asked for, as a crash-looping registrar's previous container is): it comes as the log
// itself, with a success status. That text if `log` is one, nullopt for a real log.
std::optional<std::string> kubeletLogError(std::string_view log);

// The last of `lines` that fit in `budget` bytes, each quoted, joined with " / ", and "... / "
// first if earlier ones were left out: the end of a log says most (the error the registrar exits
// on). "" if `lines` is empty.
std::string quotedTail(const std::vector<std::string>& lines, std::size_t budget);

class RegistrarLogs {
public:
  using Clock = std::chrono::steady_clock;

  // Whether `node`'s registrar log should be read now.
  bool due(const UnregisteredNode& node, Clock::time_point now) const;
  // What a read gave: the log's last lines (logLines), or why it could not be read (`error`
  // not empty; `passing`: a reason that may be gone in a moment, read again after
  // kRegistrarLogRetry).
  void record(const UnregisteredNode& node, std::vector<std::string> lines, std::string error,
              Clock::time_point now, bool passing = false);
  // When the next read is due at the latest: kRegistrarLogRetry if a read failed for a passing
  // reason, kRegistrarLogRefresh otherwise.
  std::chrono::seconds readAgainIn() const;
  // The message's addition for `node`, at most about `budget` bytes: "; the registrar's log
  // ends: ..." with the lines that fit (quotedTail), or why it could not be read; "" if none
  // was read.
  std::string noteFor(const UnregisteredNode& node, std::size_t budget) const;
  // Forgets every pod not in `podUids` (those no longer reported).
  void retain(const std::set<std::string>& podUids);
  std::size_t size() const { return byPod_.size(); }

private:
  struct Read {
    std::int32_t restarts = 0;
    bool previous = false;
    std::vector<std::string> lines;
    std::string error;
    bool passing = false;
    Clock::time_point at;
  };
  std::map<std::string, Read> byPod_; // pod uid -> the last read
};

} // namespace csiop::driverdeployment
