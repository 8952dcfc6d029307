// Everything the benchmark measured, filled in as it goes (a failed run still prints what it
// got), and the table it prints.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "fleet.hpp"
#include "machine.hpp"
#include "metrics.hpp"
#include "peer.hpp"
#include "process_usage.hpp"
#include "scale.hpp"
#include "workload.hpp"

namespace csiop::bench {

struct LatencySeries {
  std::vector<double> childrenMs; // create returned -> last rendered object seen
  std::vector<double> readyMs;    // create returned -> Ready=True seen
  std::vector<double> deleteMs;   // delete returned -> DriverDeployment gone
};

struct Report {
  Machine machine;
  std::string loadStart;
  std::string loadEnd;
  std::string cluster; // how it was obtained
  int nodes = 0;
  std::string kubernetesVersion;
  std::string operatorCommand;
  std::string operatorLog;
  std::vector<ObjectKey> objectsPerDriverDeployment; // of one DriverDeployment

  int singleIterations = 0;
  LatencySeries single;
  int many = 0;
  LatencySeries manySeries;
  std::optional<double> manyCreateSpanMs;  // first create sent -> last create returned
  std::optional<double> manyAllChildrenMs; // first create sent -> every child of every DD seen
  std::optional<double> manyAllReadyMs;    // first create sent -> every DD Ready
  std::optional<double> manyDeleteAllMs;   // first delete sent -> every DD gone
  std::optional<ApiUsage> manyRun;         // creates -> all Ready -> operator idle
  std::optional<ApiUsage> steady;          // the window after that
  std::optional<ApiUsage> deleteRun;       // deletes sent -> every DD gone
  std::optional<MemoryUsage> idleMemory;
  std::optional<MemoryUsage> loadedMemory;
  // With loadedMemory, from /metrics: each cache's objects and estimated heap, by resource
  // (csiop_cache_objects, csiop_cache_heap_bytes).
  std::map<std::string, double> loadedCacheObjects;
  std::map<std::string, double> loadedCacheHeapBytes;
  // The operator's CPU time; peaks over 1 s samples.
  std::optional<CpuUsage> idleCpu;       // the 5 s before idleMemory
  std::vector<CpuUsage> singleCpu;       // per 1-DD round: create sent -> Ready seen
  std::optional<CpuUsage> manyCpu;       // the manyRun window (creates sent to operator idle)
  std::optional<CpuUsage> steadyCpu;     // the steady window
  std::optional<CpuUsage> deleteManyCpu; // deletes sent -> every DD gone
  std::size_t watchEvents = 0;           // read by the benchmark's watches
  std::optional<ScaleReport> scale;      // --scenario scale
  std::optional<PeerReport> peer;        // --scenario peer
  std::optional<FleetReport> fleet;      // --scenario fleet

  std::vector<std::string> problems;
  double wallSeconds = 0;
};

void printReport(std::ostream& out, const Report& report);

} // namespace csiop::bench
