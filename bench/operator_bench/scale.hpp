// The scale scenario (--scenario scale): many DriverDeployments on many nodes, each node's
// CSINode listing a few of their drivers as a kubelet would. Their node plugins select no node
// and their controllers have 0 replicas: the figures are the operator's (caches, reconciles,
// API requests, memory), not the pods' (1,000 drivers on 5,000 nodes would be 5 million pods,
// which no machine of this size runs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <csiop/kube/http.hpp>

#include "context.hpp"
#include "metrics.hpp"
#include "process_usage.hpp"

namespace csiop::bench {

struct ScaleReport {
  int driverDeployments = 0;
  int nodes = 0;
  int driversPerNode = 0;
  int objectsPerDriverDeployment = 0;
  std::optional<double> registerMs;    // every CSINode written
  std::optional<double> createSpanMs;  // creates sent -> last create returned
  std::optional<double> allChildrenMs; // creates sent -> every child of every DD seen
  std::optional<double> idleMs;        // creates sent -> operator idle (statuses written)
  int truthfulStatuses = 0;            // status.nodes.registered == CSINodes listing the driver
  std::optional<ApiUsage> converge;    // creates -> idle
  std::optional<CpuUsage> convergeCpu;
  std::optional<MemoryUsage> convergedMemory;

  int csiNodeUpdates = 0;          // each drops or re-adds one driver of one node
  std::optional<ApiUsage> updates; // the updates -> idle after each
  std::optional<CpuUsage> updatesCpu;
  std::optional<double> reconcileMeanMs; // mean reconcile duration during the updates

  std::optional<ApiUsage> steady;
  std::optional<CpuUsage> steadyCpu;

  std::optional<double> restartReadyMs; // SIGTERM'd operator started again -> /readyz 200
  std::optional<double> restartIdleMs;  // started -> every DD reconciled, operator idle
  std::optional<ApiUsage> restart;      // everything the new process did until idle
  std::optional<CpuUsage> restartCpu;
  std::optional<MemoryUsage> restartMemory;
};

// Runs the scenario with `names` (their drivers listed by `driversPerNode` CSINode entries per
// node), filling `out` as it goes. `operatorArgv` starts the operator again for the cold start;
// `health` is its /readyz.
boost::asio::awaitable<void> runScale(Context& ctx, std::vector<std::string> names,
                                      int driversPerNode, std::vector<std::string> operatorArgv,
                                      kube::HttpClient& health, ScaleReport& out);

} // namespace csiop::bench
