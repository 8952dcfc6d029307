#include "peer.hpp"

#include <algorithm>
#include <fstream>
#include <memory>
#include <set>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <csiop/api/json_access.hpp>
#include <csiop/kube/http.hpp>

#include "async.hpp"
#include "context.hpp"
#include "metrics.hpp"
#include "phase.hpp"
#include "setup.hpp"
#include "subjects.hpp"
#include "workload_tracker.hpp"

namespace csiop::bench {
namespace {

namespace asio = boost::asio;
namespace r = kube::resources;
using namespace std::chrono_literals;

kube::ResourceRef refFor(const std::string& kind) {
  for (const auto& ref : {r::customresourcedefinitions, r::namespaces, r::serviceaccounts}) {
    if (ref.kind == kind) {
      return ref;
    }
  }
  throw std::runtime_error("the peer scenario does not set up a " + kind);
}

double seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

bool established(const Json& crd) {
  const Json& conditions = api::member(api::member(crd, "status"), "conditions");
  return std::any_of(conditions.begin(), conditions.end(), [](const Json& c) {
    return api::stringField(c, "type") == "Established" && api::stringField(c, "status") == "True";
  });
}

// Whether one line of the log holds every text.
bool logHasLine(const std::string& log, const std::vector<std::string>& texts) {
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (std::all_of(texts.begin(), texts.end(),
                    [&](const std::string& t) { return line.find(t) != std::string::npos; })) {
      return true;
    }
  }
  return false;
}

// One subject's run: the operator process, its metrics and the workloads' tracker.
class SubjectRun {
public:
  SubjectRun(const Options& o, kube::Client& client, const Subject& s, const Ports& ports,
             const std::filesystem::path& log, SubjectFigures& f)
      : o_(o), client_(client), s_(s), f_(f), log_(log.string()), tracker_(client, s.resource),
        metrics_(client.executor(), localHttp(ports.metrics)),
        health_(client.executor(), localHttp(ports.health)) {
    f.title = s.title;
    f.command = joined(s.argv);
    f.log = log_;
    f.leavesCsiDriver = !s.deletesCsiDriver;
  }

  asio::awaitable<void> run(std::string single, std::vector<std::string> many);

private:
  std::chrono::milliseconds timeout() const { return std::chrono::seconds(o_.timeoutSeconds); }
  pid_t pid() const { return process_->pid(); }
  asio::awaitable<bool> wait(std::function<bool()> done, std::chrono::milliseconds limit,
                             std::chrono::milliseconds every = 10ms) {
    return waitUntil(*process_, log_, std::move(done), limit, every);
  }

  asio::awaitable<void> setUp();
  asio::awaitable<void> startOperator();
  asio::awaitable<bool> ready();
  asio::awaitable<void> singleRounds(const std::string& name);
  asio::awaitable<void> createMany(const std::vector<std::string>& names);
  asio::awaitable<void> deleteMany(const std::vector<std::string>& names);
  asio::awaitable<void> createOne(std::string name, Json cr, ExpectedWorkload expected,
                                  int& pending);
  asio::awaitable<void> deleteOne(std::string ns, std::string name, int& pending);
  asio::awaitable<void> removeLeftCsiDriver(const std::string& name);
  asio::awaitable<void> waitIdle();
  asio::awaitable<void> waitNoPods(const std::string& ns);
  asio::awaitable<void> cleanUp(const std::vector<std::string>& names);

