#include "fleet.hpp"

#include <algorithm>

#include "batch.hpp"
#include "report.hpp"
#include "scenarios.hpp"
#include "setup.hpp"
#include "workload.hpp"

namespace csiop::bench {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// What a phase is measured by from its start: the operator's metrics and CPU time (to a point
// within the phase and to its end), the pod changes, the machine's load.
struct Window {
  Window(pid_t pid, const PodWatch& pods, const MetricsSnapshot& metricsBefore)
      : metrics(metricsBefore), changes(pods.changes()), phase(pid), toPoint(pid, 1s), toEnd(pid) {}

  MetricsSnapshot metrics;
  PodChanges changes;
  PhaseMeter phase;
  CpuMeter toPoint; // sampled every 1 s for the peak
  CpuMeter toEnd;
};

// One run of the scenario: the operator's context, the benchmark's pods watch and the report.
class FleetRun {
public:
  FleetRun(Context& ctx, PodWatch& pods, std::vector<std::string> names, Report& report)
      : ctx_(ctx), pods_(pods), names_(std::move(names)), report_(report), out_(*report.fleet) {}

  // Creates every DriverDeployment at once and waits until every node plugin pod is Ready,
  // then until the operator is idle. False if it did not converge in time.
  asio::awaitable<bool> converge();
  asio::awaitable<void> steadyState();
  // Deletes every DriverDeployment at once, waits until each is gone, then until their node
  // plugin pods are.
  asio::awaitable<void> removeAll();

private:
  pid_t pid() const { return ctx_.operatorProcess.pid(); }
  // Where the run is, for the progress lines: while creating, and while deleting.
  std::string creating() const;
  std::string deleting() const;
  void problem(std::string what) { report_.problems.push_back(std::move(what)); }
  // The operator's memory, and its caches' sizes from /metrics.
  asio::awaitable<void> readMemoryAndCaches();
  // Waits for done(), saying where the run is every 10 s; false after the timeout.
  asio::awaitable<bool> waitReporting(const std::function<bool()>& done,
                                      std::string (FleetRun::*where)() const);
  // The latest of the pods watch's time stamps `at` over the DriverDeployments' namespaces.
  std::optional<Clock::time_point>
  lastPodsAt(std::optional<Clock::time_point> (PodWatch::*at)(const std::string&) const) const;

  Context& ctx_;
  PodWatch& pods_;
  std::vector<std::string> names_; // each DriverDeployment's name, also its namespace's
  Report& report_;
  FleetReport& out_;
};

std::string FleetRun::creating() const {
  int children = 0;
  int ddsReady = 0;
  int podsReady = 0;
  for (const auto& name : names_) {
    const Timing* t = ctx_.tracker.find(name);
    children += t != nullptr && t->childrenAt ? 1 : 0;
    ddsReady += t != nullptr && t->readyAt ? 1 : 0;
    podsReady += pods_.ready(name);
  }
  const std::string n = std::to_string(names_.size());
  return "children complete " + std::to_string(children) + "/" + n + ", node plugin pods Ready " +
         std::to_string(podsReady) + "/" + std::to_string(out_.nodePluginPods) + ", DDs Ready " +
         std::to_string(ddsReady) + "/" + n + ", pod changes " +
         std::to_string(static_cast<long>(pods_.changes().total()));
}

std::string FleetRun::deleting() const {
  int gone = 0;
  int podsLeft = 0;
  for (const auto& name : names_) {
    gone += ctx_.tracker.gone(name) ? 1 : 0;
    podsLeft += pods_.present(name);
  }
  return "DDs gone " + std::to_string(gone) + "/" + std::to_string(names_.size()) +
         ", node plugin pods left " + std::to_string(podsLeft) + ", pod changes " +
         std::to_string(static_cast<long>(pods_.changes().total()));
}

asio::awaitable<bool> FleetRun::waitReporting(const std::function<bool()>& done,
                                              std::string (FleetRun::*where)() const) {
  const auto deadline = Clock::now() + ctx_.timeout();
  bool ok = false;
  while (!ok && Clock::now() < deadline) {
    const auto slice = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::min<Clock::duration>(10s, deadline - Clock::now()));
    ok = co_await waitUntil(ctx_, done, slice);
    progress((this->*where)());
  }
  co_return ok;
}

