// startup_taint_bench: how fast spec.startupTaint releases a node once the driver is registered
// there. Fake (kwok) nodes are created with the taint (test/e2e/fake_nodes.hpp; their plugin
// registration is a stand-in, registration_stand_in.hpp), a node-only DriverDeployment with
// spec.startupTaint is applied, and two watches (`kubectl get --watch`, one of the nodes, one of
// the CSINodes) time-stamp each change as it arrives: for every node, when its CSINode first
// lists the driver and when the taint is first gone. Prints the latency from registration to
// removal (p50, p99, max), from the apply to the last removal, and the operator's CPU, requests
// and node writes over it.
//
//   build/bench/startup_taint_bench [--nodes 50]
//
// Uses its own cluster, bench-taint (CSIOP_E2E_KEEP_CLUSTER=1 keeps it), with the operator as a
// process beside it (`csi-operator run`).
#include <CLI/CLI.hpp>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_nodes.hpp"
#include "harness.hpp"
#include "operator_process.hpp"
#include "own_cluster.hpp"

namespace csiop::bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using e2e::kubectl;

const std::string kCluster = "bench-taint";
const std::string kKey = "example.com/storage-not-ready";
const std::string kDriver = "held.csi.example.com";

// `kubectl get <resource> --watch` printing one line per change ("<name> <keys...>"), each line
// time-stamped as read.
class LineWatch {
public:
  LineWatch(const std::vector<std::string>& resource, const std::string& jsonpath) {
    std::vector<std::string> args = {e2e::cluster().kubectl.string(), "--kubeconfig",
                                     e2e::cluster().kubeconfig.string(), "get"};
    args.insert(args.end(), resource.begin(), resource.end());
    args.push_back("--watch");
    args.push_back("-o");
    args.push_back("jsonpath=" + jsonpath);
    int fds[2];
    if (::pipe(fds) != 0)
      throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      std::vector<char*> argv;
      for (std::string& a : args)
        argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    thread_ = std::thread([this, fd = fds[0]] {
      FILE* in = ::fdopen(fd, "r");
      char line[4096];
      while (std::fgets(line, sizeof line, in) != nullptr) {
        const auto at = Clock::now();
        std::lock_guard lock(mutex_);
        lines_.emplace_back(at, line);
      }
      std::fclose(in);
    });
  }
  ~LineWatch() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    thread_.join();
  }
  LineWatch(const LineWatch&) = delete;
  LineWatch& operator=(const LineWatch&) = delete;

  std::vector<std::pair<Clock::time_point, std::string>> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }

private:
  pid_t pid_ = -1;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<std::pair<Clock::time_point, std::string>> lines_;
};

std::string manifest() {
  return "apiVersion: csiop.dev/v1alpha1\nkind: DriverDeployment\nmetadata: {name: held}\n"
         "spec:\n  driverName: " +
         kDriver +
         "\n  namespace: csi-held\n  csiDriver: {attachRequired: false, volumeLifecycleModes: "
         "[Ephemeral]}\n  driver: {image: example.com/held-driver:v1}\n  startupTaint: {key: " +
         kKey + "}\n";
}

double percentile(std::vector<double> values, double p) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(i, values.size() - 1)];
}

