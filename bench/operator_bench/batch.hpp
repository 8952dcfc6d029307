// DriverDeployments created or deleted at once (the standard scenario's --many, the fleet):
// every request sent together, and what the tracker saw of them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "context.hpp"

namespace csiop::bench {

struct Batch {
  Clock::time_point sentAt{};                          // just before the first request
  std::map<std::string, Clock::time_point> returnedAt; // the requests that succeeded
  std::vector<std::string> errors;                     // "create NAME: ..." of the others

  std::vector<std::string> succeeded() const;
  // sentAt -> the last successful request returned (0 if none did).
  double spanMs() const;
};

// Creates driverDeployment(name) for each name at once (the tracker told what to expect of
// each first) and waits until every request has returned (at most the timeout).
boost::asio::awaitable<Batch> createAtOnce(Context& ctx, std::vector<std::string> names);

// Deletes each DriverDeployment at once and waits until every request has returned.
boost::asio::awaitable<Batch> deleteAtOnce(Context& ctx, std::vector<std::string> names);

// The latest of the tracker's time stamp `at` over `names`; nullopt unless each has it.
std::optional<Clock::time_point> lastOf(const Tracker& tracker,
                                        const std::vector<std::string>& names,
                                        std::optional<Clock::time_point> Timing::*at);

// Every one of `names` and its children gone (Tracker::gone).
bool allGone(const Tracker& tracker, const std::vector<std::string>& names);

} // namespace csiop::bench
