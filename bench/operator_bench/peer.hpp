// The peer scenario (--scenario peer): csi-operator and a peer operator (ceph-csi-operator,
// built from its source) measured by one harness on one cluster, one after the other, never at
// once. Each gets the same workload (subjects.hpp) and the same measurements (the workloads'
// tracker and /proc): idle memory; one custom resource created, Ready and deleted --iterations
// times (latencies and the operator's CPU); --many created at once (time to every child and to
// every workload Ready, CPU to Ready, API requests and reconciles until idle, memory
// converged); and those deleted at once. Each phase records how busy the machine was.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <csiop/kube/client.hpp>

#include "options.hpp"
#include "phase.hpp"
#include "process_usage.hpp"

namespace csiop::bench {

struct SubjectFigures {
  std::string title;
  std::string command;
  std::string log;
  std::optional<MemoryUsage> idleMemory;
  std::vector<double> singleChildrenMs;   // create sent -> CSIDriver, DaemonSet, Deployment seen
  std::vector<double> singleReadyMs;      // create sent -> both workloads Ready
  std::vector<double> singleDeleteMs;     // delete sent -> CR and both workloads gone
  std::optional<double> singleCpuSeconds; // all rounds, create sent -> gone
  int many = 0;
  std::optional<double> manyChildrenSeconds; // first create sent -> every child of all
  std::optional<double> manyReadySeconds;    // first create sent -> every workload Ready
  std::optional<double> manyCpuToReadySeconds;
  std::optional<double> manyRequests; // create -> operator idle (its own request counter)
  std::optional<double> manyReconciles;
  std::optional<MemoryUsage> convergedMemory;
  std::optional<double> deleteAllSeconds; // first delete sent -> every CR and workload gone
  std::optional<double> deleteCpuSeconds;
  bool leavesCsiDriver = false; // the harness deleted the CSIDrivers it left
  std::vector<PhaseLoad> phases;
  std::vector<std::string> problems;
};

struct PeerReport {
  int iterations = 0;
  int many = 0;
  SubjectFigures ours;
  SubjectFigures peer;
};

// Runs both subjects against the cluster of `client` (its kubeconfig is given to each).
boost::asio::awaitable<void> runPeer(const Options& options, kube::Client& client,
                                     std::filesystem::path kubeconfig,
                                     std::filesystem::path workDir, PeerReport& report);

void printPeerReport(std::ostream& out, const PeerReport& report);

} // namespace csiop::bench