int runBench(int count) {
  if (!e2e::startOwnCluster(kCluster, 1, {}, {}))
    return 1;
  int code = 0;
  try {
    e2e::applyCrds();
    e2e::OperatorProcess op("startup-taint-bench-operator.log");
    if (!op.waitReady(60s))
      throw std::runtime_error("the operator is not ready: " + op.log());
    e2e::FakeNodes nodes("taint", count, {kKey});
    // When each change arrived, and its resourceVersion: etcd's revision, one order across
    // resources, which says which came first where two watch streams deliver a few ms apart.
    std::map<std::string, Clock::time_point> registered;
    std::map<std::string, Clock::time_point> released;
    std::map<std::string, long long> registeredAt;
    std::map<std::string, long long> releasedAt;
    const LineWatch nodeWatch(
        {"nodes", "-l", "csiop.dev/test-pool=fake"},
        R"({.metadata.name}{" "}{.metadata.resourceVersion}{" "}{.spec.taints[*].key}{"\n"})");
    const LineWatch csiNodeWatch(
        {"csinodes"},
        R"({.metadata.name}{" "}{.metadata.resourceVersion}{" "}{.spec.drivers[*].name}{"\n"})");
    std::this_thread::sleep_for(2s); // both watches listed
    const double cpuBefore = op.cpuSeconds();
    const double requestsBefore = op.metricSum("csiop_api_requests_total");
    const double writesBefore = op.mutatingRequests();
    const double nodeWritesBefore = op.writesTo("nodes");
    const auto applied = Clock::now();
    if (!kubectl({"apply", "-f", "-"}, manifest()).ok())
      throw std::runtime_error("apply failed");
    const auto deadline = applied + 300s;
    while (Clock::now() < deadline) {
      for (const auto& [at, line] : csiNodeWatch.lines()) {
        std::istringstream in(line);
        std::string name, driver;
        long long revision = 0;
        in >> name >> revision;
        while (in >> driver) {
          if (driver == kDriver && !registered.contains(name)) {
            registered[name] = at;
            registeredAt[name] = revision;
          }
        }
      }
      for (const auto& [at, line] : nodeWatch.lines()) {
        std::istringstream in(line);
        std::string name, key;
        long long revision = 0;
        in >> name >> revision;
        bool tainted = false;
        while (in >> key)
          tainted = tainted || key == kKey;
        if (!tainted && !released.contains(name) && at > applied) {
          released[name] = at;
          releasedAt[name] = revision;
        }
      }
      if (released.size() >= static_cast<std::size_t>(count))
        break;
      std::this_thread::sleep_for(200ms);
    }
    const double cpu = op.cpuSeconds() - cpuBefore;
    const double requests = op.metricSum("csiop_api_requests_total") - requestsBefore;
    const double writes = op.mutatingRequests() - writesBefore;
    const double nodeWrites = op.writesTo("nodes") - nodeWritesBefore;
    std::vector<double> latency;
    double last = 0;
    int early = 0;
    for (const auto& [name, at] : released) {
      const auto reg = registered.find(name);
      if (reg == registered.end() || releasedAt[name] < registeredAt[name]) {
        ++early;
        continue;
      }
      // Arrival times; a release read before its registration's event is 0 ms.
      latency.push_back(
          std::max(0.0, std::chrono::duration<double, std::milli>(at - reg->second).count()));
      last = std::max(last, std::chrono::duration<double>(at - applied).count());
    }
    std::printf("\nstartup_taint_bench: %d fake nodes created with the taint %s\n\n", count,
                kKey.c_str());
    std::printf("| measurement | value |\n|---|---|\n");
    std::printf("| nodes released / registered | %zu / %zu |\n", released.size(),
                registered.size());
    std::printf("| released before the driver was registered | %d |\n", early);
    std::printf("| registration -> taint removed, p50 / p99 / max (ms) | %.0f / %.0f / %.0f |\n",
                percentile(latency, 0.5), percentile(latency, 0.99), percentile(latency, 1.0));
    std::printf("| apply -> last node released (s) | %.1f |\n", last);
    std::printf("| operator CPU (s), API requests, writes (of them to nodes) | %.2f, %.0f, %.0f "
                "(%.0f) |\n",
                cpu, requests, writes, nodeWrites);
    if (released.size() < static_cast<std::size_t>(count) || early > 0)
      code = 1;
    kubectl({"delete", "dd", "held", "--wait=true", "--timeout=120s"});
  } catch (const std::exception& e) {
    std::cerr << "startup_taint_bench: " << e.what() << "\n";
    code = 1;
  }
  e2e::stopOwnCluster(kCluster);
  return code;
}

} // namespace
} // namespace csiop::bench

int main(int argc, char** argv) {
  CLI::App app{"spec.startupTaint: registration -> taint removed, on fake nodes"};
  int nodes = 50;
  app.add_option("--nodes", nodes, "Fake nodes created with the taint")->check(CLI::Range(1, 2000));
  CLI11_PARSE(app, argc, argv);
  return csiop::bench::runBench(nodes);
}
