// What rollout_bench reads while a rollout runs: the DriverDeployment's status.rollout.node,
// the real node's plugin pod, and the operator's CPU time and API requests. Everything is read
// with kubectl, polled every 200 ms, so a time is known to about 0.3 s.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "operator_process.hpp"

namespace csiop::bench {

using Clock = std::chrono::steady_clock;

// status.rollout.node.<field> of the bench's DriverDeployment ("" when absent).
std::string rolloutField(const std::string& field);
// How many nodes' CSINode list the driver (status.nodes.registered).
int registeredNodes();
// The real node's live plugin pod: "<uid> <revision> <ready>" ("" when there is none).
std::string realNodePlugin();
bool realNodeRegistered();

// Polls `done` every 200 ms until it holds: the seconds since `start`. Throws
// std::runtime_error naming `what` after `timeout`.
double until(const std::string& what, Clock::time_point start, std::chrono::seconds timeout,
             const std::function<bool()>& done);

// The operator's CPU time (user + system, s) and API requests so far.
struct Usage {
  double cpu = 0;
  double requests = 0;
  double writes = 0;
  Usage operator-(const Usage& o) const {
    return {cpu - o.cpu, requests - o.requests, writes - o.writes};
  }
};
Usage usageOf(e2e::OperatorProcess& op);

} // namespace csiop::bench
