// The fleet scenario's foreign churn (--churn-pods N): what the cluster's activity that
// concerns no managed driver costs the operator once its DriverDeployments have converged. In
// a namespace of its own (kForeignNamespace), a Deployment of N pods with no volume is scaled
// up, then the Warning Events a busy cluster's kubelets and other provisioners write are
// written for its pods: BackOff (N; no watch of the operator's selects that reason),
// FailedMount of a ConfigMap volume (N), the same FailedMount Events again as a kubelet's
// repeat writes them (count 2), ProvisioningFailed of another provisioner's claims (N / 4);
// then the Deployment is scaled down to 0; then a Deployment of N / 2 pods sharing a claim (bound
// to a volume of a driver no DriverDeployment manages) is scaled up and down; then the namespace
// is deleted. Each phase: the changes
// made (pods as the benchmark's pods watch saw them; Events as written), the operator's CPU
// time over the phase and per 1,000 changes, its memory at the end, the machine's load.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "context.hpp"
#include "phase.hpp"
#include "pod_watch.hpp"
#include "process_usage.hpp"

namespace csiop::bench {

inline constexpr const char* kForeignNamespace = "csiop-bench-foreign";

struct ChurnPhase {
  std::string name;
  std::string unit; // what `changes` counts: "pod changes", "Event writes"
  double changes = 0;
  int failedWrites = 0;
  std::optional<CpuUsage> cpu; // the phase's start -> its changes done and 2 s quiet
  MemoryUsage memoryAfter;
  PhaseLoad load;
};

struct ChurnReport {
  int pods = 0;
  std::vector<ChurnPhase> phases;
  // The operator's caches once every Event is written (csiop_cache_objects, _heap_bytes).
  std::map<std::string, double> cacheObjects;
  std::map<std::string, double> cacheHeapBytes;
  std::vector<std::string> writeErrors; // the first few
};

// Runs the phases with `pods` foreign pods, filling `out` as it goes (a failure midway leaves
// what was measured); deletes the namespace at the end and waits until it is gone.
boost::asio::awaitable<void> runChurn(Context& ctx, PodWatch& podWatch, int pods, ChurnReport& out);

void printChurnReport(std::ostream& out, const ChurnReport& report);

} // namespace csiop::bench
