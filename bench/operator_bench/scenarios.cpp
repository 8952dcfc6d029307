#include "scenarios.hpp"

#include <cmath>

#include <csiop/api/json_access.hpp>

#include "batch.hpp"
#include "setup.hpp"
#include "workload.hpp"

namespace csiop::bench {
namespace {

namespace asio = boost::asio;
namespace r = kube::resources;
using namespace std::chrono_literals;

std::string ms(double value) {
  return std::to_string(static_cast<long>(value)) + " ms";
}

// Every expected kind must be one the tracker watches, or "created" could never be seen.
void checkWatched(const std::vector<ObjectKey>& expected) {
  for (const auto& key : expected) {
    bool watched = false;
    for (const auto& ref : Tracker::childKinds()) {
      watched |= ref.kind == key.kind;
    }
    if (!watched) {
      throw std::runtime_error("render produces a " + key.kind + ", which the benchmark does " +
                               "not watch; add it to Tracker::childKinds()");
    }
  }
}

} // namespace

// Waits until operator metrics show no reconcile for `quiet` and an empty work queue (at most
// `limit`); returns the last scrape.
asio::awaitable<MetricsSnapshot> waitOperatorIdle(Context& ctx, std::chrono::milliseconds quiet,
                                                  std::chrono::milliseconds limit) {
  MetricsSnapshot last = co_await scrape(ctx.metrics);
  auto changed = Clock::now();
  const auto deadline = changed + limit;
  while (Clock::now() - changed < quiet && Clock::now() < deadline) {
    co_await pause(250ms);
    MetricsSnapshot now = co_await scrape(ctx.metrics);
    if (now.sum("csiop_reconcile_total") != last.sum("csiop_reconcile_total") ||
        now.sum("csiop_workqueue_depth") > 0) {
      changed = Clock::now();
    }
    last = std::move(now);
  }
  co_return last;
}

asio::awaitable<CacheSizes> readCacheSizes(Context& ctx) {
  co_await pause(11s);
  const MetricsSnapshot now = co_await scrape(ctx.metrics);
  co_return CacheSizes{now.byLabel("csiop_cache_objects", "resource"),
                       now.byLabel("csiop_cache_heap_bytes", "resource")};
}

asio::awaitable<SteadyState> measureSteady(Context& ctx) {
  progress("steady state: " + std::to_string(ctx.options.steadySeconds) + " s");
  const MetricsSnapshot start = co_await scrape(ctx.metrics);
  const auto from = Clock::now();
  CpuMeter cpu(ctx.operatorProcess.pid(), 1s);
  co_await pause(std::chrono::seconds(ctx.options.steadySeconds));
  SteadyState out;
  out.cpu = cpu.finish();
  const MetricsSnapshot end = co_await scrape(ctx.metrics);
  out.usage = usageBetween(start, end, millisSince(from, Clock::now()) / 1000.0);
  co_return out;
}

asio::awaitable<void> runSingle(Context& ctx, std::string name, Report& report) {
  report.singleIterations = ctx.options.singleIterations;
  for (int i = 0; i < ctx.options.singleIterations; ++i) {
    Json dd = driverDeployment(name);
    std::vector<ObjectKey> expected = expectedObjects(dd);
    checkWatched(expected);
    report.objectsPerDriverDeployment = expected;
    ctx.tracker.expect(name, std::move(expected));
    CpuMeter cpu(ctx.operatorProcess.pid());
    const Json created = co_await ctx.client.create(r::driverdeployments, std::move(dd));
    ctx.tracker.created(name, api::metadataField(created, "uid"), Clock::now());

    const std::function<bool()> createdAndReady = [&] {
      const Timing& t = ctx.tracker.timing(name);
      return t.childrenAt && t.readyAt;
    };
    const bool ok = co_await waitUntil(ctx, createdAndReady, ctx.timeout());
    const std::optional<CpuUsage> used = cpu.finish();
    if (ok && used) {
      report.singleCpu.push_back(*used);
    }
    const Timing t = ctx.tracker.timing(name);
    std::string line = "1 DD round " + std::to_string(i + 1) + "/" +
                       std::to_string(ctx.options.singleIterations) + ": children ";
    if (t.childrenAt) {
      report.single.childrenMs.push_back(millisSince(t.createdAt, *t.childrenAt));
      line += ms(report.single.childrenMs.back());
    } else {
      line += "-";
    }
    line += ", Ready ";
    if (t.readyAt) {
      report.single.readyMs.push_back(millisSince(t.createdAt, *t.readyAt));
      line += ms(report.single.readyMs.back());
    } else {
      line += "-";
    }
    if (used) {
      line += ", operator CPU " + ms(std::round(used->cpuSeconds * 1000)); // whole ticks
    }
    if (!ok) {
      report.problems.push_back(line + " (timed out)");
    }

    co_await ctx.client.remove(r::driverdeployments, "", name);
    const auto deleteReturned = Clock::now();
    const std::function<bool()> gone = [&] { return ctx.tracker.gone(name); };
    if (co_await waitUntil(ctx, gone, ctx.timeout())) {
      const auto at = ctx.tracker.deletedAt(name).value_or(Clock::now());
      report.single.deleteMs.push_back(std::max(0.0, millisSince(deleteReturned, at)));
      line += ", delete -> gone " + ms(report.single.deleteMs.back());
    } else {
      report.problems.push_back("1 DD round " + std::to_string(i + 1) + ": not gone after " +
                                std::to_string(ctx.options.timeoutSeconds) + " s");
      throw std::runtime_error("DriverDeployment " + name + " was not deleted");
    }
    if (!co_await waitPodsGone(ctx, name)) {
      report.problems.push_back("1 DD round " + std::to_string(i + 1) +
                                ": pods still in namespace " + name);
    }
    progress(line);
  }
}

asio::awaitable<void> runMany(Context& ctx, std::vector<std::string> names, Report& report) {
  report.many = static_cast<int>(names.size());
  co_await warmConnections(ctx.client, report.many);
  const MetricsSnapshot before = co_await scrape(ctx.metrics);
  CpuMeter cpu(ctx.operatorProcess.pid(), 1s);
  const Batch created = co_await createAtOnce(ctx, names);
  const auto start = created.sentAt;
  for (const auto& e : created.errors) {
    report.problems.push_back(e);
  }
  // Only what was created can be waited for.
  names = created.succeeded();
  report.manyCreateSpanMs = created.spanMs();
  progress(std::to_string(names.size()) + " DDs created in " + ms(*report.manyCreateSpanMs));
  const int n = static_cast<int>(names.size());

  const auto countDone = [&](bool ready) {
    int done = 0;
    for (const auto& name : names) {
      const Timing& t = ctx.tracker.timing(name);
      done += (ready ? t.readyAt.has_value() : t.childrenAt.has_value()) ? 1 : 0;
    }
    return done;
  };
  const std::function<bool()> allReady = [&] {
    return countDone(false) == n && countDone(true) == n;
  };
  const auto deadline = Clock::now() + ctx.timeout();
  bool converged = false;
  while (!converged && Clock::now() < deadline) {
    converged = co_await waitUntil(ctx, allReady, 10s);
    progress(std::to_string(n) + " DDs: children complete " + std::to_string(countDone(false)) +
             "/" + std::to_string(n) + ", Ready " + std::to_string(countDone(true)) + "/" +
             std::to_string(n));
  }
  Clock::time_point lastChildren = start;
  Clock::time_point lastReady = start;
  for (const auto& name : names) {
    const Timing& t = ctx.tracker.timing(name);
    if (t.childrenAt) {
      report.manySeries.childrenMs.push_back(millisSince(t.createdAt, *t.childrenAt));
      lastChildren = std::max(lastChildren, *t.childrenAt);
    }
    if (t.readyAt) {
      report.manySeries.readyMs.push_back(millisSince(t.createdAt, *t.readyAt));
      lastReady = std::max(lastReady, *t.readyAt);
    }
  }
  if (countDone(false) == n) {
    report.manyAllChildrenMs = millisSince(start, lastChildren);
  }
  if (!converged) {
    report.problems.push_back(std::to_string(n) + " DDs: not all Ready after " +
                              std::to_string(ctx.options.timeoutSeconds) + " s");
    report.manyCpu = cpu.finish();
    co_return;
  }
  report.manyAllReadyMs = millisSince(start, lastReady);

  progress("waiting until the operator is idle (no reconcile for 3 s)");
  const MetricsSnapshot after = co_await waitOperatorIdle(ctx, 3s, 120s);
  report.manyRun = usageBetween(before, after, millisSince(start, Clock::now()) / 1000.0);
  report.manyCpu = cpu.finish();

  const SteadyState steady = co_await measureSteady(ctx);
  report.steady = steady.usage;
  report.steadyCpu = steady.cpu;
  report.loadedMemory = readMemory(ctx.operatorProcess.pid());
  CacheSizes caches = co_await readCacheSizes(ctx);
  report.loadedCacheObjects = std::move(caches.objects);
  report.loadedCacheHeapBytes = std::move(caches.heapBytes);
}

asio::awaitable<void> deleteMany(Context& ctx, std::vector<std::string> names, Report& report) {
  const int n = static_cast<int>(names.size());
  const MetricsSnapshot before = co_await scrape(ctx.metrics);
  CpuMeter cpu(ctx.operatorProcess.pid(), 1s);
  const Batch deleted = co_await deleteAtOnce(ctx, names);
  for (const auto& e : deleted.errors) {
    report.problems.push_back(e);
  }
  const std::function<bool()> gone = [&] { return allGone(ctx.tracker, names); };
  const bool allDeleted = co_await waitUntil(ctx, gone, ctx.timeout(), 50ms);
  report.deleteManyCpu = cpu.finish();
  // The requests and reconciles the deletion cost, up to the moment the last one was gone.
  const MetricsSnapshot after = co_await scrape(ctx.metrics);
  report.deleteRun =
      usageBetween(before, after, millisSince(deleted.sentAt, Clock::now()) / 1000.0);
  Clock::time_point last = deleted.sentAt;
  for (const auto& [name, at] : deleted.returnedAt) {
    if (const auto deletedAt = ctx.tracker.deletedAt(name); deletedAt && ctx.tracker.gone(name)) {
      report.manySeries.deleteMs.push_back(std::max(0.0, millisSince(at, *deletedAt)));
      last = std::max(last, *deletedAt);
    }
  }
  if (allDeleted) {
    report.manyDeleteAllMs = millisSince(deleted.sentAt, last);
  } else {
    report.problems.push_back(std::to_string(n) + " DDs: not all gone after " +
                              std::to_string(ctx.options.timeoutSeconds) + " s");
  }
  progress(std::to_string(report.manySeries.deleteMs.size()) + " DDs deleted");
}

} // namespace csiop::bench
