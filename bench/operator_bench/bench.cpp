#include "bench.hpp"

#include <stdlib.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <csiop/kube/client.hpp>
#include <csiop/kube/config.hpp>
#include <csiop/testsupport/operator_command.hpp>
#include <csiop/testsupport/process.hpp>

#include "context.hpp"
#include "control_plane_rates.hpp"
#include "fleet.hpp"
#include "peer.hpp"
#include "scale.hpp"
#include "scenarios.hpp"
#include "setup.hpp"
#include "tracker.hpp"

namespace csiop::bench {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

std::filesystem::path makeWorkDir(const Options& o) {
  if (!o.workDir.empty()) {
    std::filesystem::create_directories(o.workDir);
    return o.workDir;
  }
  std::string pattern = "/tmp/csiop-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + pattern + " failed");
  }
  return pattern;
}

struct Names {
  std::string single = "bench-single";
  std::vector<std::string> many;
  std::vector<std::string> all() const {
    std::vector<std::string> out = many;
    out.push_back(single);
    return out;
  }
  std::vector<std::string> drivers() const {
    std::vector<std::string> out;
    for (const auto& n : all()) {
      out.push_back(driverNameFor(n));
    }
    return out;
  }
};

asio::awaitable<int> body(const Options& o, std::filesystem::path kubeconfig, bool clusterStays,
                          Report& report) {
  const auto executor = co_await asio::this_coro::executor;
  kube::ClientOptions clientOptions;
  clientOptions.fieldManager = "csiop-bench";
  clientOptions.http.userAgent = "csiop-bench";
  // One pooled connection per DriverDeployment created at once (see warmConnections).
  clientOptions.http.maxIdleConnections = static_cast<std::size_t>(o.many) + 16;
  kube::Client client(executor, kube::loadKubeconfig(kubeconfig), std::move(clientOptions));

  const kube::VersionInfo version = co_await client.version();
  report.kubernetesVersion = version.gitVersion;
  Names names;
  for (int i = 0; i < o.many; ++i) {
    names.many.push_back("bench-" + std::to_string(i));
  }
  // Named, not built inside the co_await expressions (GCC 12, see client.hpp).
  const std::vector<std::string> allNames = names.all();
  const std::vector<std::string> allDrivers = names.drivers();
  const std::vector<std::string> noDrivers;
  if (o.scenario == "peer") {
    report.peer.emplace();
    report.nodes =
        static_cast<int>((co_await client.listAll(kube::resources::nodes, "")).items.size());
    co_await runPeer(o, client, kubeconfig, makeWorkDir(o), *report.peer);
    for (const SubjectFigures* f : {&report.peer->ours, &report.peer->peer}) {
      for (const auto& problem : f->problems) {
        report.problems.push_back(f->title + ": " + problem);
      }
    }
    co_return report.problems.empty() ? 0 : 1;
  }
  const bool scale = o.scenario == "scale";
  if (!scale) { // the scale scenario registers its own
    report.nodes = co_await registerDrivers(client, allDrivers);
    progress("registered " + std::to_string(allDrivers.size()) + " drivers in the CSINodes of " +
             std::to_string(report.nodes) + " nodes");
  }

  const std::filesystem::path workDir = makeWorkDir(o);
  const testsupport::OperatorPorts ports = testsupport::freeOperatorPorts();
  std::vector<std::string> argv =
      testsupport::operatorCommand(o.operatorBinary, "run", kubeconfig, ports);
  argv.insert(argv.end(), o.operatorArgs.begin(), o.operatorArgs.end());
  report.operatorCommand = joined(argv);
  report.operatorLog = (workDir / "operator.log").string();
  testsupport::ChildProcess operatorProcess(argv, workDir / "operator.log");
  kube::HttpClient health(executor, localHttp(ports.health));
  kube::HttpClient metrics(executor, localHttp(ports.metrics));
  Tracker tracker(client);
  Context ctx{o, client, tracker, operatorProcess, metrics, report.operatorLog};

  if (!co_await waitOperatorReady(ctx, health)) {
    throw std::runtime_error("the operator was not ready after 120 s; see " + report.operatorLog);
  }
  progress("operator ready (pid " + std::to_string(operatorProcess.pid()) + ")");
  tracker.start();

  std::string failure;
  try {
    const std::function<bool()> synced = [&] { return tracker.synced(); };
    if (!co_await waitUntil(ctx, synced, 60s)) {
      throw std::runtime_error("the benchmark's watches did not sync");
    }
    if (!co_await deleteBenchDriverDeployments(ctx) ||
        !co_await waitNamespacesNotTerminating(ctx, allNames)) {
      throw std::runtime_error("could not remove what an earlier run left");
    }
    CpuMeter idleCpu(operatorProcess.pid(), 1s);
    co_await pause(5s);
    report.idleCpu = idleCpu.finish();
    report.idleMemory = readMemory(operatorProcess.pid());
    progress("idle operator: VmRSS " + std::to_string(report.idleMemory->rssKb) + " kB");

    if (scale) {
      report.scale.emplace();
      co_await runScale(ctx, names.many, o.driversPerNode, argv, health, *report.scale);
      report.nodes = report.scale->nodes;
    } else if (o.scenario == "fleet") {
      co_await runFleet(ctx, names.many, report);
    } else {
      co_await runSingle(ctx, names.single, report);
      co_await runMany(ctx, names.many, report);
      co_await deleteMany(ctx, names.many, report);
    }
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (!failure.empty()) {
    report.problems.push_back("run aborted: " + failure);
  }
  if (report.fleet) {
    report.fleet->controlPlaneRates = controlPlaneRates(kubeconfig);
  }

  // Clean up: the operator removes its finalizers, so it must still run.
  progress("cleaning up");
  try {
    if (operatorProcess.running() && !co_await deleteBenchDriverDeployments(ctx)) {
      report.problems.push_back("cleanup: DriverDeployments left behind");
    }
    if (clusterStays) {
      co_await registerDrivers(client, noDrivers);
      co_await deleteNamespaces(ctx, allNames);
    }
  } catch (const std::exception& e) {
    report.problems.push_back(std::string("cleanup: ") + e.what());
  }
  tracker.stop();
  const std::function<bool()> stopped = [&] { return tracker.stopped(); };
  try {
    co_await waitUntil(ctx, stopped, 10s);
  } catch (const std::exception&) {
    // the operator exited; the watches stop all the same
  }
  report.watchEvents = tracker.events();
  const int exit = operatorProcess.stop(30s);
  if (exit != 0) {
    report.problems.push_back("the operator exited with code " + std::to_string(exit) +
                              " on SIGTERM");
  }
  co_return report.problems.empty() ? 0 : 1;
}

} // namespace

int runBench(const Options& options, const std::filesystem::path& kubeconfig, bool clusterStays,
             Report& report) {
  asio::io_context io;
  std::exception_ptr failure;
  int code = 1;
  asio::co_spawn(io, body(options, kubeconfig, clusterStays, report),
                 [&](std::exception_ptr e, int c) {
                   failure = e;
                   code = c;
                   io.stop();
                 });
  io.run();
  if (failure) {
    std::rethrow_exception(failure);
  }
  return code;
}

} // namespace csiop::bench
