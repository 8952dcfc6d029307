// Command line of operator_bench (parsed with CLI11 in main.cpp).
#pragma once

#include <string>
#include <vector>

namespace csiop::bench {

struct Options {
  std::string kubeconfig;                // "": start (or reuse) the cluster `clusterName`
  std::string clusterName = "bench";     // test/cluster name when the benchmark starts one
  int nodes = 50;                        // nodes of that cluster
  bool keepCluster = false;              // leave the cluster running afterwards
  std::string operatorBinary;            // csi-operator to run
  std::vector<std::string> operatorArgs; // extra `csi-operator run` arguments
  int singleIterations = 20;             // create/measure/delete rounds of one DriverDeployment
  int many = 100;                        // DriverDeployments applied at once (fleet: 5)
  int steadySeconds = 30;                // steady-state window after convergence
  int timeoutSeconds = 900;              // per wait (children, Ready, gone)
  std::string workDir;                   // operator log; "": a new /tmp/csiop-bench-XXXXXX
  std::string scenario = "standard";     // standard | scale.hpp | peer.hpp | fleet.hpp
  std::string peerBinary;                // peer: the ceph-csi-operator binary
  std::string peerSource;                // peer: its source checkout (for its CRDs)
  int driversPerNode = 4;                // scale: drivers each node's CSINode lists
  int churnPods = 0;                     // fleet: foreign pods churned once converged (churn.hpp)
};

} // namespace csiop::bench
