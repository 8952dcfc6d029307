#include "scale.hpp"

#include <csignal>
#include <map>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <csiop/api/json_access.hpp>

#include "batch.hpp"
#include "scenarios.hpp"
#include "setup.hpp"
#include "workload.hpp"

namespace csiop::bench {
namespace {

namespace asio = boost::asio;
namespace r = kube::resources;
using namespace std::chrono_literals;

constexpr int kConcurrentWrites = 16;

// The benchmark's DriverDeployment, but its node plugin selects no node and its controller runs
// no replica: every object is rendered, applied and watched, no pod is created.
Json scaleDriverDeployment(const std::string& name) {
  Json dd = driverDeployment(name);
  dd["spec"]["node"]["nodeSelector"] = {{"csiop.dev/bench-no-such-node", "true"}};
  dd["spec"]["controller"]["replicas"] = 0;
  return dd;
}

// Node i lists drivers i*k .. i*k+k-1 (mod the number of drivers): every driver on about
// nodes*k/drivers nodes.
std::vector<std::string> driversOfNode(std::size_t node, int perNode,
                                       const std::vector<std::string>& drivers) {
  std::vector<std::string> out;
  for (int j = 0; j < perNode && !drivers.empty(); ++j) {
    out.push_back(drivers[(node * static_cast<std::size_t>(perNode) + static_cast<std::size_t>(j)) %
                          drivers.size()]);
  }
  return out;
}

// Runs work(i) for i in [0, n) with at most kConcurrentWrites at a time; the errors it throws
// are collected.
asio::awaitable<std::vector<std::string>>
forAll(Context& ctx, std::size_t n, std::function<asio::awaitable<void>(std::size_t)> work) {
  std::size_t next = 0;
  int running = 0;
  std::vector<std::string> errors;
  const auto worker = [&]() -> asio::awaitable<void> {
    while (next < n) {
      const std::size_t i = next++;
      try {
        co_await work(i);
      } catch (const std::exception& e) {
        errors.push_back(e.what());
      }
    }
    --running;
  };
  for (int w = 0; w < kConcurrentWrites; ++w) {
    ++running;
    asio::co_spawn(ctx.client.executor(), worker(), asio::detached);
  }
  const std::function<bool()> done = [&] { return running == 0; };
  co_await waitUntil(ctx, done, ctx.timeout());
  co_return errors;
}

asio::awaitable<void> createOne(Context& ctx, std::string name) {
  Json dd = scaleDriverDeployment(name);
  ctx.tracker.expect(name, expectedObjects(dd));
  const Json created = co_await ctx.client.create(r::driverdeployments, std::move(dd));
  ctx.tracker.created(name, api::metadataField(created, "uid"), Clock::now());
}

double histogramMeanMs(const MetricsSnapshot& before, const MetricsSnapshot& after,
                       const std::string& name) {
  const double sum = after.sum(name + "_sum") - before.sum(name + "_sum");
  const double count = after.sum(name + "_count") - before.sum(name + "_count");
  return count > 0 ? sum / count * 1000 : 0;
}

} // namespace

asio::awaitable<void> runScale(Context& ctx, std::vector<std::string> names, int driversPerNode,
                               std::vector<std::string> operatorArgv, kube::HttpClient& health,
                               ScaleReport& out) {
  out.driverDeployments = static_cast<int>(names.size());
  out.driversPerNode = driversPerNode;
  out.objectsPerDriverDeployment =
      names.empty() ? 0 : static_cast<int>(expectedObjects(scaleDriverDeployment(names[0])).size());
  std::vector<std::string> drivers;
  for (const auto& name : names) {
    drivers.push_back(driverNameFor(name));
  }

  // 1. Every node's CSINode lists its drivers, as the kubelet's registration would.
  const kube::ListResult nodes = co_await ctx.client.listAll(r::nodes, "");
  out.nodes = static_cast<int>(nodes.items.size());
  std::map<std::string, int> expectedRegistered;
  for (std::size_t i = 0; i < nodes.items.size(); ++i) {
    for (const auto& d : driversOfNode(i, driversPerNode, drivers)) {
      ++expectedRegistered[d];
    }
  }
  auto start = Clock::now();
  const std::function<asio::awaitable<void>(std::size_t)> registerNode =
      [&](std::size_t i) -> asio::awaitable<void> {
    co_await ctx.client.apply(
        r::csinodes,
        csiNodeRegistration(nodes.items[i], driversOfNode(i, driversPerNode, drivers)));
  };
  for (const auto& e : co_await forAll(ctx, nodes.items.size(), registerNode)) {
    throw std::runtime_error("registering drivers in CSINodes: " + e);
  }
  out.registerMs = millisSince(start, Clock::now());
  progress("CSINodes of " + std::to_string(out.nodes) + " nodes list " +
           std::to_string(driversPerNode) + " drivers each");

  // 2. Every DriverDeployment at once, until every child exists and the operator is idle.
  const MetricsSnapshot before = co_await scrape(ctx.metrics);
  CpuMeter convergeCpu(ctx.operatorProcess.pid(), 1s);
  start = Clock::now();
  const std::function<asio::awaitable<void>(std::size_t)> create =
      [&](std::size_t i) -> asio::awaitable<void> { co_await createOne(ctx, names[i]); };
  for (const auto& e : co_await forAll(ctx, names.size(), create)) {
    throw std::runtime_error("creating DriverDeployments: " + e);
  }
  out.createSpanMs = millisSince(start, Clock::now());
  progress(std::to_string(names.size()) + " DDs created");
  const std::function<bool()> allChildren = [&] {
    return lastOf(ctx.tracker, names, &Timing::childrenAt).has_value();
  };
  if (!co_await waitUntil(ctx, allChildren, ctx.timeout(), 100ms)) {
    throw std::runtime_error("not every child of every DD after " +
                             std::to_string(ctx.options.timeoutSeconds) + " s");
  }
  out.allChildrenMs = millisSince(start, *lastOf(ctx.tracker, names, &Timing::childrenAt));
  progress("every child of every DD exists; waiting until the operator is idle");
  const MetricsSnapshot converged = co_await waitOperatorIdle(ctx, 3s, ctx.timeout());
  out.idleMs = millisSince(start, Clock::now()) - 3000; // the quiet 3 s are not work
  out.converge = usageBetween(before, converged, millisSince(start, Clock::now()) / 1000.0);
  out.convergeCpu = convergeCpu.finish();
  out.convergedMemory = readMemory(ctx.operatorProcess.pid());

  // The status is truthful: registered = the CSINodes that list the driver.
  kube::ListOptions benchOnly;
  benchOnly.labelSelector = kBenchLabel;
  const kube::ListResult dds = co_await ctx.client.listAll(r::driverdeployments, "", benchOnly);
  for (const Json& dd : dds.items) {
    const Json& registered =
        api::member(api::member(api::member(dd, "status"), "nodes"), "registered");
    const std::string driver = api::stringField(api::member(dd, "spec"), "driverName");
    if (registered.is_number_integer() && registered.get<int>() == expectedRegistered[driver]) {
      ++out.truthfulStatuses;
    }
  }
  progress("converged; " + std::to_string(out.truthfulStatuses) + "/" +
           std::to_string(names.size()) + " statuses count the registering nodes right");

  // 3. CSINode updates on nodes spread over the cluster: 50 nodes each drop the last of their
  // drivers, 20 ms apart, then the same 50 add it back. Each update concerns the drivers its
  // node lists, and no two updates of a phase concern the same DriverDeployment (node i lists
  // drivers 4i..4i+3), so none is coalesced with another; the operator's CPU is read over both
  // phases with only two idle waits' metric scrapes in it.
  const int rounds = 50;
  const MetricsSnapshot updatesBefore = co_await scrape(ctx.metrics);
  CpuMeter updatesCpu(ctx.operatorProcess.pid());
  start = Clock::now();
  for (const bool full : {false, true}) {
    for (int round = 0; round < rounds && !nodes.items.empty(); ++round) {
      const std::size_t i = static_cast<std::size_t>(round) * nodes.items.size() / rounds;
      std::vector<std::string> now = driversOfNode(i, driversPerNode, drivers);
      if (!full && !now.empty()) {
        now.pop_back();
      }
      co_await ctx.client.apply(r::csinodes, csiNodeRegistration(nodes.items[i], now));
      ++out.csiNodeUpdates;
      co_await pause(20ms);
    }
    co_await waitOperatorIdle(ctx, 1s, 120s);
  }
  const MetricsSnapshot updatesAfter = co_await scrape(ctx.metrics);
  out.updates =
      usageBetween(updatesBefore, updatesAfter, millisSince(start, Clock::now()) / 1000.0);
  out.updatesCpu = updatesCpu.finish();
  out.reconcileMeanMs =
      histogramMeanMs(updatesBefore, updatesAfter, "csiop_reconcile_duration_seconds");
  progress(std::to_string(out.csiNodeUpdates) + " CSINode updates done");

  // 4. Steady state.
  const SteadyState steady = co_await measureSteady(ctx);
  out.steady = steady.usage;
  out.steadyCpu = steady.cpu;
  progress("steady state measured");

  // 5. Cold start: the operator stopped and started again relists everything and reconciles
  // every DriverDeployment, with nothing to write.
  ctx.operatorProcess.stop(30s);
  start = Clock::now();
  ctx.operatorProcess.restart(operatorArgv, ctx.operatorLog);
  CpuMeter restartCpu(ctx.operatorProcess.pid(), 1s);
  if (!co_await waitOperatorReady(ctx, health)) {
    throw std::runtime_error("the restarted operator was not ready");
  }
  out.restartReadyMs = millisSince(start, Clock::now());
  const double all = static_cast<double>(names.size());
  MetricsSnapshot restarted = co_await scrape(ctx.metrics);
  const auto deadline = Clock::now() + ctx.timeout();
  while (restarted.sum("csiop_reconcile_total") < all && Clock::now() < deadline) {
    co_await pause(100ms);
    restarted = co_await scrape(ctx.metrics);
  }
  restarted = co_await waitOperatorIdle(ctx, 3s, ctx.timeout());
  out.restartIdleMs = millisSince(start, Clock::now()) - 3000;
  out.restart =
      usageBetween(MetricsSnapshot{}, restarted, millisSince(start, Clock::now()) / 1000.0);
  out.restartCpu = restartCpu.finish();
  out.restartMemory = readMemory(ctx.operatorProcess.pid());
  progress("cold start measured");
}

} // namespace csiop::bench
