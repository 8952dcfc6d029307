// operator_bench: what `csi-operator run` costs against a real control plane.
//
//   build/bench/operator_bench [--kubeconfig K] [--nodes 50] [--keep-cluster] [--operator BIN]
//
// Starts (or reuses) the local cluster `bench` of test/cluster with 50 kwok nodes unless given
// a kubeconfig, starts the operator as a child process with metrics on a free port, and prints:
// apply -> all children created and apply -> Ready latencies (p50/p99) for one DriverDeployment
// (repeated) and for 100 applied at once; API requests per reconcile and mutating requests per
// DriverDeployment; mutating requests in a steady-state window (should be 0); the operator's
// VmRSS/VmHWM idle and with 100 DriverDeployments, and its CPU time (utime+stime) idle, per
// DriverDeployment, in the 100-at-once burst (average and peak millicores), in the steady state
// and for the 100 deletes. `--scenario scale --nodes 5000 --many 1000` measures the operator at
// the size of a large cluster instead (scale.hpp); `--scenario peer --peer BIN --peer-source
// DIR` measures csi-operator and ceph-csi-operator one after the other (peer.hpp); `--scenario
// fleet` the DriverDeployments users run (5 by default) with a node plugin pod on every node,
// on a cluster started with a raised API rate for the controller manager and the scheduler
// (fleet.hpp); with `--churn-pods 2000`, also what foreign pods and their Warning Events cost
// it (churn.hpp). Progress goes to stderr, the table to stdout. It measures, it asserts nothing;
// the exit code only says whether every scenario ran.
#include <iostream>

#include <CLI/CLI.hpp>

#include <csiop/testsupport/local_cluster.hpp>

#include "bench.hpp"
#include "context.hpp"
#include "fleet.hpp"
#include "machine.hpp"
#include "options.hpp"
#include "report.hpp"

int main(int argc, char** argv) {
  using namespace csiop::bench;
  Options o;
  o.operatorBinary = CSIOP_OPERATOR_BINARY;
  CLI::App app{"Benchmark of csi-operator run against a local control plane", "operator_bench"};
  app.add_option("--kubeconfig", o.kubeconfig,
                 "Use this cluster instead of starting test/cluster (it is left running)");
  app.add_option("--cluster-name", o.clusterName, "Name of the test/cluster cluster to start")
      ->check([](const std::string& name) {
        return name.rfind("e2e", 0) == 0 || name == "demo"
                   ? "the clusters e2e* (e2e, e2e-helm, ...) and demo belong to the tests and "
                     "the demo; choose another name"
                   : std::string();
      })
      ->capture_default_str();
  app.add_option("--nodes", o.nodes, "Nodes of the cluster it starts")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_flag("--keep-cluster", o.keepCluster, "Leave the started cluster running");
  app.add_option("--operator", o.operatorBinary, "The csi-operator binary")
      ->check(CLI::ExistingFile)
      ->capture_default_str();
  app.add_option(
      "--operator-arg", o.operatorArgs,
      "Extra argument for `csi-operator run` (repeatable), e.g. --operator-arg=--workers=8");
  app.add_option("--iterations", o.singleIterations, "Rounds of the 1-DriverDeployment case")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--many", o.many, "DriverDeployments applied at once (fleet: 5 unless given)")
      ->check(CLI::Range(1, 5000))
      ->capture_default_str();
  app.add_option("--steady-seconds", o.steadySeconds, "Steady-state window after convergence")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--timeout", o.timeoutSeconds, "Seconds allowed for each wait")
      ->check(CLI::Range(10, 7200))
      ->capture_default_str();
  app.add_option("--scenario", o.scenario,
                 "standard: 1 DD repeated, then --many at once with their pods; scale: --many "
                 "DDs without pods on --nodes nodes whose CSINodes list --drivers-per-node "
                 "drivers each (CSINode updates, steady state, cold start); peer: the standard "
                 "workload's phases for csi-operator, then for --peer, side by side; fleet: "
                 "--many DDs at once with a node plugin pod on every node (converge time, CPU "
                 "per pod change, memory, steady state, deletion)")
      ->check(CLI::IsMember({"standard", "scale", "peer", "fleet"}))
      ->capture_default_str();
  app.add_option("--peer", o.peerBinary,
                 "peer: the ceph-csi-operator binary measured after csi-operator (peer.hpp)")
      ->check(CLI::ExistingFile);
  app.add_option("--peer-source", o.peerSource,
                 "peer: its source checkout at the same tag (its CRDs, config/crd/bases)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--drivers-per-node", o.driversPerNode, "scale: drivers each node's CSINode lists")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--churn-pods", o.churnPods,
                 "fleet: once converged, a Deployment of this many foreign pods (no volume) "
                 "scaled up and down and their Warning Events written (churn.hpp); 0: none")
      ->check(CLI::Range(0, 20000))
      ->capture_default_str();
  app.add_option("--work-dir", o.workDir, "Where the operator log goes (default: a new /tmp dir)");
  CLI11_PARSE(app, argc, argv);
  if (o.scenario == "fleet" && app.count("--many") == 0) {
    o.many = kFleetDriverDeployments;
  }

  Report report;
  report.machine = describeMachine();
  report.loadStart = loadAverage();
  const auto start = Clock::now();
  const bool startCluster = o.kubeconfig.empty();
  std::filesystem::path kubeconfig = o.kubeconfig;
  // The scripts' progress on our stderr; no time limit that matters (5,000 nodes take ten
  // minutes to come up).
  const csiop::testsupport::RunOptions script{.timeout = std::chrono::hours(24),
                                              .inheritStderr = true};
  int code = 1;
  try {
    if (startCluster) {
      const std::vector<std::string> upArgs =
          o.scenario == "fleet" ? fleetClusterArgs() : std::vector<std::string>{};
      progress("test/cluster/up --name " + o.clusterName + " --nodes " + std::to_string(o.nodes) +
               (upArgs.empty() ? "" : " " + joined(upArgs)));
      kubeconfig =
          csiop::testsupport::clusterUp(CSIOP_SOURCE_DIR, o.clusterName, o.nodes, upArgs, script);
      report.cluster = "test/cluster '" + o.clusterName + "' (started by the benchmark)";
    } else {
      report.cluster = "kubeconfig " + o.kubeconfig;
    }
    code = runBench(o, kubeconfig, !startCluster || o.keepCluster, report);
  } catch (const std::exception& e) {
    report.problems.push_back(e.what());
    code = 1;
  }
  if (startCluster && !o.keepCluster) {
    progress("test/cluster/down --name " + o.clusterName);
    const auto down = csiop::testsupport::clusterDown(CSIOP_SOURCE_DIR, o.clusterName, script);
    if (!down.ok()) {
      std::cerr << "test/cluster/down --name " << o.clusterName << " failed (exit " << down.exitCode
                << ")\n";
    }
  }
  report.loadEnd = loadAverage();
  report.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  printReport(std::cout, report);
  return code;
}
