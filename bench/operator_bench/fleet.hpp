// The fleet scenario (--scenario fleet): the size of cluster users run. --many (default 5)
// DriverDeployments of the standard workload (workload.hpp), whose node plugin runs on every
// node, created at once on the --nodes of the cluster: nodes x DriverDeployments node plugin
// pods (5 on 5,000 nodes: 25,000). It measures the time to every child and to every node
// plugin pod Ready (converged), the operator's CPU to then and to idle against the pod changes
// the cluster made meanwhile (the events the operator's pod watch receives, counted by a
// pods watch of the benchmark's own), its reconciles and API requests, its memory converged,
// a steady state, and the deletion of all of them; with the machine's load in each phase.
// The cluster the benchmark starts for it gets a raised API rate for the controller manager
// and the scheduler (fleetClusterArgs), which would otherwise create and bind the pods at 20
// and 50 requests a second.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "churn.hpp"
#include "context.hpp"
#include "metrics.hpp"
#include "phase.hpp"
#include "pod_watch.hpp"
#include "process_usage.hpp"

namespace csiop::bench {

struct Report;

struct FleetReport {
  int driverDeployments = 0;
  int nodes = 0;
  int objectsPerDriverDeployment = 0;
  int nodePluginPods = 0;        // nodes x DriverDeployments, each to be Ready
  std::string controlPlaneRates; // control_plane_rates.hpp; "" when not known

  std::optional<double> createSpanMs;  // creates sent -> last create returned
  std::optional<double> allChildrenMs; // creates sent -> every child of every DD seen
  std::optional<double> podsReadyMs;   // creates sent -> every node plugin pod Ready: converged
  std::optional<double> ddsReadyMs;    // creates sent -> every DD's status Ready=True
  std::optional<double> idleMs;        // creates sent -> operator idle (the quiet 3 s not counted)
  PodChanges convergeChanges;          // creates sent -> converged
  std::optional<CpuUsage> convergeCpu;
  PodChanges idleChanges; // creates sent -> operator idle
  std::optional<CpuUsage> idleCpu;
  std::optional<ApiUsage> idleUsage;
  std::optional<MemoryUsage> convergedMemory; // at idle (or when the wait for the pods timed out)
  bool memoryAtTimeout = false;               // convergedMemory read when the pods timed out
  // With convergedMemory, from /metrics: each cache's objects and estimated heap, by resource.
  std::map<std::string, double> cacheObjects;
  std::map<std::string, double> cacheHeapBytes;

  PodChanges steadyChanges;
  std::optional<ApiUsage> steady;
  std::optional<CpuUsage> steadyCpu;

  std::optional<double> deleteGoneMs; // deletes sent -> every DD and its children gone
  std::optional<CpuUsage> deleteCpu;
  std::optional<ApiUsage> deleteUsage;
  std::optional<double> podsGoneMs; // deletes sent -> no node plugin pod left
  PodChanges podsGoneChanges;       // deletes sent -> no node plugin pod left
  std::optional<CpuUsage> podsGoneCpu;

  std::optional<ChurnReport> churn; // --churn-pods, after the steady state

  int podWatchRelists = 0; // their changes are not counted
  std::vector<PhaseLoad> phases;
};

// --many unless given.
inline constexpr int kFleetDriverDeployments = 5;

// The test/cluster/up flags of the cluster the benchmark starts for the scenario.
std::vector<std::string> fleetClusterArgs();

// Runs the scenario with `names` on the report.nodes nodes whose CSINodes list their drivers,
// filling report.fleet (and report.problems) as it goes. Leaves no DriverDeployment.
boost::asio::awaitable<void> runFleet(Context& ctx, std::vector<std::string> names, Report& report);

void printFleetReport(std::ostream& out, const FleetReport& report);

} // namespace csiop::bench