std::optional<Clock::time_point>
FleetRun::lastPodsAt(std::optional<Clock::time_point> (PodWatch::*at)(const std::string&)
                         const) const {
  std::optional<Clock::time_point> last;
  for (const auto& name : names_) {
    const auto t = (pods_.*at)(name);
    if (!t) {
      return std::nullopt;
    }
    last = std::max(last.value_or(*t), *t);
  }
  return last;
}

asio::awaitable<bool> FleetRun::converge() {
  for (const auto& name : names_) {
    pods_.expectReady(name, out_.nodes);
  }
  co_await warmConnections(ctx_.client, static_cast<int>(names_.size()));
  const MetricsSnapshot before = co_await scrape(ctx_.metrics);
  Window w(pid(), pods_, before);
  const Batch created = co_await createAtOnce(ctx_, names_);
  const Clock::time_point start = created.sentAt;
  for (const auto& e : created.errors) {
    problem(e);
  }
  names_ = created.succeeded();
  if (names_.empty()) {
    throw std::runtime_error("no DriverDeployment could be created");
  }
  out_.createSpanMs = created.spanMs();
  progress(std::to_string(names_.size()) + " DDs created; waiting for every node plugin pod");

  const std::function<bool()> podsReady = [&] {
    return lastPodsAt(&PodWatch::readyAt).has_value();
  };
  const bool converged = co_await waitReporting(podsReady, &FleetRun::creating);
  out_.convergeCpu = w.toPoint.finish();
  out_.convergeChanges = pods_.changes() - w.changes;
  out_.phases.push_back(w.phase.finish("creates -> node plugin pods Ready"));
  if (const auto last = lastOf(ctx_.tracker, names_, &Timing::childrenAt)) {
    out_.allChildrenMs = millisSince(start, *last);
  }
  if (!converged) {
    problem("not every node plugin pod Ready after " + std::to_string(ctx_.options.timeoutSeconds) +
            " s: " + creating());
    out_.memoryAtTimeout = true;
    co_await readMemoryAndCaches();
    co_return false;
  }
  out_.podsReadyMs = millisSince(start, *lastPodsAt(&PodWatch::readyAt));

  const PhaseMeter toIdle(pid());
  const std::function<bool()> ddsReady = [&] {
    return lastOf(ctx_.tracker, names_, &Timing::readyAt).has_value();
  };
  if (co_await waitUntil(ctx_, ddsReady, ctx_.timeout())) {
    out_.ddsReadyMs = millisSince(start, *lastOf(ctx_.tracker, names_, &Timing::readyAt));
  } else {
    problem("the pods are Ready, but not every DD's status after " +
            std::to_string(ctx_.options.timeoutSeconds) + " s");
  }
  progress("converged; waiting until the operator is idle (no reconcile for 3 s)");
  const MetricsSnapshot after = co_await waitOperatorIdle(ctx_, 3s, ctx_.timeout());
  out_.idleMs = millisSince(start, Clock::now()) - 3000; // the quiet 3 s are not work
  out_.idleUsage = usageBetween(w.metrics, after, millisSince(start, Clock::now()) / 1000.0);
  out_.idleCpu = w.toEnd.finish();
  out_.idleChanges = pods_.changes() - w.changes;
  out_.phases.push_back(toIdle.finish("pods Ready -> operator idle"));
  co_await readMemoryAndCaches();
  co_return true;
}

asio::awaitable<void> FleetRun::readMemoryAndCaches() {
  out_.convergedMemory = readMemory(pid());
  CacheSizes caches = co_await readCacheSizes(ctx_);
  out_.cacheObjects = std::move(caches.objects);
  out_.cacheHeapBytes = std::move(caches.heapBytes);
}

asio::awaitable<void> FleetRun::steadyState() {
  const PodChanges before = pods_.changes();
  const PhaseMeter phase(pid());
  const SteadyState steady = co_await measureSteady(ctx_);
  out_.steady = steady.usage;
  out_.steadyCpu = steady.cpu;
  out_.steadyChanges = pods_.changes() - before;
  out_.phases.push_back(phase.finish("steady state"));
}