  const Options& o_;
  kube::Client& client_;
  const Subject& s_;
  SubjectFigures& f_;
  std::string log_;
  WorkloadTracker tracker_;
  kube::HttpClient metrics_;
  kube::HttpClient health_;
  std::unique_ptr<testsupport::ChildProcess> process_;
};

asio::awaitable<void> SubjectRun::setUp() {
  for (const Json& object : s_.setup) {
    Json body = object;
    co_await client_.apply(refFor(api::stringField(object, "kind")), std::move(body));
  }
  const auto deadline = Clock::now() + 60s;
  for (const auto& name : s_.crds) {
    while (!established(co_await client_.get(r::customresourcedefinitions, "", name))) {
      if (Clock::now() > deadline) {
        throw std::runtime_error("CRD " + name + " not established after 60 s");
      }
      co_await pause(100ms);
    }
  }
}

asio::awaitable<bool> SubjectRun::ready() {
  if (!s_.readyLogLine.empty()) {
    co_return logHasLine(log_, s_.readyLogLine);
  }
  try {
    kube::HttpRequest request(kube::Method::Get, "/readyz");
    request.accept = "text/plain";
    request.timeout = 2s;
    co_return (co_await health_.send(std::move(request))).status == 200;
  } catch (const kube::TransportError&) {
    co_return false; // not listening yet
  }
}

asio::awaitable<void> SubjectRun::startOperator() {
  progress(s_.title + ": " + f_.command);
  process_ = std::make_unique<testsupport::ChildProcess>(s_.argv, log_, s_.env);
  const auto deadline = Clock::now() + 120s;
  while (!co_await ready()) {
    if (!process_->running()) {
      throw std::runtime_error(s_.title + " exited at start (code " +
                               std::to_string(process_->exitCode().value_or(-1)) + "); see " +
                               log_);
    }
    if (Clock::now() > deadline) {
      throw std::runtime_error(s_.title + " was not ready after 120 s; see " + log_);
    }
    co_await pause(100ms);
  }
  tracker_.start();
  const std::function<bool()> synced = [&] { return tracker_.synced(); };
  if (!co_await wait(synced, 60s)) {
    throw std::runtime_error("the benchmark's watches did not sync");
  }
}

asio::awaitable<void> SubjectRun::removeLeftCsiDriver(const std::string& name) {
  const std::string driverName = s_.expected(name).driverName;
  if (!s_.deletesCsiDriver) {
    co_await client_.removeIfExists(r::csidrivers, "", driverName);
  }
  const std::function<bool()> gone = [&] { return !tracker_.csiDriverExists(driverName); };
  if (!co_await wait(gone, timeout(), 50ms)) {
    f_.problems.push_back("CSIDriver " + driverName + " still there");
  }
}

asio::awaitable<void> SubjectRun::singleRounds(const std::string& name) {
  double cpu = 0;
  const PhaseMeter phase(pid());
  for (int i = 0; i < o_.singleIterations; ++i) {
    Json cr = s_.cr(name);
    const std::string ns = s_.crNamespace();
    ExpectedWorkload expected = s_.expected(name);
    const std::string podNamespace = expected.daemonSet.namespace_;
    const double cpuBefore = readCpuSeconds(pid());
    tracker_.expect(name, std::move(expected), Clock::now());
    const Json created = co_await client_.create(s_.resource, std::move(cr));
    tracker_.created(name, api::metadataField(created, "uid"), Clock::now());
    const std::function<bool()> readyNow = [&] { return tracker_.find(name)->readyAt.has_value(); };
    if (!co_await wait(readyNow, timeout())) {
      throw std::runtime_error(s_.title + ": " + name + " not Ready in time");
    }
    const Trial created1 = *tracker_.find(name);
    f_.singleChildrenMs.push_back(millisSince(created1.sentAt, *created1.childrenAt));
    f_.singleReadyMs.push_back(millisSince(created1.sentAt, *created1.readyAt));

    const auto deleteSent = Clock::now();
    co_await client_.remove(s_.resource, ns, name);
    const std::function<bool()> gone = [&] { return tracker_.find(name)->goneAt.has_value(); };
    if (!co_await wait(gone, timeout())) {
      throw std::runtime_error(s_.title + ": " + name + " not gone in time");
    }
    f_.singleDeleteMs.push_back(millisSince(deleteSent, *tracker_.find(name)->goneAt));
    cpu += readCpuSeconds(pid()) - cpuBefore;
    progress(s_.title + " round " + std::to_string(i + 1) + ": children " +
             std::to_string(static_cast<long>(f_.singleChildrenMs.back())) + " ms, Ready " +
             std::to_string(static_cast<long>(f_.singleReadyMs.back())) + " ms, gone " +
             std::to_string(static_cast<long>(f_.singleDeleteMs.back())) + " ms");
    // Not measured: what the peer leaves, and the pods the garbage collector still removes.
    co_await removeLeftCsiDriver(name);
    co_await waitNoPods(podNamespace);
  }
  f_.singleCpuSeconds = cpu;
  f_.phases.push_back(phase.finish(std::to_string(o_.singleIterations) + " single rounds"));
}

asio::awaitable<void> SubjectRun::waitNoPods(const std::string& ns) {
  kube::ListOptions options;
  options.limit = 1;
  const auto deadline = Clock::now() + timeout();
  while (!(co_await client_.list(r::pods, ns, options)).items.empty()) {
    if (Clock::now() > deadline) {
      f_.problems.push_back("pods still in namespace " + ns);
      co_return;
    }
    co_await pause(250ms);
  }
}

asio::awaitable<void> SubjectRun::createOne(std::string name, Json cr, ExpectedWorkload expected,
                                            int& pending) {
  try {
    tracker_.expect(name, std::move(expected), Clock::now());
    const Json created = co_await client_.create(s_.resource, std::move(cr));
    tracker_.created(name, api::metadataField(created, "uid"), Clock::now());
  } catch (const std::exception& e) {
    f_.problems.push_back("create " + name + ": " + e.what());
  }
  --pending;
}

asio::awaitable<void> SubjectRun::deleteOne(std::string ns, std::string name, int& pending) {
  try {
    co_await client_.remove(s_.resource, ns, name);
  } catch (const std::exception& e) {
    f_.problems.push_back("delete " + name + ": " + e.what());
  }
  --pending;
}

// No reconcile finished for 3 s (the work queue is not asked: the peer keeps retrying a
// deleted resource with growing delays), at most 120 s.
asio::awaitable<void> SubjectRun::waitIdle() {
  double last = (co_await scrape(metrics_)).sum(s_.reconcileMetric);
  auto changed = Clock::now();
  const auto deadline = changed + 120s;
  while (Clock::now() - changed < 3s && Clock::now() < deadline) {
    co_await pause(250ms);
    const double now = (co_await scrape(metrics_)).sum(s_.reconcileMetric);
    if (now != last) {
      changed = Clock::now();
      last = now;
    }
  }
}

asio::awaitable<void> SubjectRun::createMany(const std::vector<std::string>& names) {
  f_.many = static_cast<int>(names.size());
  // Built before the clock starts (csi-operator's expectation is rendered).
  std::vector<Json> crs;
  std::vector<ExpectedWorkload> expected;
  for (const auto& name : names) {
    crs.push_back(s_.cr(name));
    expected.push_back(s_.expected(name));
  }
  co_await warmConnections(client_, f_.many);
  const MetricsSnapshot before = co_await scrape(metrics_);
  const PhaseMeter phase(pid());
  const double cpuBefore = readCpuSeconds(pid());
  const auto start = Clock::now();
  int pending = f_.many;
  for (std::size_t i = 0; i < names.size(); ++i) {
    asio::co_spawn(client_.executor(),
                   createOne(names[i], std::move(crs[i]), std::move(expected[i]), pending),
                   asio::detached);
  }
  const auto count = [&](auto member) {
    int n = 0;
    for (const auto& name : names) {
      const Trial* t = tracker_.find(name);
      n += t != nullptr && (t->*member).has_value() ? 1 : 0;
    }
    return n;
  };
  const std::function<bool()> allReady = [&] {
    return pending == 0 && count(&Trial::readyAt) == f_.many;
  };
  const auto deadline = Clock::now() + timeout();
  bool converged = false;
  while (!converged && Clock::now() < deadline) {
    converged = co_await wait(allReady, 10s);
    progress(s_.title + ": " + std::to_string(f_.many) + " at once: children complete " +
             std::to_string(count(&Trial::childrenAt)) + ", workloads Ready " +
             std::to_string(count(&Trial::readyAt)));
  }
  if (!converged) {
    f_.problems.push_back(std::to_string(f_.many) + " at once: not all Ready after " +
                          std::to_string(o_.timeoutSeconds) + " s");
    co_return;
  }
  f_.manyCpuToReadySeconds = readCpuSeconds(pid()) - cpuBefore;
  Clock::time_point children = start;
  Clock::time_point ready = start;
  for (const auto& name : names) {
    children = std::max(children, *tracker_.find(name)->childrenAt);
    ready = std::max(ready, *tracker_.find(name)->readyAt);
  }
  f_.manyChildrenSeconds = seconds(start, children);
  f_.manyReadySeconds = seconds(start, ready);
  co_await waitIdle();
  const MetricsSnapshot after = co_await scrape(metrics_);
  f_.manyRequests = after.sum(s_.requestMetric) - before.sum(s_.requestMetric);
  f_.manyReconciles = after.sum(s_.reconcileMetric) - before.sum(s_.reconcileMetric);
  f_.convergedMemory = readMemory(pid());
  f_.phases.push_back(phase.finish(std::to_string(f_.many) + " created at once, to idle"));
}

asio::awaitable<void> SubjectRun::deleteMany(const std::vector<std::string>& names) {
  co_await warmConnections(client_, static_cast<int>(names.size()));
  const PhaseMeter phase(pid());
  const double cpuBefore = readCpuSeconds(pid());
  const auto start = Clock::now();
  int pending = static_cast<int>(names.size());
  for (const auto& name : names) {
    asio::co_spawn(client_.executor(), deleteOne(s_.crNamespace(), name, pending), asio::detached);
  }
  const std::function<bool()> allGone = [&] {
    return pending == 0 && std::all_of(names.begin(), names.end(), [&](const std::string& n) {
             return tracker_.find(n)->goneAt.has_value();
           });
  };
  if (!co_await wait(allGone, timeout(), 50ms)) {
    f_.problems.push_back(std::to_string(names.size()) + " deleted at once: not all gone after " +
                          std::to_string(o_.timeoutSeconds) + " s");
    co_return;
  }
  Clock::time_point last = start;
  for (const auto& name : names) {
    last = std::max(last, *tracker_.find(name)->goneAt);
  }
  f_.deleteAllSeconds = seconds(start, last);
  f_.deleteCpuSeconds = readCpuSeconds(pid()) - cpuBefore;
  f_.phases.push_back(phase.finish(std::to_string(names.size()) + " deleted at once"));
}

// Not measured: the CSIDrivers the peer leaves, the node registrations and the pods the
// garbage collector still removes, so the next subject starts on a quiet cluster.
asio::awaitable<void> SubjectRun::cleanUp(const std::vector<std::string>& names) {
  std::set<std::string> namespaces;
  for (const auto& name : names) {
    const ExpectedWorkload e = s_.expected(name);
    namespaces.insert(e.daemonSet.namespace_);
    if (tracker_.find(name) != nullptr && tracker_.find(name)->uid.size() > 0) {
      co_await client_.removeIfExists(s_.resource, s_.crNamespace(), name);
    }
    co_await client_.removeIfExists(r::csidrivers, "", e.driverName);
  }
  const std::vector<std::string> none;
  co_await registerDrivers(client_, none);
  for (const auto& ns : namespaces) {
    co_await waitNoPods(ns);
  }
}

asio::awaitable<void> SubjectRun::run(std::string single, std::vector<std::string> many) {
  co_await setUp();
  std::vector<std::string> drivers;
  for (const auto& name : many) {
    drivers.push_back(s_.expected(name).driverName);
  }
  drivers.push_back(s_.expected(single).driverName);
  co_await registerDrivers(client_, drivers);
  co_await startOperator();
  std::string failure;
  try {
    const PhaseMeter phase(pid());
    co_await pause(5s);
    f_.idleMemory = readMemory(pid());
    f_.phases.push_back(phase.finish("idle"));
    co_await singleRounds(single);
    co_await createMany(many);
    co_await deleteMany(many);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (!failure.empty()) {
    f_.problems.push_back("run aborted: " + failure);
  }
  progress(s_.title + ": cleaning up");
  std::vector<std::string> all = many;
  all.push_back(single);
  try {
    co_await cleanUp(all); // the operator still runs: csi-operator removes its finalizers
  } catch (const std::exception& e) {
    f_.problems.push_back(std::string("cleanup: ") + e.what());
  }
  tracker_.stop();
  const std::function<bool()> stopped = [&] { return tracker_.stopped(); };
  try {
    co_await wait(stopped, 10s);
  } catch (const std::exception&) {
    // the operator exited; the watches stop all the same
  }
  const int exit = process_->stop(30s);
  if (exit != 0) {
    f_.problems.push_back(s_.title + " exited with code " + std::to_string(exit) + " on SIGTERM");
  }
}

} // namespace

asio::awaitable<void> runPeer(const Options& o, kube::Client& client,
                              std::filesystem::path kubeconfig, std::filesystem::path workDir,
                              PeerReport& report) {
  if (o.peerBinary.empty() || o.peerSource.empty()) {
    throw std::runtime_error("--scenario peer needs --peer and --peer-source");
  }
  report.iterations = o.singleIterations;
  report.many = o.many;
  std::vector<std::string> many;
  for (int i = 0; i < o.many; ++i) {
    many.push_back("bench-" + std::to_string(i));
  }
  const auto names = [&](const Subject& s) {
    std::vector<std::string> out;
    for (const auto& base : many) {
      out.push_back(s.crName(base));
    }
    return out;
  };
  {
    const Ports ports = testsupport::freeOperatorPorts();
    const Subject ours = csiOperatorSubject(o.operatorBinary, kubeconfig, ports);
    SubjectRun run(o, client, ours, ports, workDir / "csi-operator.log", report.ours);
    co_await run.run(ours.crName("bench-single"), names(ours));
  }
  {
    const Ports ports = testsupport::freeOperatorPorts();
    const Subject peer = cephCsiOperatorSubject(o.peerBinary, o.peerSource, kubeconfig, ports);
    SubjectRun run(o, client, peer, ports, workDir / "peer.log", report.peer);
    co_await run.run(peer.crName("bench-single"), names(peer));
  }
}

} // namespace csiop::bench
