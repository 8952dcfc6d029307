// The registrar's own words for a node where the driver is not registered
// (registration_problems.hpp): the last lines of its log, read through the API server
// (pods/log, which the chart grants with rbac.podLogs), and how often.
//
// A log is read for a reported node's registrar only: at most once per
// kRegistrarLogRefresh per pod, again at once when the registrar restarted since, and for at most
// kRegistrarLogsPerPass nodes of a DriverDeployment per pass (those the status shows first). Each
// read asks for the last kRegistrarLogLines lines and kRegistrarLogBytes bytes: a bounded cost
// whatever the number of nodes or the size of the log.
//
// Pure: the caller passes the time and does the reading.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include <csiop/driverdeployment/registration_problems.hpp>

namespace csiop::driverdeployment {

inline constexpr std::chrono::seconds kRegistrarLogRefresh{60};
inline constexpr std::size_t kRegistrarLogsPerPass = 3;
inline constexpr std::int64_t kRegistrarLogLines = 6;
inline constexpr std::int64_t kRegistrarLogBytes = 4096;
// A log line longer than this is cut (a message stays readable).
inline constexpr std::size_t kRegistrarLogLineMax = 300;

// The evidence a log gives: its last `lines` non-blank lines, each trimmed and cut at
// kRegistrarLogLineMax, quoted and joined with " / ". "" for an empty log.
std::string logEvidence(std::string_view log, std::size_t lines = kRegistrarLogLines);

class RegistrarLogs {
public:
  using Clock = std::chrono::steady_clock;

  // Whether `node`'s registrar log should be read now.
  bool due(const UnregisteredNode& node, Clock::time_point now) const;
  // What a read gave: the log's evidence (logEvidence), or why it could not be read.
  void record(const UnregisteredNode& node, std::string evidence, bool readable,
              Clock::time_point now);
  // The message's addition for `node`: "; the registrar's log: ..." ("" if none was read).
  std::string noteFor(const UnregisteredNode& node) const;
  // Forgets every pod not in `podUids` (those no longer reported).
  void retain(const std::set<std::string>& podUids);
  std::size_t size() const { return byPod_.size(); }

private:
  struct Read {
    std::int32_t restarts = 0;
    bool previous = false;
    bool readable = false;
    std::string evidence;
    Clock::time_point at;
  };
  std::map<std::string, Read> byPod_; // pod uid -> the last read
};

} // namespace csiop::driverdeployment