asio::awaitable<void> FleetRun::removeAll() {
  for (const auto& name : names_) {
    pods_.expectGone(name);
  }
  const MetricsSnapshot before = co_await scrape(ctx_.metrics);
  Window w(pid(), pods_, before);
  const Batch deleted = co_await deleteAtOnce(ctx_, names_);
  for (const auto& e : deleted.errors) {
    problem(e);
  }
  const std::function<bool()> gone = [&] { return allGone(ctx_.tracker, names_); };
  const bool allDeleted = co_await waitReporting(gone, &FleetRun::deleting);
  out_.deleteCpu = w.toPoint.finish();
  const MetricsSnapshot after = co_await scrape(ctx_.metrics);
  out_.deleteUsage =
      usageBetween(w.metrics, after, millisSince(deleted.sentAt, Clock::now()) / 1000.0);
  out_.phases.push_back(w.phase.finish("deletes -> every DD gone"));
  if (!allDeleted) {
    problem("not every DD gone after " + std::to_string(ctx_.options.timeoutSeconds) + " s");
    co_return;
  }
  Clock::time_point last = deleted.sentAt;
  for (const auto& name : names_) {
    last = std::max(last, ctx_.tracker.deletedAt(name).value_or(last));
  }
  out_.deleteGoneMs = millisSince(deleted.sentAt, last);
  progress("every DD gone; waiting for their node plugin pods to be");

  const PhaseMeter toPodsGone(pid());
  const std::function<bool()> podsGone = [&] { return lastPodsAt(&PodWatch::goneAt).has_value(); };
  const bool podsAllGone = co_await waitReporting(podsGone, &FleetRun::deleting);
  if (!podsAllGone) {
    problem("node plugin pods left after " + std::to_string(ctx_.options.timeoutSeconds) + " s");
    co_return;
  }
  out_.podsGoneMs = millisSince(deleted.sentAt, *lastPodsAt(&PodWatch::goneAt));
  out_.podsGoneCpu = w.toEnd.finish();
  out_.podsGoneChanges = pods_.changes() - w.changes;
  out_.phases.push_back(toPodsGone.finish("DDs gone -> node plugin pods gone"));
}

} // namespace

std::vector<std::string> fleetClusterArgs() {
  // The controller manager's defaults (20 requests/s, bursts of 30) make 25,000 pods take 21
  // minutes to be created alone, the scheduler's (50/100) 8 minutes to be bound: the cluster,
  // not the operator, would be measured.
  // On this machine's two cores, an API server writing tens of thousands of pods renews the
  // leases of thousands of kwok nodes late: past the controller manager's grace period (50 s)
  // a node is marked NotReady and every pod on it Ready=False, then Ready again, over and over
  // (seen on 5,000 nodes: 2,295 NotReady after 14 minutes). A grace period of 10 minutes keeps
  // the nodes Ready while the pods roll out: pod changes are the pods' own, not the flapping.
  return {"--controller-manager-arg=--kube-api-qps=500",
          "--controller-manager-arg=--kube-api-burst=1000",
          "--controller-manager-arg=--node-monitor-grace-period=10m",
          "--scheduler-arg=--kube-api-qps=500", "--scheduler-arg=--kube-api-burst=1000"};
}

asio::awaitable<void> runFleet(Context& ctx, std::vector<std::string> names, Report& report) {
  FleetReport& out = report.fleet.emplace();
  out.driverDeployments = static_cast<int>(names.size());
  out.nodes = report.nodes;
  out.nodePluginPods = out.nodes * out.driverDeployments;
  out.objectsPerDriverDeployment =
      names.empty() ? 0 : static_cast<int>(expectedObjects(driverDeployment(names[0])).size());

  PodWatch pods(ctx.client);
  pods.start();
  std::exception_ptr failure;
  try {
    const std::function<bool()> synced = [&] { return pods.synced(); };
    if (!co_await waitUntil(ctx, synced, 120s)) {
      throw std::runtime_error("the benchmark's pods watch did not sync");
    }
    FleetRun run(ctx, pods, std::move(names), report);
    const bool converged = co_await run.converge();
    if (converged) {
      co_await run.steadyState();
      if (ctx.options.churnPods > 0) {
        co_await runChurn(ctx, pods, ctx.options.churnPods, out.churn.emplace());
      }
    }
    co_await run.removeAll();
  } catch (...) {
    failure = std::current_exception();
  }
  out.podWatchRelists = pods.relists();
  pods.stop();
  // Its loops use `pods`: it must not go before they have returned (a list of every pod of a
  // large cluster may be under way).
  while (!pods.stopped()) {
    co_await pause(10ms);
  }
  if (failure) {
    std::rethrow_exception(failure);
  }
}

} // namespace csiop::bench
