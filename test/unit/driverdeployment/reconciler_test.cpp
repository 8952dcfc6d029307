// Reconciler: the real caches, client and reconciler against an in-memory API server
// (fake_api.hpp), its changes queueing the DriverDeployments they concern as the manager wires
// them, the echo of a status write included (dropped). The tests order the events as a cluster
// can: a watch that lags behind a write (FakeApi::hold), a DaemonSet controller that catches up
// between two reconciles. They wait for conditions (settle: every watch has delivered every
// write), never for time to pass; time that must pass passes on a ManualClock.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <boost/asio/co_spawn.hpp>

#include <csiop/api/annotations.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/api/load.hpp>
#include <csiop/driverdeployment/cache_start.hpp>
#include <csiop/driverdeployment/compare.hpp>
#include <csiop/driverdeployment/reconciler.hpp>
#include <csiop/driverdeployment/smoke_volume.hpp>
#include <csiop/render/render.hpp>
#include <csiop/runtime/workers.hpp>
#include <csiop/testsupport/manual_clock.hpp>

#include "../runtime/test_util.hpp"
#include "fake_api.hpp"

namespace csiop::driverdeployment {
namespace {

namespace asio = boost::asio;
namespace r = kube::resources;
using namespace std::chrono_literals;
using testing::FakeApi;

constexpr const char* kDriver = "demo.csi.example.com";

std::string fixedNow() {
  return "2024-05-01T10:00:00Z";
}

Json driverDeployment() {
  return {{"metadata", {{"name", "demo"}, {"generation", 1}, {"finalizers", {kFinalizer}}}},
          {"spec",
           {{"driverName", kDriver},
            {"driver", {{"image", "example.com/driver:v1"}}},
            {"node", {{"updateStrategy", {{"type", "WhenVolumesUnused"}}}}}}}};
}

// A node that registers the driver.
Json csiNode(const std::string& node) {
  return {{"metadata", {{"name", node}}}, {"spec", {{"drivers", {{{"name", kDriver}}}}}}};
}

class ReconcilerTest : public ::testing::Test {
protected:
  ReconcilerTest()
      : api_(io_), client_(io_.get_executor(), kube::Config{.server = api_.url()}),
        caches_(client_, r::csidrivers), events_(client_, fixedNow),
        reconciler_(client_, caches_, events_, [this] { return passNow(); }) {
    // As manager.cpp: a change queues the DriverDeployments it concerns, but the echo of a
    // DriverDeployment's status write.
    for (Informer* informer : caches_.objectCaches()) {
      informer->onChange([this, informer](const Json* old, const Json* updated) {
        if (informer == &caches_.driverDeployments && old != nullptr && updated != nullptr &&
            onlyStatusDiffers(*old, *updated)) {
          return;
        }
        for (const Json* o : {old, updated}) {
          if (o != nullptr) {
            for (const auto& name : reconciler_.ownersOf(*o)) {
              queued_.insert(name);
            }
          }
        }
      });
    }
    caches_.pods.onChange(
        [this](const CachedPod* old, const CachedPod* updated) { queueOwners(old, updated); });
    for (auto& child : caches_.children) {
      child->onChange([this](const CachedChild* old, const CachedChild* updated) {
        queueOwners(old, updated);
      });
    }
    caches_.csiNodes.onChange([this](const CachedCSINode* old, const CachedCSINode* updated) {
      reconciler_.noteRegistration(old, updated);
      queueOwners(old, updated);
    });
    caches_.sharedRoles.onChange([this](const Json* old, const Json* updated) {
      for (const auto& name : reconciler_.sharedChanged(old, updated)) {
        queued_.insert(name);
      }
    });
  }

  template <class Entry> void queueOwners(const Entry* old, const Entry* updated) {
    for (const Entry* o : {old, updated}) {
      if (o != nullptr) {
        for (const auto& name : reconciler_.ownersOf(*o)) {
          queued_.insert(name);
        }
      }
    }
  }

  // As the manager starts them: a group once the groups before it have synced.
  void start() {
    for (const auto& group : cacheStartGroups(caches_)) {
      for (runtime::RunnableCache* cache : group) {
        asio::co_spawn(io_, cache->run(), [this](std::exception_ptr) { ++informersEnded_; });
      }
      ASSERT_TRUE(runUntil([&] { return groupSynced(group); }));
    }
  }

  void TearDown() override {
    for (runtime::OnDemandCache* cache : caches_.onDemand()) {
      cache->stop();
    }
    EXPECT_TRUE(runUntil([&] {
      return !caches_.podsOnDemand.running() && !caches_.podsWithVolumesOnDemand.running();
    }));
    for (runtime::RunnableCache* cache : caches_.all()) {
      cache->stop();
    }
    EXPECT_TRUE(runUntil([&] { return informersEnded_ == caches_.all().size(); }));
  }

  bool runUntil(const std::function<bool()>& done, std::chrono::milliseconds limit = 10s) {
    return runtime::test::runUntil(io_, done, limit);
  }

  // Runs until the API server has answered every request and every cache shows every write it
  // made, but what hold() keeps back: the cluster at rest, as a reconcile would read it. A
  // condition, never a wait for time to pass; failing after 10 s.
  void settle() {
    ASSERT_TRUE(runUntil([&] { return api_.unanswered() == 0 && lagging().empty(); }))
        << "not settled: " << api_.unanswered() << " requests unanswered; caches behind "
        << api_.resourceVersion() << ":" << lagging();
  }

  // The caches whose watch has not delivered the API server's last write (each watch's last
  // bookmark is that write's resourceVersion), but those held back: " resource@version" each.
  std::string lagging() {
    std::string behind;
    for (const runtime::RunnableCache* cache : caches_.all()) {
      const bool waited = cache->served() && !api_.held(cache->cachedResource());
      if (waited && cache->lastSyncResourceVersion() != api_.resourceVersion()) {
        behind += " " + cache->cachedResource().resource + "@" + cache->lastSyncResourceVersion();
      }
    }
    return behind;
  }

  // Waits until `cache` shows the API server's current version of the object.
  static const Json& headOf(const Json& object) { return object; }
  static const Json& headOf(const CachedChild& child) { return child.head; }

  template <class Entry>
  void awaitCached(runtime::BasicInformer<Entry>& cache, const kube::ResourceRef& ref,
                   const std::string& ns, const std::string& name) {
    const Json* stored = api_.find(ref, ns, name);
    ASSERT_NE(stored, nullptr) << name;
    const std::string rv = (*stored)["metadata"]["resourceVersion"];
    ASSERT_TRUE(runUntil([&] {
      const Entry* cached = cache.get(ns, name);
      return cached != nullptr && headOf(*cached)["metadata"].value("resourceVersion", "") == rv;
    })) << name
        << " did not reach the cache at " << rv;
  }

  ReconcileResult reconcile(const std::string& name) {
    queued_.erase(name);
    return runtime::test::runCoroutine(io_, reconciler_.reconcile(name), 20s);
  }

  // Reconciles what is queued, as the workers do, each pass on settled caches, until nothing
  // is. A requeue is a timer on the test's clock, which moves on to it at once.
  void drain() {
    for (int i = 0; i < 40; ++i) {
      settle();
      if (HasFatalFailure() || queued_.empty()) {
        return;
      }
      const std::string name = *queued_.begin();
      const ReconcileResult result = reconcile(name);
      if (result.outcome != ReconcileResult::Outcome::Done) {
        requeue_->expireAt(clock_.now() + result.after, [this, name] { queued_.insert(name); });
        clock_.advance(result.after);
      }
    }
    ADD_FAILURE() << "the queue did not drain";
  }

  // The DriverDeployment's Ready condition on the API server: "status reason: message".
  std::string ready() const {
    const Json* dd = api_.find(r::driverdeployments, "", "demo");
    if (dd == nullptr) {
      return "<no DriverDeployment>";
    }
    for (const Json& c : dd->value("status", Json::object()).value("conditions", Json::array())) {
      if (c.value("type", "") == "Ready") {
        return c.value("status", "") + " " + c.value("reason", "") + ": " + c.value("message", "");
      }
    }
    return "<no Ready condition>";
  }

  // A condition of the DriverDeployment on the API server: "status reason: message".
  std::string condition(const std::string& type) const {
    const Json* dd = api_.find(r::driverdeployments, "", "demo");
    if (dd == nullptr) {
      return "<no DriverDeployment>";
    }
    for (const Json& c : dd->value("status", Json::object()).value("conditions", Json::array())) {
      if (c.value("type", "") == type) {
        return c.value("status", "") + " " + c.value("reason", "") + ": " + c.value("message", "");
      }
    }
    return "<no " + type + " condition>";
  }

  // The reasons of the Events the operator recorded, in order.
  std::vector<std::string> eventReasons() const {
    std::vector<std::string> out;
    for (const auto& request : api_.requests()) {
      if (request.method == "POST" && request.target.find("/events") != std::string::npos) {
        out.push_back(Json::parse(request.body).value("reason", ""));
      }
    }
    return out;
  }
  bool recorded(const std::string& reason) const {
    const auto reasons = eventReasons();
    return std::find(reasons.begin(), reasons.end(), reason) != reasons.end();
  }

  // Changes the stored DriverDeployment as kubectl would (a new generation), and waits until the
  // cache shows it (the change has queued it).
  void editSpec(const std::function<void(Json& spec)>& edit) {
    Json dd = *api_.find(r::driverdeployments, "", "demo");
    edit(dd["spec"]);
    dd["metadata"]["generation"] = dd["metadata"].value("generation", 1) + 1;
    api_.put(r::driverdeployments, std::move(dd));
    awaitCached(caches_.driverDeployments, r::driverdeployments, "", "demo");
  }

  // A new DriverDeployment, reconciled until nothing is queued.
  void create(Json dd) {
    api_.put(r::driverdeployments, std::move(dd));
    start();
    queued_.insert("demo");
    drain();
  }

  // The node DaemonSet's status as its controller writes it, on a copy of the stored object.
  void setNodeDaemonSet(std::int64_t generation, std::int64_t observed, int ready, int updated) {
    const Json* stored = api_.findNamed(r::daemonsets, "demo-node");
    ASSERT_NE(stored, nullptr);
    Json ds = *stored;
    ds["metadata"]["generation"] = generation;
    ds["status"] = {{"observedGeneration", observed}, {"desiredNumberScheduled", 1},
                    {"currentNumberScheduled", 1},    {"numberReady", ready},
                    {"numberAvailable", ready},       {"updatedNumberScheduled", updated}};
    api_.put(r::daemonsets, std::move(ds));
    awaitCached(*caches_.child("DaemonSet"), r::daemonsets, dsNamespace(), "demo-node");
  }

  // The owner label's key as a query parameter.
  static std::string ownerSelector() {
    std::string selector = api::kOwnerLabel;
    selector.replace(selector.find('/'), 1, "%2F");
    return selector;
  }

  std::string dsNamespace() const {
    const Json* ds = api_.findNamed(r::daemonsets, "demo-node");
    return ds == nullptr ? "" : (*ds)["metadata"].value("namespace", "");
  }

  // The first reconciles of a DriverDeployment (driverDeployment() unless given) on one node
  // whose plugin is up to date and ready: Ready, and the cache shows that status.
  void converge(Json dd = driverDeployment()) {
    api_.put(r::driverdeployments, std::move(dd));
    api_.put(r::csinodes, csiNode("node-1"));
    start();
    queued_.insert("demo");
    drain();
    setNodeDaemonSet(1, 1, 1, 1);
    drain();
    ASSERT_EQ(ready(), "True Ready: driver registered on 1/1 nodes");
    awaitCached(caches_.driverDeployments, r::driverdeployments, "", "demo");
    awaitCached(*caches_.child("DaemonSet"), r::daemonsets, dsNamespace(), "demo-node");
  }

  // The passes' wall clock: fixedNow(), moved on as the test's clock moves on to a requeue.
  std::string passNow() const {
    const auto since = std::chrono::duration_cast<std::chrono::seconds>(clock_.now() - clockStart_);
    if (since == 0s) {
      return fixedNow();
    }
    return api::formatRfc3339(api::parseRfc3339OrEpoch(fixedNow()) + since);
  }

  asio::io_context io_;
  testsupport::ManualClock clock_{io_};
  const runtime::Clock::TimePoint clockStart_ = clock_.now();
  std::unique_ptr<runtime::Timer> requeue_ = clock_.makeTimer(io_.get_executor());
  FakeApi api_;
  kube::Client client_;
  Caches caches_;
  EventRecorder events_;
  Reconciler reconciler_;
  std::set<std::string> queued_;
  std::size_t informersEnded_ = 0;
};

// The failure of the real-node e2e suite: a status written from a DaemonSet whose
// observedGeneration lagged, then the DaemonSet caught up before the cache showed that write.
// The next reconcile computed the status the cache still held (the one before), wrote nothing,
// and the echo of the write it missed is dropped: "node plugin 1/1 ready, 1/1 updated" for good.
TEST_F(ReconcilerTest, AStatusEqualToTheCachedOneIsWrittenWhenTheCacheLagsBehindTheLastWrite) {
  converge();
  // From here the DriverDeployment's watch lags behind the writes to it.
  api_.hold(r::driverdeployments);
  // The DaemonSet's spec changes; its controller has not observed that yet.
  setNodeDaemonSet(2, 1, 1, 1);
  drain();
  ASSERT_EQ(ready(), "False NodePluginRollingOut: node plugin 1/1 ready, 1/1 updated");
  // Its controller catches up: the only change is status.observedGeneration.
  setNodeDaemonSet(2, 2, 1, 1);
  awaitCached(*caches_.child("DaemonSet"), r::daemonsets, dsNamespace(), "demo-node");
  ASSERT_EQ(queued_, std::set<std::string>{"demo"});
  const ReconcileResult caughtUp = reconcile("demo"); // the cache still shows Ready
  api_.release(r::driverdeployments);
  awaitCached(caches_.driverDeployments, r::driverdeployments, "", "demo");
  if (caughtUp.outcome != ReconcileResult::Outcome::Done) {
    queued_.insert("demo"); // the worker's requeue
  }
  drain();
  EXPECT_EQ(ready(), "True Ready: driver registered on 1/1 nodes");
}

// Once the cache shows the last write, an unchanged status costs no write.
TEST_F(ReconcilerTest, AnUnchangedStatusIsNotWrittenAgainOnceTheCacheShowsIt) {
  converge();
  const int writes = api_.count("PUT", "/driverdeployments/demo/status");
  queued_.insert("demo");
  drain();
  EXPECT_EQ(api_.count("PUT", "/driverdeployments/demo/status"), writes);
  EXPECT_EQ(ready(), "True Ready: driver registered on 1/1 nodes");
}

// A reconcile that applies a new node plugin spec reads the DaemonSet from the cache, which may
// not show that apply yet: the old DaemonSet, whose status observed the old generation. That is
// no rolled-out plugin: the DriverDeployment is not Ready at its new generation before the
// DaemonSet controller has seen the new spec.
TEST_F(ReconcilerTest, ANodePluginAppliedInTheReconcileIsNotReadyBeforeTheCacheShowsIt) {
  converge();
  api_.hold(r::daemonsets); // the DaemonSet's watch lags behind the apply
  Json dd = *api_.find(r::driverdeployments, "", "demo"); // a new image, as kubectl patch
  dd["spec"]["driver"]["image"] = "example.com/driver:v2";
  dd["metadata"]["generation"] = 2;
  api_.put(r::driverdeployments, std::move(dd));
  drain();
  const Json* ds = api_.findNamed(r::daemonsets, "demo-node");
  ASSERT_NE(ds, nullptr);
  ASSERT_EQ((*ds)["metadata"]["generation"], 2) << "the reconcile applied the new image";
  EXPECT_EQ(ready(), "False NodePluginRollingOut: node plugin 1/1 ready, 1/1 updated");
  // The watch delivers the apply (still rolling out), then the DaemonSet controller catches up.
  api_.release(r::daemonsets);
  drain();
  EXPECT_EQ(ready(), "False NodePluginRollingOut: node plugin 1/1 ready, 1/1 updated");
  setNodeDaemonSet(2, 2, 1, 1);
  drain();
  EXPECT_EQ(ready(), "True Ready: driver registered on 1/1 nodes");
}

// The named steps, one behaviour each: what a pass does for a driver name someone else holds,
// an immutable CSIDriver field, a child the spec dropped, a deletion that volumes block, a
// pause, an invalid spec, a child marked unmanaged, and a status write that meets a change.

// A CSIDriver of that name that someone else made: nothing is applied, the conflict is said.
TEST_F(ReconcilerTest, ADriverNameHeldBySomeoneElseIsAConflictAndNothingIsApplied) {
  api_.put(r::csidrivers,
           {{"metadata", {{"name", kDriver}}}, {"spec", {{"attachRequired", true}}}});
  create(driverDeployment());
  EXPECT_EQ(condition("DriverNameConflict").rfind("True ", 0), 0u)
      << condition("DriverNameConflict");
  EXPECT_EQ(ready().rfind("False ", 0), 0u) << ready();
  EXPECT_EQ(api_.count("POST", "/daemonsets"), 0);
  EXPECT_EQ(api_.count("PATCH", "/csidrivers/"), 0) << "someone else's CSIDriver is not touched";
  EXPECT_TRUE(recorded("DriverNameConflict"));
}

// The resource a request's target names ("serviceaccounts", "daemonsets", "namespaces/csi-demo"
// for a read of one namespace).
std::string resourceOf(const std::string& target) {
  const std::string path = target.substr(0, target.find('?'));
  const auto last = path.rfind('/');
  const std::string tail = path.substr(last + 1);
  const auto before = path.rfind('/', last - 1);
  const std::string parent = path.substr(before + 1, last - before - 1);
  return parent == "namespaces" ? parent + "/" + tail : tail;
}

// A new driver in an existing namespace: its ServiceAccounts and its own roles go with the driver
// name's claim (and the namespace's Pod Security level is read then), every other child one
// round trip later, all at once: the workloads with their bindings and StorageClasses. The API
// server answers the claim and the DaemonSet's create late, to tell the round trips apart.
TEST_F(ReconcilerTest, ANewDriversWorkloadsAndBindingsGoOneRoundTripAfterItsClaimAndIdentities) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kLate = 400ms;
  const std::string ns = api::driverNamespaceOf("demo", "");
  api_.put(r::namespaces, {{"metadata", {{"name", ns}}}});
  struct Arrival {
    std::string method;
    std::string resource;
    Clock::time_point at;
  };
  std::vector<Arrival> arrivals;
  std::optional<Clock::time_point> claimAnswered;
  std::optional<Clock::time_point> daemonSetAnswered;
  api_.delay([&](const testing::Request& request) {
    const Arrival arrival{request.method, resourceOf(request.target), Clock::now()};
    arrivals.push_back(arrival);
    if (request.method != "POST") {
      return 0ms;
    }
    if (arrival.resource == "csidrivers" && !claimAnswered) {
      claimAnswered = arrival.at + kLate;
      return std::chrono::milliseconds(kLate);
    }
    if (arrival.resource == "daemonsets" && !daemonSetAnswered) {
      daemonSetAnswered = arrival.at + kLate;
      return std::chrono::milliseconds(kLate);
    }
    return 0ms;
  });
  Json dd = driverDeployment();
  dd["spec"]["controller"] = {{"replicas", 2}, {"attacher", {{"enabled", true}}}};
  dd["spec"]["storageClasses"] = {{{"name", "demo-sc"}}};
  create(std::move(dd));
  ASSERT_TRUE(claimAnswered && daemonSetAnswered);
  std::map<std::string, int> withClaim;
  std::map<std::string, int> afterClaim;
  for (const Arrival& a : arrivals) {
    if (a.method == "POST" && a.resource != "events") {
      (a.at < *claimAnswered ? withClaim : afterClaim)[a.resource]++;
    }
  }
  for (const char* identity : {"serviceaccounts", "roles"}) { // the leader election's Role
    EXPECT_GT(withClaim[identity], 0) << identity << " goes with the claim";
    EXPECT_EQ(afterClaim[identity], 0) << identity;
  }
  EXPECT_EQ(afterClaim["clusterroles"], 0);
  for (const char* rest :
       {"daemonsets", "deployments", "rolebindings", "clusterrolebindings", "storageclasses"}) {
    EXPECT_EQ(withClaim[rest], 0) << rest << " waits for the claim";
    EXPECT_GT(afterClaim[rest], 0) << rest;
  }
  const auto namespaceRead = std::find_if(arrivals.begin(), arrivals.end(), [&](const Arrival& a) {
    return a.method == "GET" && a.resource == "namespaces/" + ns;
  });
  ASSERT_NE(namespaceRead, arrivals.end()) << "its Pod Security level is read";
  EXPECT_LT(namespaceRead->at, *claimAnswered) << "with the claim";
  for (const Arrival& a : arrivals) {
    if (a.method == "POST" &&
        (a.resource == "deployments" || a.resource == "rolebindings" ||
         a.resource == "clusterrolebindings" || a.resource == "storageclasses")) {
      EXPECT_LT(a.at, *daemonSetAnswered) << a.resource << " goes with the DaemonSet";
    }
  }
  EXPECT_EQ(condition("DriverNameConflict").rfind("True", 0), std::string::npos);
}

// Someone else creates the CSIDriver between the cache's read and the claim: the claim meets
// AlreadyExists, what went with it (the ServiceAccounts and roles) is deleted again (exactly
// those: uid preconditions), no workload is created, and once the cache shows the CSIDriver the
// conflict is reported.
TEST_F(ReconcilerTest, AClaimLostToARaceDeletesWhatWentWithItAndCreatesNoWorkload) {
  api_.put(r::namespaces, {{"metadata", {{"name", api::driverNamespaceOf("demo", "")}}}});
  start();
  api_.hold(r::csidrivers); // the cache has not seen it yet
  api_.put(r::csidrivers,
           {{"metadata", {{"name", kDriver}}}, {"spec", {{"attachRequired", true}}}});
  api_.put(r::driverdeployments, driverDeployment());
  awaitCached(caches_.driverDeployments, r::driverdeployments, "", "demo");
  reconcile("demo");
  settle();
  EXPECT_EQ(api_.count("POST", "/csidrivers"), 1);
  EXPECT_EQ(api_.count("POST", "/daemonsets"), 0);
  int created = 0;
  for (const char* identity : {"/serviceaccounts", "/roles", "/clusterroles"}) {
    created += api_.count("POST", identity);
  }
  EXPECT_GT(created, 0);
  int deleted = 0;
  for (const auto& request : api_.requests()) {
    if (request.method == "DELETE") {
      ++deleted;
      const Json options = Json::parse(request.body);
      EXPECT_TRUE(options.value("preconditions", Json::object()).contains("uid")) << request.target;
    }
  }
  EXPECT_EQ(deleted, created);
  for (const kube::ResourceRef& ref : {r::serviceaccounts, r::roles, r::clusterroles}) {
    for (const Json& object : api_.all(ref)) {
      EXPECT_FALSE(object["metadata"].value("labels", Json::object()).contains(api::kOwnerLabel))
          << object["metadata"]["name"] << " is left";
    }
  }
  api_.release(r::csidrivers);
  drain();
  EXPECT_EQ(condition("DriverNameConflict").rfind("True ", 0), 0u)
      << condition("DriverNameConflict");
  EXPECT_EQ(api_.count("POST", "/daemonsets"), 0);
}

// attachRequired cannot change on a CSIDriver: the operator deletes its CSIDriver and makes a new
// one, and says so.
TEST_F(ReconcilerTest, AChangedImmutableCSIDriverFieldRecreatesTheCSIDriver) {
  converge();
  const Json before = *api_.find(r::csidrivers, "", kDriver);
  const bool attach = before["spec"].value("attachRequired", true);
  editSpec([&](Json& spec) { spec["csiDriver"] = {{"attachRequired", !attach}}; });
  drain();
  const Json* after = api_.find(r::csidrivers, "", kDriver);
  ASSERT_NE(after, nullptr);
  EXPECT_NE((*after)["metadata"]["uid"], before["metadata"]["uid"]);
  EXPECT_EQ((*after)["spec"]["attachRequired"], !attach);
  EXPECT_EQ(condition("CSIDriverRecreated").rfind("True ", 0), 0u)
      << condition("CSIDriverRecreated");
  EXPECT_TRUE(recorded("CSIDriverRecreated"));
}

// A field removed from the spec leaves the child: the live DaemonSet still holds every field of
// the new desired one, yet the field the last apply set must go (a mount no longer read-only).
TEST_F(ReconcilerTest, AFieldRemovedFromTheSpecIsRemovedFromTheChild) {
  converge();
  const auto mountOf = [this] {
    const Json& ds = *api_.findNamed(r::daemonsets, "demo-node");
    for (const Json& m : ds["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]) {
      if (m.value("name", "") == "state") {
        return m;
      }
    }
    return Json();
  };
  editSpec([](Json& spec) {
    spec["driver"]["volumes"] = {{{"name", "state"}, {"emptyDir", Json::object()}}};
    spec["driver"]["volumeMounts"] = {
        {{"name", "state"}, {"mountPath", "/state"}, {"readOnly", true}}};
  });
  drain();
  ASSERT_EQ(mountOf().value("readOnly", false), true) << mountOf().dump();
  editSpec([](Json& spec) { spec["driver"]["volumeMounts"][0].erase("readOnly"); });
  drain();
  EXPECT_FALSE(mountOf().contains("readOnly")) << mountOf().dump();
}

// spec.operatorUpdates: the operator that wrote the workloads is version 1.0; another (2.0)
// renders them with another registrar image though the spec did not change.
class OperatorUpdateTest : public ReconcilerTest {
protected:
  static std::string registrarOf(const Json& ds) {
    for (const Json& c : ds["spec"]["template"]["spec"]["containers"]) {
      if (c.value("name", "") == "node-driver-registrar") {
        return c.value("image", "");
      }
    }
    return "";
  }
  std::string registrar() const { return registrarOf(*api_.findNamed(r::daemonsets, "demo-node")); }

  // The DaemonSet as operator 1.0 left it: its stamp, with an older registrar image.
  void writtenByAnEarlierOperator(Json dd = driverDeployment()) {
    reconciler_.setOperatorVersion("1.0");
    api_.put(r::driverdeployments, std::move(dd));
    api_.put(r::csinodes, csiNode("node-1"));
    start();
    queued_.insert("demo");
    drain();
    Json ds = *api_.findNamed(r::daemonsets, "demo-node");
    ASSERT_EQ(ds["metadata"]["annotations"].value("csiop.dev/rendered-by", ""), "1.0");
    rendered = registrarOf(ds);
    for (Json& c : ds["spec"]["template"]["spec"]["containers"]) {
      if (c.value("name", "") == "node-driver-registrar") {
        c["image"] = "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.16.0";
      }
    }
    api_.put(r::daemonsets, std::move(ds));
    awaitCached(*caches_.child("DaemonSet"), r::daemonsets, dsNamespace(), "demo-node");
    drain(); // operator 1.0 puts its own edit back: a drift
    ASSERT_EQ(registrar(), rendered);
    // Operator 1.0's rendering, as left: the older image.
    ds = *api_.findNamed(r::daemonsets, "demo-node");
    for (Json& c : ds["spec"]["template"]["spec"]["containers"]) {
      if (c.value("name", "") == "node-driver-registrar") {
        c["image"] = "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.16.0";
      }
    }
    api_.put(r::daemonsets, std::move(ds));
    awaitCached(*caches_.child("DaemonSet"), r::daemonsets, dsNamespace(), "demo-node");
    reconciler_.setOperatorVersion("2.0"); // the operator upgrade
    queued_.insert("demo");
  }

  void annotate(const std::string& key, const std::string& value) {
    Json dd = *api_.find(r::driverdeployments, "", "demo");
    dd["metadata"]["annotations"][key] = value;
    api_.put(r::driverdeployments, std::move(dd));
    awaitCached(caches_.driverDeployments, r::driverdeployments, "", "demo");
  }

  Json workloadStatus() const {
    const Json* dd = api_.find(r::driverdeployments, "", "demo");
    return (*dd)["status"].value("workloads", Json::array()).at(0);
  }

  int dsWrites() const {
    return api_.count("PATCH", "/daemonsets") + api_.count("PUT", "/daemonsets") +
           api_.count("POST", "/daemonsets");
  }

  std::string rendered;
};

TEST_F(OperatorUpdateTest, ManualHoldsTheOperatorsChangeUntilItsVersionIsApproved) {
  writtenByAnEarlierOperator();
  const int writes = dsWrites();
  drain();
  EXPECT_EQ(dsWrites(), writes) << "the held DaemonSet was written";
  EXPECT_EQ(registrar(), "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.16.0");
  const std::string held = condition("OperatorUpdateHeld");
  EXPECT_EQ(held.rfind("True Held: operator 2.0 would change what the spec did not: DaemonSet ", 0),
            0u)
      << held;
  EXPECT_NE(held.find("(rendered by 1.0): container node-driver-registrar: image "
                      "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.16.0 -> " +
                      rendered),
            std::string::npos)
      << held;
  EXPECT_NE(held.find("annotate the DriverDeployment csiop.dev/approve-operator-update=2.0"),
            std::string::npos)
      << held;
  EXPECT_TRUE(recorded("OperatorUpdateHeld"));
  EXPECT_EQ(workloadStatus().value("renderedBy", ""), "1.0");
  EXPECT_EQ(workloadStatus().value("held", false), true);

  // Approving another version approves nothing.
  annotate("csiop.dev/approve-operator-update", "1.9");
  drain();
  EXPECT_EQ(dsWrites(), writes);
  annotate("csiop.dev/approve-operator-update", "2.0");
  drain();
  EXPECT_EQ(dsWrites(), writes + 1);
  EXPECT_EQ(registrar(), rendered);
  EXPECT_EQ(condition("OperatorUpdateHeld").rfind("False NoneHeld", 0), 0u)
      << condition("OperatorUpdateHeld");
  EXPECT_EQ(workloadStatus().value("renderedBy", ""), "2.0");
  EXPECT_FALSE(workloadStatus().contains("held"));
}

TEST_F(OperatorUpdateTest, AChangeOfTheSpecGoesThroughWithTheOperatorsAndAnUnrelatedOneDoesNot) {
  writtenByAnEarlierOperator();
  drain();
  ASSERT_EQ(condition("OperatorUpdateHeld").rfind("True Held", 0), 0u);
  const int writes = dsWrites();
  // A StorageClass: nothing the node plugin is rendered from.
  editSpec([](Json& spec) { spec["storageClasses"] = {{{"name", "fast"}}}; });
  drain();
  EXPECT_EQ(dsWrites(), writes);
  EXPECT_EQ(condition("OperatorUpdateHeld").rfind("True Held", 0), 0u);
  // The driver's arguments: the admin's change, applied as this operator renders it.
  editSpec([](Json& spec) { spec["driver"]["args"] = {"--v=5"}; });
  drain();
  EXPECT_EQ(dsWrites(), writes + 1);
  EXPECT_EQ(registrar(), rendered);
  EXPECT_EQ(condition("OperatorUpdateHeld").rfind("False NoneHeld", 0), 0u);
  EXPECT_EQ(workloadStatus().value("specGeneration", 0), 3);
}

TEST_F(OperatorUpdateTest, AutomaticAppliesTheOperatorsChangeAtOnce) {
  Json dd = driverDeployment();
  dd["spec"]["operatorUpdates"] = "Automatic";
  writtenByAnEarlierOperator(std::move(dd));
  drain();
  EXPECT_EQ(registrar(), rendered);
  EXPECT_EQ(condition("OperatorUpdateHeld"), "<no OperatorUpdateHeld condition>");
  EXPECT_EQ(workloadStatus().value("renderedBy", ""), "2.0");
}

TEST_F(OperatorUpdateTest, ANewGenerationOrOperatorAloneRewritesNoWorkload) {
  reconciler_.setOperatorVersion("1.0");
  converge();
  const int writes = dsWrites();
  editSpec([](Json& spec) { spec["storageClasses"] = {{{"name", "fast"}}}; });
  drain();
  reconciler_.setOperatorVersion("2.0");
  queued_.insert("demo");
  drain();
  EXPECT_EQ(dsWrites(), writes);
  EXPECT_EQ(workloadStatus().value("renderedBy", ""), "1.0");
  EXPECT_EQ(workloadStatus().value("specGeneration", 0), 1);
}

// A StorageClass the spec no longer lists is deleted; a copy another client made of it (labels,
// owner reference and all) is not the operator's and stays.
TEST_F(ReconcilerTest, AStorageClassDroppedFromTheSpecIsPrunedAndAnotherClientsCopyStays) {
  Json dd = driverDeployment();
  dd["spec"]["storageClasses"] = {{{"name", "fast"}}};
  create(std::move(dd));
  const Json* fast = api_.find(r::storageclasses, "", "fast");
  ASSERT_NE(fast, nullptr);
  Json copy = *fast;
  copy["metadata"]["name"] = "fast-copy";
  copy["metadata"].erase("uid");
  copy["metadata"]["managedFields"] = {{{"manager", "e2e.test"}, {"operation", "Update"}}};
  api_.put(r::storageclasses, std::move(copy));
  awaitCached(*caches_.child("StorageClass"), r::storageclasses, "", "fast-copy");
  editSpec([](Json& spec) { spec.erase("storageClasses"); });
  drain();
  EXPECT_EQ(api_.find(r::storageclasses, "", "fast"), nullptr);
  EXPECT_NE(api_.find(r::storageclasses, "", "fast-copy"), nullptr);
}

// Each sidecar's upstream rules are one ClusterRole for every driver (render::isShared): applied
// with the claim where missing, again when deleted or changed, not by a pass that finds it as
// rendered. A driver's own copy of an earlier version goes once its binding to the shared one is
// in place. The shared ones stay when the driver goes.
TEST_F(ReconcilerTest, EachSidecarsClusterRoleIsSharedPutBackAndOutlivesTheDriver) {
  Json dd = driverDeployment();
  dd["spec"]["controller"] = {{"attacher", {{"enabled", true}}}};
  create(dd);
  const Json* provisioner = api_.find(r::clusterroles, "", "csiop:external-provisioner");
  ASSERT_NE(provisioner, nullptr);
  EXPECT_FALSE((*provisioner)["metadata"].contains("ownerReferences"));
  EXPECT_NE(api_.find(r::clusterroles, "", "csiop:external-attacher"), nullptr);
  EXPECT_EQ(api_.find(r::clusterroles, "", "csiop:external-resizer"), nullptr);
  const Json* binding =
      api_.find(r::clusterrolebindings, "", "csiop:demo:sidecar:external-provisioner");
  ASSERT_NE(binding, nullptr);
  EXPECT_EQ((*binding)["roleRef"]["name"], "csiop:external-provisioner");
  const Json rules = (*provisioner)["rules"];

  const auto roleWrites = [&] {
    return api_.count("PATCH", "/clusterroles/") + api_.count("POST", "/clusterroles");
  };
  const int written = roleWrites();
  EXPECT_EQ(written, 2) << "one apply of each, however many passes";
  // As the API server returns them: each rule's keys in its own order (verbs first).
  Json stored = *provisioner;
  for (Json& rule : stored["rules"]) {
    rule = Json{{"verbs", rule["verbs"]},
                {"apiGroups", rule["apiGroups"]},
                {"resources", rule["resources"]}};
  }
  api_.put(r::clusterroles, std::move(stored));
  awaitCached(caches_.sharedRoles, r::clusterroles, "", "csiop:external-provisioner");
  queued_.insert("demo");
  drain();
  EXPECT_EQ(roleWrites(), written) << "as rendered: not written again";

  // A rule added by someone else is taken out again; a deleted role is applied again.
  Json edited = *api_.find(r::clusterroles, "", "csiop:external-provisioner");
  edited["rules"].push_back({{"apiGroups", {""}}, {"resources", {"secrets"}}, {"verbs", {"get"}}});
  api_.put(r::clusterroles, std::move(edited));
  awaitCached(caches_.sharedRoles, r::clusterroles, "", "csiop:external-provisioner");
  drain();
  EXPECT_TRUE(
      sameJson((*api_.find(r::clusterroles, "", "csiop:external-provisioner"))["rules"], rules));
  ASSERT_TRUE(api_.erase(r::clusterroles, "", "csiop:external-attacher"));
  ASSERT_TRUE(
      runUntil([&] { return caches_.sharedRoles.get("", "csiop:external-attacher") == nullptr; }));
  drain();
  EXPECT_NE(api_.find(r::clusterroles, "", "csiop:external-attacher"), nullptr);

  // What an earlier version made for this driver alone: a ClusterRole of the sidecar's rules and
  // its binding, as the operator writes its children (owner, labels, field manager).
  Json old = *api_.find(r::clusterrolebindings, "", "csiop:demo:sidecar:external-provisioner");
  old["metadata"]["name"] = "csiop:demo:external-provisioner";
  old["metadata"].erase("uid");
  old["roleRef"]["name"] = "csiop:demo:external-provisioner";
  Json oldRole = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                  {"kind", "ClusterRole"},
                  {"metadata", old["metadata"]},
                  {"rules", rules}};
  api_.put(r::clusterroles, std::move(oldRole));
  api_.put(r::clusterrolebindings, std::move(old));
  awaitCached(*caches_.child("ClusterRoleBinding"), r::clusterrolebindings, "",
              "csiop:demo:external-provisioner");
  drain();
  EXPECT_EQ(api_.find(r::clusterroles, "", "csiop:demo:external-provisioner"), nullptr);
  EXPECT_EQ(api_.find(r::clusterrolebindings, "", "csiop:demo:external-provisioner"), nullptr);

  Json deleting = *api_.find(r::driverdeployments, "", "demo");
  deleting["metadata"]["deletionTimestamp"] = fixedNow();
  api_.put(r::driverdeployments, std::move(deleting));
  awaitCached(caches_.driverDeployments, r::driverdeployments, "", "demo");
  drain();
  EXPECT_EQ(api_.find(r::driverdeployments, "", "demo"), nullptr);
  EXPECT_EQ(api_.find(r::clusterrolebindings, "", "csiop:demo:sidecar:external-provisioner"),
            nullptr);
  EXPECT_NE(api_.find(r::clusterroles, "", "csiop:external-provisioner"), nullptr);
  EXPECT_NE(api_.find(r::clusterroles, "", "csiop:external-attacher"), nullptr);
}

// A deletion waits while a volume of the driver exists, the driver managed on; once the volume
// is gone, the children go, the CSIDriver last, then the finalizer.
TEST_F(ReconcilerTest, ADeletionWaitsWhileAVolumeOfTheDriverExistsAndCompletesAfter) {
  converge();
  api_.put(r::persistentvolumes,
           {{"metadata", {{"name", "pv-1"}}},
            {"spec", {{"csi", {{"driver", kDriver}, {"volumeHandle", "v-1"}}}}}});
  ASSERT_TRUE(runUntil([&] { return !caches_.volumesOf(kDriver).empty(); }));
  Json dd = *api_.find(r::driverdeployments, "", "demo");
  dd["metadata"]["deletionTimestamp"] = fixedNow();
  api_.put(r::driverdeployments, std::move(dd));
  awaitCached(caches_.driverDeployments, r::driverdeployments, "", "demo");
  drain();
  EXPECT_EQ(condition("DeletionBlocked").rfind("True VolumesInUse", 0), 0u)
      << condition("DeletionBlocked");
  EXPECT_TRUE(recorded("DeletionBlocked"));
  EXPECT_NE(api_.findNamed(r::daemonsets, "demo-node"), nullptr);
  EXPECT_NE(api_.find(r::csidrivers, "", kDriver), nullptr);

  ASSERT_TRUE(api_.erase(r::persistentvolumes, "", "pv-1"));
  ASSERT_TRUE(runUntil([&] { return caches_.volumesOf(kDriver).empty(); }));
  drain();
  EXPECT_EQ(api_.findNamed(r::daemonsets, "demo-node"), nullptr);
  EXPECT_EQ(api_.find(r::csidrivers, "", kDriver), nullptr);
  EXPECT_EQ(api_.find(r::driverdeployments, "", "demo"), nullptr) << "the finalizer is removed";
}

// A deletion nothing blocks takes one pass: the tests' sweeps and the look for volume users in one
// round trip, every child but the CSIDriver in the next, then the CSIDriver (once every other
// delete was answered) with the finalizer. The API server answers the DaemonSet's delete late,
// to tell the round trips apart.
TEST_F(ReconcilerTest, ADeletionTakesOnePassWithTheCSIDriverLastAndTheFinalizerBesideIt) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kLate = 300ms;
  converge();
  std::map<std::string, Clock::time_point> arrived; // "METHOD resource" -> first arrival
  std::optional<Clock::time_point> daemonSetGone;
  api_.delay([&](const testing::Request& request) {
    const auto now = Clock::now();
    const std::string resource = resourceOf(request.target);
    arrived.try_emplace(
        request.method + " " + (request.method == "DELETE" ? request.target : resource), now);
    if (request.method == "DELETE" && request.target.find("/daemonsets/") != std::string::npos) {
      daemonSetGone = now + kLate;
      return std::chrono::milliseconds(kLate);
    }
    return 0ms;
  });
  Json dd = *api_.find(r::driverdeployments, "", "demo");
  dd["metadata"]["deletionTimestamp"] = fixedNow();
  api_.put(r::driverdeployments, std::move(dd));
  awaitCached(caches_.driverDeployments, r::driverdeployments, "", "demo");
  const int passes = api_.count("GET", "/persistentvolumeclaims?"); // the tests' sweeps list them
  api_.hold(r::driverdeployments); // the cache shows it a while longer
  reconcile("demo");
  settle();
  EXPECT_EQ(api_.find(r::driverdeployments, "", "demo"), nullptr) << "gone after one pass";
  // A pass the children's deletions bring before the cache shows it gone has nothing to do.
  const std::size_t requests = api_.requests().size();
  reconcile("demo");
  settle();
  EXPECT_EQ(api_.requests().size(), requests);
  api_.release(r::driverdeployments);
  settle();
  EXPECT_EQ(api_.findNamed(r::daemonsets, "demo-node"), nullptr);
  EXPECT_EQ(api_.findNamed(r::serviceaccounts, "demo-node"), nullptr);
  EXPECT_EQ(api_.find(r::csidrivers, "", kDriver), nullptr);
  EXPECT_GT(api_.count("GET", "/persistentvolumeclaims?"), passes) << "the tests were swept";
  ASSERT_TRUE(daemonSetGone);
  std::optional<Clock::time_point> driverDeleted;
  std::optional<Clock::time_point> finalizerRemoved;
  for (const auto& [request, at] : arrived) {
    if (request.starts_with("DELETE ") && request.find("/csidrivers/") != std::string::npos) {
      driverDeleted = at;
    } else if (request.starts_with("DELETE ")) {
      EXPECT_LT(at, *daemonSetGone) << request << " goes with the DaemonSet";
    } else if (request == "PATCH " + std::string("demo")) {
      finalizerRemoved = at;
    }
  }
  ASSERT_TRUE(driverDeleted);
  EXPECT_GE(*driverDeleted, *daemonSetGone) << "the CSIDriver once the rest is gone";
  ASSERT_TRUE(finalizerRemoved) << "the finalizer is removed";
  EXPECT_GE(*finalizerRemoved, *daemonSetGone);
  EXPECT_LT(*finalizerRemoved, *driverDeleted + kLate) << "with the CSIDriver's delete";
}

// The operator's own smoke tests are not volumes in use: a deletion (whatever the process
// remembers of its tests) removes their claims, waits while the driver removes their volumes,
// then completes; a volume of anyone else keeps blocking it.
TEST_F(ReconcilerTest, ADeletionSweepsTheSmokeTestsAndWaitsOnlyWhileTheirVolumesGo) {
  converge();
  const std::string claim = provisionName("demo", "template");
  api_.put(
      r::persistentvolumeclaims,
      {{"metadata",
        {{"name", claim}, {"namespace", dsNamespace()}, {"labels", {{kProvisionLabel, "demo"}}}}}});
  api_.put(r::persistentvolumes,
           {{"metadata", {{"name", "pv-test"}}},
            {"spec",
             {{"csi", {{"driver", kDriver}, {"volumeHandle", "v-1"}}},
              {"persistentVolumeReclaimPolicy", "Delete"},
              {"claimRef", {{"namespace", dsNamespace()}, {"name", claim}}}}}});
  const SmokeTestOwner owner{"demo", dsNamespace()};
  ASSERT_TRUE(runUntil([&] { return !caches_.volumesOf(kDriver, owner).tests.empty(); }));
  EXPECT_TRUE(caches_.volumesOf(kDriver, owner).empty()) << "a test is not a volume in use";
  Json dd = *api_.find(r::driverdeployments, "", "demo");
  dd["metadata"]["deletionTimestamp"] = fixedNow();
  api_.put(r::driverdeployments, std::move(dd));
  awaitCached(caches_.driverDeployments, r::driverdeployments, "", "demo");
  drain();
  EXPECT_EQ(api_.findNamed(r::persistentvolumeclaims, claim), nullptr) << "the test is swept";
  EXPECT_EQ(condition("DeletionBlocked"),
            "True VolumesInUse: the deletion waits: 1 object of the smoke tests (pv-test) "
            "(removed; the driver removes their volumes) still use the driver; it completes by "
            "itself when they are gone (or annotate csiop.dev/force-delete=true to delete "
            "anyway)");
  EXPECT_NE(api_.find(r::csidrivers, "", kDriver), nullptr) << "the driver removes the volume";

  ASSERT_TRUE(api_.erase(r::persistentvolumes, "", "pv-test"));
  ASSERT_TRUE(runUntil([&] { return caches_.volumesOf(kDriver, owner).tests.empty(); }));
  drain();
  EXPECT_EQ(api_.find(r::csidrivers, "", kDriver), nullptr);
  EXPECT_EQ(api_.find(r::driverdeployments, "", "demo"), nullptr) << "the finalizer is removed";
}

// spec.startupTaint: a node is released once its CSINode lists the driver, its other taints
// kept; one the driver is not registered on stays held (and counted); a taint put back is
// removed again; a change of the node's taints the cache has not seen yet makes the removal
// fail its test rather than lose that change.
TEST_F(ReconcilerTest, TheStartupTaintGoesFromANodeOnceTheDriverIsRegisteredThere) {
  const std::string key = "example.com/storage-not-ready";
  const Json startup = {{"key", key}, {"effect", "NoSchedule"}};
  const Json other = {{"key", "example.com/gpu"}, {"effect", "NoSchedule"}};
  const auto node = [](const std::string& name, const Json& taints) {
    return Json{{"metadata", {{"name", name}}}, {"spec", {{"taints", taints}}}};
  };
  const auto taintsOf = [this](const std::string& name) {
    const Json* n = api_.find(r::nodes, "", name);
    return n == nullptr ? Json() : (*n)["spec"].value("taints", Json::array());
  };
  api_.put(r::nodes, node("node-1", Json::array({startup, other})));
  api_.put(r::nodes, node("node-2", Json::array({startup})));
  Json dd = driverDeployment();
  dd["spec"]["startupTaint"] = {{"key", key}};
  api_.put(r::driverdeployments, dd);
  api_.put(r::csinodes, csiNode("node-1"));
  start();
  queued_.insert("demo");
  drain();
  EXPECT_EQ(taintsOf("node-1"), Json::array({other})) << "released, its other taint kept";
  EXPECT_EQ(taintsOf("node-2"), Json::array({startup})) << "not registered: held";
  const Json* written = api_.find(r::driverdeployments, "", "demo");
  ASSERT_NE(written, nullptr);
  EXPECT_EQ((*written)["status"]["nodes"].value("held", -1), 1);
  EXPECT_TRUE(recorded("StartupTaintRemoved"));
  const Json* ds = api_.findNamed(r::daemonsets, "demo-node");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ((*ds)["spec"]["template"]["spec"]["tolerations"],
            Json::array({{{"operator", "Exists"}}}))
      << "the default tolerations tolerate it already";

  // The driver registers on node-2; a node manager puts the taint back on node-1.
  api_.put(r::csinodes, csiNode("node-2"));
  api_.put(r::nodes, node("node-1", Json::array({other, startup})));
  drain();
  EXPECT_EQ(taintsOf("node-2"), Json::array());
  EXPECT_EQ(taintsOf("node-1"), Json::array({other}));
  EXPECT_EQ((*api_.find(r::driverdeployments, "", "demo"))["status"]["nodes"].value("held", -1), 0);

  // Put back again, while another writer adds a taint the cache has not seen yet: the removal's
  // test fails, nothing is lost, and the pass after the node's change removes it.
  api_.put(r::nodes, node("node-1", Json::array({other, startup})));
  settle();
  api_.hold(r::nodes);
  const Json third = {{"key", "example.com/maintenance"}, {"effect", "NoSchedule"}};
  api_.put(r::nodes, node("node-1", Json::array({other, startup, third})));
  queued_.insert("demo");
  reconcile("demo");
  EXPECT_EQ(taintsOf("node-1"), Json::array({other, startup, third}));
  api_.release(r::nodes);
  queued_.insert("demo");
  drain();
  EXPECT_EQ(taintsOf("node-1"), Json::array({other, third}));
}

// A node plugin DaemonSet whose controller cannot create its pods (a quota) is reported from its
// FailedCreate Event within a pass of the Event's arrival, and no longer once its pods are there.
TEST_F(ReconcilerTest, AWorkloadThatCannotCreateItsPodsIsReportedFromItsFailedCreateEvent) {
  converge();
  const Json* ds = api_.findNamed(r::daemonsets, "demo-node");
  ASSERT_NE(ds, nullptr);
  Json shortOfPods = *ds;
  shortOfPods["status"]["currentNumberScheduled"] = 0;
  shortOfPods["status"]["numberReady"] = 0;
  api_.put(r::daemonsets, shortOfPods);
  api_.put(r::events,
           {{"metadata", {{"name", "demo-node.18a1"}, {"namespace", dsNamespace()}}},
            {"type", "Warning"},
            {"reason", "FailedCreate"},
            {"involvedObject",
             {{"kind", "DaemonSet"},
              {"namespace", dsNamespace()},
              {"name", "demo-node"},
              {"uid", (*ds)["metadata"]["uid"]}}},
            {"message", "Error creating: pods \"demo-node-x1y2z\" is forbidden: exceeded quota: "
                        "no-pods, requested: pods=1, used: pods=0, limited: pods=0"},
            {"lastTimestamp", "2024-05-01T09:59:59Z"}});
  ASSERT_TRUE(runUntil([&] { return caches_.failedCreates.size() == 1; }));
  drain();
  const std::string line = "DaemonSet " + dsNamespace() +
                           "/demo-node cannot create its pods: Error creating: pods is forbidden: "
                           "exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: "
                           "pods=0";
  EXPECT_EQ(condition("Degraded"), "True PodsNotCreated: " + line);
  EXPECT_NE(ready().find(line), std::string::npos) << ready();

  setNodeDaemonSet(1, 1, 1, 1); // the quota raised: the pod is there
  drain();
  EXPECT_EQ(condition("Degraded").rfind("False ", 0), 0U) << condition("Degraded");
  EXPECT_EQ(ready(), "True Ready: driver registered on 1/1 nodes");
}

// The driver's volumes that fail, from the Events the API server filters by reason and the
// VolumeAttachments: a claim its provisioner refuses (while the claim is Pending: one that is
// gone is not counted), a pod whose volume it does not mount, an attachment with an error. Other
// drivers' Events of the same reasons are not counted; a pod that runs clears its own.
TEST_F(ReconcilerTest, FailingVolumesOfTheDriverAreCountedNamedAndClearedWhenTheyClear) {
  converge();
  const auto event = [&](const std::string& name, const char* reason, const char* kind,
                         const std::string& object, const std::string& message,
                         const std::string& component) {
    api_.put(r::events,
             {{"metadata", {{"name", name}, {"namespace", "apps"}}},
              {"type", "Warning"},
              {"reason", reason},
              {"involvedObject", {{"kind", kind}, {"namespace", "apps"}, {"name", object}}},
              {"message", message},
              {"source", {{"component", component}}},
              {"lastTimestamp", "2024-05-01T09:59:00Z"}});
  };
  const std::string provisioner = std::string(kDriver) + "_demo-controller-0_ab12";
  api_.put(r::persistentvolumeclaims, {{"metadata", {{"name", "big"}, {"namespace", "apps"}}},
                                       {"status", {{"phase", "Pending"}}}});
  event("big.1", "ProvisioningFailed", "PersistentVolumeClaim", "big",
        "failed to provision volume with StorageClass \"demo\": rpc error: code = OutOfRange "
        "desc = too big",
        provisioner);
  event("deleted.1", "ProvisioningFailed", "PersistentVolumeClaim", "deleted", "no space",
        provisioner);
  event("foreign.1", "ProvisioningFailed", "PersistentVolumeClaim", "big", "not ours",
        "ebs.csi.aws.com_ebs-csi-controller-0_cd34");
  api_.put(r::persistentvolumes,
           {{"metadata", {{"name", "pvc-1"}}},
            {"spec", {{"csi", {{"driver", kDriver}, {"volumeHandle", "h1"}}}}}});
  Json web = {{"metadata", {{"name", "web-0"}, {"namespace", "apps"}}},
              {"spec",
               {{"nodeName", "node-1"},
                {"volumes",
                 {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "d"}}}},
                  {{"name", "config"}, {"configMap", {{"name", "c"}}}}}}}},
              {"status", {{"phase", "Pending"}}}};
  api_.put(r::pods, web);
  ASSERT_TRUE(runUntil([&] { return caches_.persistentVolumes.size() == 1; }));
  event("web-0.1", "FailedMount", "Pod", "web-0",
        "MountVolume.SetUp failed for volume \"pvc-1\" : rpc error: code = Internal desc = mount "
        "failed",
        "kubelet");
  event("web-0.2", "FailedMount", "Pod", "web-0",
        "MountVolume.SetUp failed for volume \"config\" : configmap \"c\" not found", "kubelet");
  // A FailedCreate is not a volume's: the watches of the volume reasons do not see it.
  event("ds.1", "FailedCreate", "DaemonSet", "x", "Error creating: quota", "daemonset-controller");
  api_.put(r::volumeattachments, {{"metadata", {{"name", "csi-abc"}}},
                                  {"spec",
                                   {{"attacher", kDriver},
                                    {"nodeName", "node-1"},
                                    {"source", {{"persistentVolumeName", "pvc-2"}}}}},
                                  {"status",
                                   {{"attached", false},
                                    {"attachError",
                                     {{"message", "rpc error: code = NotFound desc = no disk"},
                                      {"time", "2024-05-01T09:59:30Z"}}}}}});
  ASSERT_TRUE(runUntil([&] {
    return caches_.mountFailures.size() == 1 && caches_.provisioningFailures.size() == 2 &&
           caches_.volumeAttachments.size() == 1;
  }));
  // Another driver's and a ConfigMap's failures are not kept.
  EXPECT_EQ(caches_.provisioningFailures.get("apps", "foreign.1"), nullptr);
  EXPECT_EQ(caches_.mountFailures.get("apps", "web-0.2"), nullptr);
  EXPECT_EQ(caches_.attachFailures.size(), 0U);
  reconcile("demo");
  EXPECT_EQ(condition("VolumesFailing"),
            "True ProvisioningFailed: 1 ProvisioningFailed, 1 AttachFailed, 1 MountFailed: "
            "VolumeAttachment csi-abc (volume pvc-2): on node node-1: rpc error: code = NotFound "
            "desc = no disk; PersistentVolumeClaim apps/big: failed to provision volume with "
            "StorageClass \"demo\": rpc error: code = OutOfRange desc = too big; Pod apps/web-0 "
            "(volume pvc-1): MountVolume.SetUp failed for volume \"pvc-1\" : rpc error: code = "
            "Internal desc = mount failed");
  const Json volumes = api_.find(r::driverdeployments, "", "demo")->at("status").at("volumes");
  EXPECT_EQ(volumes.value("provisioningFailed", 0), 1);
  EXPECT_EQ(volumes.value("attachFailed", 0), 1);
  EXPECT_EQ(volumes.value("mountFailed", 0), 1);
  EXPECT_FALSE(volumes.contains("detachFailed"));
  EXPECT_EQ(volumes.at("failures").size(), 3U);
  EXPECT_EQ(reconciler_.volumeFailures().at("demo").at("MountFailed"), 1);
  // The claims were looked up once (both: the deleted one answers 404); not again at once.
  const auto lookups = api_.count("GET", "/persistentvolumeclaims/");
  EXPECT_EQ(lookups, 2);
  reconcile("demo");
  EXPECT_EQ(api_.count("GET", "/persistentvolumeclaims/"), lookups);

  // The pod runs; the attachment is attached: only the claim is left.
  web["status"]["phase"] = "Running";
  api_.put(r::pods, web);
  Json va = *api_.findNamed(r::volumeattachments, "csi-abc");
  va["status"] = {{"attached", true}};
  api_.put(r::volumeattachments, va);
  queued_.clear();
  ASSERT_TRUE(runUntil([&] {
    const CachedPod* p = caches_.pod("apps", "web-0");
    const Json* cached = caches_.volumeAttachments.get("", "csi-abc");
    return p != nullptr && p->phase == "Running" && cached != nullptr &&
           cached->at("status").value("attached", false);
  }));
  // Each change concerns the DriverDeployment whose failures named the object.
  EXPECT_TRUE(queued_.contains("demo"));
  reconcile("demo");
  EXPECT_EQ(condition("VolumesFailing")
                .rfind("True ProvisioningFailed: 1 ProvisioningFailed: "
                       "PersistentVolumeClaim apps/big: ",
                       0),
            0U)
      << condition("VolumesFailing");
}

// A FailedMount that arrives before the PersistentVolume it names is in the cache is not kept (it
// is no managed driver's yet); the kubelet's repeat of it (the count goes up) is.
TEST_F(ReconcilerTest, AVolumeEventSeenBeforeItsVolumeIsKeptFromItsNextRepeat) {
  converge();
  Json event = {{"metadata", {{"name", "web-1.1"}, {"namespace", "apps"}}},
                {"type", "Warning"},
                {"reason", "FailedMount"},
                {"involvedObject", {{"kind", "Pod"}, {"namespace", "apps"}, {"name", "web-1"}}},
                {"message", "MountVolume.SetUp failed for volume \"pvc-9\" : rpc error: code = "
                            "Internal desc = mount failed"},
                {"source", {{"component", "kubelet"}}},
                {"count", 1},
                {"lastTimestamp", "2024-05-01T09:59:00Z"}};
  api_.put(r::events, event);
  settle();
  EXPECT_EQ(caches_.mountFailures.size(), 0U);
  api_.put(r::persistentvolumes,
           {{"metadata", {{"name", "pvc-9"}}},
            {"spec", {{"csi", {{"driver", kDriver}, {"volumeHandle", "h9"}}}}}});
  ASSERT_TRUE(runUntil([&] { return caches_.persistentVolumes.size() == 1; }));
  event["count"] = 2;
  event["lastTimestamp"] = "2024-05-01T09:59:40Z";
  api_.put(r::events, event);
  ASSERT_TRUE(runUntil([&] { return caches_.mountFailures.size() == 1; }));
  EXPECT_EQ(caches_.mountFailures.byIndex(kByDriver, kDriver).size(), 1U);
}

// A kubelet's FailedMount of a pod's volume that is no PersistentVolume may be an inline volume of
// a managed driver, which only the pod's spec tells. The pod is looked up (one GET), not every
// pod watched: the kubelet's next sighting of the failure is filed under the driver. A pod whose
// failing volume is a ConfigMap's is looked up once, and its Events are never kept.
TEST_F(ReconcilerTest, AnInlineVolumesMountFailureIsFiledThroughItsPodLookedUpNotWatched) {
  converge();
  editSpec([](Json& spec) {
    spec["csiDriver"] = {{"volumeLifecycleModes", {"Persistent", "Ephemeral"}}};
  });
  queued_.insert("demo");
  drain();
  ASSERT_TRUE(runUntil([&] { return caches_.servesInlineVolumes(kDriver); }));
  const auto podWith = [](const std::string& name, const Json& volume) {
    return Json{{"metadata", {{"name", name}, {"namespace", "apps"}}},
                {"spec", {{"nodeName", "node-1"}, {"volumes", Json::array({volume})}}},
                {"status", {{"phase", "Pending"}}}};
  };
  api_.put(r::pods, podWith("inline", {{"name", "scratch"}, {"csi", {{"driver", kDriver}}}}));
  api_.put(r::pods, podWith("configured", {{"name", "config"}, {"configMap", {{"name", "c"}}}}));
  const auto failedMount = [](const std::string& pod, const std::string& volume, int count) {
    return Json{{"metadata", {{"name", pod + ".1"}, {"namespace", "apps"}}},
                {"type", "Warning"},
                {"reason", "FailedMount"},
                {"involvedObject", {{"kind", "Pod"}, {"namespace", "apps"}, {"name", pod}}},
                {"message", "MountVolume.SetUp failed for volume \"" + volume +
                                "\" : rpc error: code = Internal desc = mount failed"},
                {"source", {{"component", "kubelet"}}},
                {"count", count},
                {"lastTimestamp", "2024-05-01T09:59:0" + std::to_string(count) + "Z"}};
  };
  api_.put(r::events, failedMount("inline", "scratch", 1));
  api_.put(r::events, failedMount("configured", "config", 1));
  ASSERT_TRUE(runUntil([&] { return caches_.podLookups.lookups() == 2; }));
  settle();
  EXPECT_EQ(caches_.mountFailures.size(), 0U) << "their driver was not known when they came";
  EXPECT_FALSE(caches_.podsWithVolumesOnDemand.running()) << "no pod is watched for them";
  ASSERT_NE(caches_.pod("apps", "inline"), nullptr);
  EXPECT_EQ(caches_.pod("apps", "configured"), nullptr) << "no volume the decisions read";

  api_.put(r::events, failedMount("inline", "scratch", 2));
  api_.put(r::events, failedMount("configured", "config", 2));
  ASSERT_TRUE(runUntil([&] { return caches_.mountFailures.size() == 1; }));
  EXPECT_EQ(caches_.mountFailures.byIndex(kByDriver, kDriver).size(), 1U);
  settle();
  EXPECT_EQ(caches_.podLookups.lookups(), 2U) << "each pod looked up once";
  EXPECT_EQ(api_.count("GET", "/api/v1/namespaces/apps/pods/"), 2);
}

// In a namespace that enforces Pod Security "restricted", the node plugin's pods would be refused:
// a dry run of one says so before the DaemonSet is created, which it is not; once the namespace
// allows them, it is.
TEST_F(ReconcilerTest, AWorkloadWhosePodsPodSecurityRefusesIsReportedAndNotCreated) {
  const std::string ns = api::driverNamespaceOf("demo", "");
  const auto putNamespace = [&](const std::string& level) {
    api_.put(r::namespaces,
             {{"metadata",
               {{"name", ns}, {"labels", {{"pod-security.kubernetes.io/enforce", level}}}}}});
  };
  putNamespace("restricted");
  int dryRuns = 0;
  bool refuse = true;
  api_.intercept([&](const testing::Request& request) -> std::optional<testing::Reply> {
    if (request.method != "POST" || request.target.find("/pods?") == std::string::npos ||
        request.target.find("dryRun=All") == std::string::npos) {
      return std::nullopt;
    }
    ++dryRuns;
    if (!refuse) {
      return testing::Reply{.status = 201, .body = request.body};
    }
    const Json status = {
        {"kind", "Status"},
        {"apiVersion", "v1"},
        {"status", "Failure"},
        {"message", "pods \"demo-node-abcde\" is forbidden: violates PodSecurity "
                    "\"restricted:latest\": privileged (container \"csi-driver\" must not set "
                    "securityContext.privileged=true)"},
        {"reason", "Forbidden"},
        {"code", 403}};
    return testing::Reply{.status = 403, .body = status.dump()};
  });
  api_.put(r::driverdeployments, driverDeployment());
  api_.put(r::csinodes, csiNode("node-1"));
  start();
  settle();
  // One pass: it asks again every 30 s meanwhile (a requeue drain() would follow at once).
  reconcile("demo");
  settle();
  EXPECT_GE(dryRuns, 1);
  EXPECT_EQ(api_.findNamed(r::daemonsets, "demo-node"), nullptr) << "its pods would be refused";
  const std::string degraded = condition("Degraded");
  EXPECT_EQ(degraded.rfind("True PrerequisitesMissing: DaemonSet " + ns +
                               "/demo-node is not created: namespace " + ns +
                               " enforces Pod Security \"restricted\"",
                           0),
            0U)
      << degraded;
  EXPECT_NE(degraded.find("violates PodSecurity \"restricted:latest\": privileged"),
            std::string::npos)
      << degraded;

  // The admin labels the namespace for the node plugins: its change brings the pass back.
  refuse = false;
  queued_.clear();
  putNamespace("privileged");
  settle();
  EXPECT_TRUE(queued_.contains("demo")) << "the namespace's change concerns it";
  drain();
  EXPECT_NE(api_.findNamed(r::daemonsets, "demo-node"), nullptr);
  EXPECT_EQ(condition("Degraded").rfind("False ", 0), 0U) << condition("Degraded");
  const int before = dryRuns;
  queued_.insert("demo");
  drain();
  EXPECT_EQ(dryRuns, before) << "a privileged namespace, or a workload that exists: no dry run";
}

// The workloads' pods are heard through a watch the API server filters by the owner label: a
// pod of anyone else never reaches the operator through it. The other pods with volumes are
// kept only while a decision demands them (a deletion, a rollout waiting for volumes, a failing
// mount, the webhook's DELETE review); a pod with neither is never kept.
TEST_F(ReconcilerTest, TheWorkloadsPodsAreHeardByLabelThePodsWithVolumesOnlyOnDemand) {
  converge();
  const Json inlineVolume = {{"name", "v"}, {"csi", {{"driver", kDriver}}}};
  api_.put(r::pods, {{"metadata", {{"name", "web"}, {"namespace", "default"}}},
                     {"spec", {{"nodeName", "node-1"}, {"volumes", Json::array({inlineVolume})}}},
                     {"status", {{"phase", "Running"}}}});
  api_.put(r::pods, {{"metadata", {{"name", "idle"}, {"namespace", "default"}}},
                     {"spec", {{"nodeName", "node-1"}}},
                     {"status", {{"phase", "Running"}}}});
  Json workloadPod = {{"metadata",
                       {{"name", "demo-node-x"},
                        {"namespace", dsNamespace()},
                        {"labels", {{api::kOwnerLabel, "demo"}}}}},
                      {"spec", {{"nodeName", "node-1"}, {"volumes", Json::array({inlineVolume})}}},
                      {"status", {{"phase", "Running"}}}};
  api_.put(r::pods, workloadPod);
  ASSERT_TRUE(runUntil([&] { return caches_.pods.byIndex(kByOwner, "demo").size() == 1; }));
  settle();
  EXPECT_FALSE(caches_.podsWithVolumesOnDemand.running());
  EXPECT_EQ(caches_.pod("default", "web"), nullptr) << "not demanded: not heard";
  const auto watches = api_.count("GET", "/api/v1/pods?");
  for (const testing::Request& request : api_.requests()) {
    if (request.target.starts_with("/api/v1/pods?")) {
      std::string selector = api::kOwnerLabel;
      selector.replace(selector.find('/'), 1, "%2F");
      EXPECT_NE(request.target.find("labelSelector=" + selector), std::string::npos)
          << request.target;
    }
  }
  ASSERT_TRUE(runtime::test::runCoroutine(io_, caches_.podsWithVolumesOnDemand.demand(5s), 10s));
  EXPECT_GT(api_.count("GET", "/api/v1/pods?"), watches) << "listed on demand";
  EXPECT_EQ(caches_.volumeUsers().size(), 2U);
  EXPECT_EQ(caches_.pod("default", "idle"), nullptr) << "neither a workload's nor a volume's";
  EXPECT_NE(caches_.pod("default", "web"), nullptr);
  EXPECT_EQ(caches_.podsWithVolumes.get(dsNamespace(), "demo-node-x"), nullptr)
      << "a workload's pod is kept once";
  EXPECT_EQ(caches_.volumesOf(kDriver).pods.size(), 2U);
  const CachedPod* cached = caches_.pods.get(dsNamespace(), "demo-node-x");
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(reconciler_.ownersOf(*cached), std::vector<std::string>{"demo"});
}

// With the DaemonSet controller's own rollout, the workloads' status counts their pods: a converged
// driver reads none. A pod not ready while the counts stay put is a stall its pods explain: after
// kPodReadAfter the DriverDeployment's own pods are listed (by the owner label, in its namespace),
// and again every minute while it lasts.
TEST_F(ReconcilerTest, TheWorkloadsPodsAreReadOnlyToExplainAStall) {
  Json dd = driverDeployment();
  dd["spec"]["node"]["updateStrategy"] = {{"type", "RollingUpdate"}};
  converge(std::move(dd));
  EXPECT_EQ(api_.count("GET", "/api/v1/pods?"), 0) << "no pod read";
  EXPECT_FALSE(caches_.podsOnDemand.running());

  // The plugin's new pod cannot pull its image.
  const Json* ds = api_.findNamed(r::daemonsets, "demo-node");
  ASSERT_NE(ds, nullptr);
  api_.put(
      r::pods,
      {{"metadata",
        {{"name", "demo-node-abcde"},
         {"namespace", dsNamespace()},
         {"labels", {{api::kOwnerLabel, "demo"}}},
         {"ownerReferences",
          {{{"kind", "DaemonSet"},
            {"name", "demo-node"},
            {"uid", (*ds)["metadata"]["uid"]},
            {"controller", true}}}}}},
       {"spec", {{"nodeName", "node-1"}}},
       {"status",
        {{"phase", "Pending"},
         {"containerStatuses",
          {{{"name", "driver"},
            {"state",
             {{"waiting", {{"reason", "ImagePullBackOff"}, {"message", "no such image"}}}}}}}}}}});
  setNodeDaemonSet(1, 1, 0, 1);
  settle();
  const ReconcileResult first = reconcile("demo");
  EXPECT_EQ(api_.count("GET", "/api/v1/pods?"), 0) << "a pod not ready for now: nothing to explain";
  EXPECT_EQ(ready().find("ImagePullBackOff"), std::string::npos) << ready();
  ASSERT_EQ(first.outcome, ReconcileResult::Outcome::Requeue) << "looked at again";
  EXPECT_EQ(first.after, kPodReadAfter + 1s);

  clock_.advance(first.after); // the passes' wall clock with it
  settle();
  const ReconcileResult due = reconcile("demo");
  settle();
  const std::string podsOfDemo =
      "/api/v1/namespaces/" + dsNamespace() + "/pods?labelSelector=" + ownerSelector() + "%3Ddemo";
  EXPECT_EQ(api_.count("GET", podsOfDemo), 1) << "its own pods listed to explain the stall";
  EXPECT_EQ(api_.count("GET", "/api/v1/pods?"), 0) << "no watch of every workload's pods";
  EXPECT_FALSE(caches_.podsOnDemand.running());
  EXPECT_NE(condition("Degraded").find("ImagePullBackOff: no such image"), std::string::npos)
      << condition("Degraded");
  ASSERT_EQ(due.outcome, ReconcileResult::Outcome::Requeue) << "listed again while it lasts";
  EXPECT_EQ(due.after, 60s);
}

// Companion objects are children like the rest: applied with the workloads and pruned when the
// spec drops them. A VolumeSnapshotClass whose API the server does not serve (no snapshot CRDs)
// is reported as a missing prerequisite and looked for again, instead of failing to apply.
TEST_F(ReconcilerTest, CompanionsAreAppliedAndPrunedAndAnUnservedAPIIsReportedNotApplied) {
  Json dd = driverDeployment();
  dd["spec"]["configMaps"] = {{{"name", "driver-config"}, {"data", {{"a", "b"}}}}};
  dd["spec"]["services"] = {
      {{"name", "metrics"}, {"component", "Node"}, {"ports", {{{"port", 9100}}}}}};
  dd["spec"]["volumeSnapshotClasses"] = {{{"name", "snapshots"}}};
  api_.put(r::driverdeployments, std::move(dd));
  start();
  EXPECT_EQ(reconcile("demo").outcome, ReconcileResult::Outcome::Done);
  EXPECT_NE(api_.findNamed(r::configmaps, "driver-config"), nullptr);
  EXPECT_NE(api_.findNamed(r::services, "metrics"), nullptr);
  EXPECT_EQ(api_.count("POST", "/volumesnapshotclasses"), 0);
  EXPECT_EQ(condition("Degraded"),
            "True PrerequisitesMissing: snapshot.storage.k8s.io/v1/volumesnapshotclasses is not "
            "served (needed by spec.volumeSnapshotClasses; its CRD is installed by a cluster "
            "admin)");
  // Asked again (once, whoever waits for it): still not there, so nothing is queued.
  const auto discoveries = api_.count("GET", "/apis/snapshot.storage.k8s.io/v1");
  EXPECT_TRUE(runtime::test::runCoroutine(io_, reconciler_.prerequisitesAppeared(), 10s).empty());
  EXPECT_EQ(api_.count("GET", "/apis/snapshot.storage.k8s.io/v1"), discoveries + 1);

  awaitCached(*caches_.child("ConfigMap"), r::configmaps, dsNamespace(), "driver-config");
  editSpec([](Json& spec) {
    spec.erase("configMaps");
    spec.erase("volumeSnapshotClasses");
  });
  drain();
  EXPECT_EQ(api_.findNamed(r::configmaps, "driver-config"), nullptr);
  EXPECT_NE(api_.findNamed(r::services, "metrics"), nullptr);
  EXPECT_EQ(condition("Degraded").rfind("False AsExpected", 0), 0u) << condition("Degraded");
}

// A node plugin that could not preempt the pods that name no PriorityClass (a globalDefault class
// above its own) is reported with the missing prerequisites; one above them is not.
TEST_F(ReconcilerTest, ANodePluginBelowTheDefaultPriorityIsReported) {
  const auto priorityClass = [](const char* name, std::int64_t value, bool globalDefault) {
    return Json{{"apiVersion", "scheduling.k8s.io/v1"},
                {"kind", "PriorityClass"},
                {"metadata", {{"name", name}}},
                {"value", value},
                {"globalDefault", globalDefault}};
  };
  api_.put(r::priorityclasses, priorityClass("system-node-critical", 2000001000, false));
  api_.put(r::priorityclasses, priorityClass("tenant-default", 1000, true));
  api_.put(r::priorityclasses, priorityClass("storage", 500, false));
  Json dd = driverDeployment();
  dd["spec"]["node"]["priorityClassName"] = "storage";
  api_.put(r::driverdeployments, std::move(dd));
  start();
  reconcile("demo");
  EXPECT_EQ(condition("Degraded"),
            "True PrerequisitesMissing: spec.node.priorityClassName: the node plugin's pods run at "
            "priority 500 (PriorityClass storage), no higher than pods that name no "
            "PriorityClass (1000): on a full node they cannot preempt one and the driver is "
            "never registered there; name a higher class (system-node-critical by default)");
  EXPECT_NE(api_.findNamed(r::daemonsets, "demo-node"), nullptr) << "a risk, not a stop";

  editSpec([](Json& spec) { spec["node"].erase("priorityClassName"); });
  reconcile("demo");
  EXPECT_EQ(condition("Degraded").rfind("False", 0), 0U) << condition("Degraded");
}

// spec.paused: nothing is created; the status says it is paused.
TEST_F(ReconcilerTest, APausedDriverDeploymentGetsNothingButItsStatus) {
  Json dd = driverDeployment();
  dd["spec"]["paused"] = true;
  create(std::move(dd));
  EXPECT_EQ(condition("Paused").rfind("True Paused", 0), 0u) << condition("Paused");
  EXPECT_TRUE(recorded("Paused"));
  EXPECT_EQ(api_.find(r::csidrivers, "", kDriver), nullptr);
  EXPECT_EQ(api_.count("POST", "/daemonsets"), 0);
  editSpec([](Json& spec) { spec["paused"] = false; });
  drain();
  EXPECT_EQ(condition("Paused").rfind("False Resumed", 0), 0u) << condition("Paused");
  EXPECT_TRUE(recorded("Resumed"));
  EXPECT_NE(api_.findNamed(r::daemonsets, "demo-node"), nullptr);
}

// A spec the webhook would have refused (here it was never asked): reported, nothing created.
TEST_F(ReconcilerTest, AnInvalidSpecIsReportedAndNothingIsCreated) {
  Json dd = driverDeployment();
  dd["spec"]["driverName"] = "Not_A_Driver_Name";
  create(std::move(dd));
  EXPECT_EQ(ready().rfind("False InvalidSpec: ", 0), 0u) << ready();
  EXPECT_NE(ready().find("driverName"), std::string::npos) << ready();
  EXPECT_EQ(condition("Degraded").rfind("True InvalidSpec", 0), 0u) << condition("Degraded");
  EXPECT_EQ(api_.count("POST", "/csidrivers"), 0);
  EXPECT_EQ(api_.count("POST", "/daemonsets"), 0);
}

// A child marked csiop.dev/unmanaged keeps what someone wrote into it; the status lists it.
TEST_F(ReconcilerTest, AChildMarkedUnmanagedIsNotAppliedAndIsListed) {
  converge();
  Json ds = *api_.findNamed(r::daemonsets, "demo-node");
  ds["metadata"]["annotations"]["csiop.dev/unmanaged"] = "true";
  api_.put(r::daemonsets, std::move(ds));
  awaitCached(*caches_.child("DaemonSet"), r::daemonsets, dsNamespace(), "demo-node");
  editSpec([](Json& spec) { spec["driver"]["image"] = "example.com/driver:v2"; });
  drain();
  const std::string written = api_.findNamed(r::daemonsets, "demo-node")->dump();
  EXPECT_NE(written.find("example.com/driver:v1"), std::string::npos);
  EXPECT_EQ(written.find("example.com/driver:v2"), std::string::npos);
  const Json status = api_.find(r::driverdeployments, "", "demo")->value("status", Json::object());
  ASSERT_TRUE(status.contains("unmanaged")) << status.dump();
  EXPECT_EQ(status["unmanaged"].dump().find("demo-node") != std::string::npos, true)
      << status["unmanaged"].dump();
}

// A ServiceAccount of the name the operator would create, someone else's: never adopted, and
// the node plugin that would run as it is not applied.
TEST_F(ReconcilerTest, AForeignServiceAccountIsNeverAdoptedNorRunAs) {
  Json dd = driverDeployment();
  dd["apiVersion"] = "csiop.dev/v1alpha1";
  dd["kind"] = "DriverDeployment";
  const api::Loaded loaded = api::loadDriverDeployment(dd, api::UnknownFields::Ignore);
  ASSERT_TRUE(loaded.ok());
  std::optional<Json> account;
  for (Json& o : render::render(loaded.objects.front())) {
    if (o["kind"] == "ServiceAccount" && o["metadata"]["name"] == "demo-node") {
      account = o;
    }
  }
  ASSERT_TRUE(account);
  (*account)["metadata"].erase("labels");
  (*account)["metadata"].erase("ownerReferences");
  api_.put(r::serviceaccounts, *account);
  api_.put(r::driverdeployments, driverDeployment());
  start();
  // An error each pass (retried with its backoff, so the queue never drains): two passes.
  for (int pass = 0; pass < 2; ++pass) {
    EXPECT_EQ(reconcile("demo").outcome, ReconcileResult::Outcome::Error);
    settle();
  }
  EXPECT_EQ(api_.count("POST", "/daemonsets"), 0);
  EXPECT_NE(condition("Degraded")
                .find("not applied: its pods would run as ServiceAccount " +
                      (*account)["metadata"]["namespace"].get<std::string>() +
                      "/demo-node, which exists and is not this "
                      "DriverDeployment's"),
            std::string::npos)
      << condition("Degraded");
  const Json* stored =
      api_.find(r::serviceaccounts, (*account)["metadata"]["namespace"], "demo-node");
  ASSERT_NE(stored, nullptr);
  EXPECT_FALSE((*stored)["metadata"].contains("labels")) << "left untouched";
}

// What the reconciler keeps for a DriverDeployment (its applied children, the status it wrote,
// the nodes its rollout waits on, its forced deletion's Event) goes with it.
TEST_F(ReconcilerTest, WhatIsKeptForADriverDeploymentGoesOnceItIsDeleted) {
  converge();
  EXPECT_GT(reconciler_.trackedStateEntries(), 0u);
  api_.put(r::persistentvolumes,
           {{"metadata", {{"name", "pv-1"}}},
            {"spec", {{"csi", {{"driver", kDriver}, {"volumeHandle", "v-1"}}}}}});
  ASSERT_TRUE(runUntil([&] { return !caches_.volumesOf(kDriver).empty(); }));
  Json dd = *api_.find(r::driverdeployments, "", "demo");
  dd["metadata"]["deletionTimestamp"] = fixedNow();
  dd["metadata"]["annotations"] = {{api::kForceDeleteAnnotation, "true"}};
  api_.put(r::driverdeployments, std::move(dd));
  awaitCached(caches_.driverDeployments, r::driverdeployments, "", "demo");
  drain(); // its deletion (forced: the volume is in use), then the reconcile its end queues
  EXPECT_TRUE(recorded("DeletionForced"));
  EXPECT_EQ(api_.find(r::driverdeployments, "", "demo"), nullptr) << "the finalizer is removed";
  EXPECT_EQ(caches_.driverDeployments.get("", "demo"), nullptr);
  EXPECT_EQ(reconciler_.trackedStateEntries(), 0u);
  // Reconciled again (as a late event of one of its children would queue it): nothing comes back.
  reconcile("demo");
  EXPECT_EQ(reconciler_.trackedStateEntries(), 0u);
}

// The API server answers 429 with Retry-After: 2 to a child's create: the pass ends as an Error
// that carries the wait, and the worker queues the DriverDeployment again no sooner than that,
// whatever its backoff (5 ms).
TEST_F(ReconcilerTest, ATooManyRequestsAnswerRequeuesNoSoonerThanItsRetryAfter) {
  api_.put(r::driverdeployments, driverDeployment());
  api_.put(r::csinodes, csiNode("node-1"));
  start();
  int throttled = 0;
  api_.intercept([&](const testing::Request& request) -> std::optional<testing::Reply> {
    if (request.method != "POST" || request.target.find("/daemonsets") == std::string::npos ||
        throttled++ > 0) {
      return std::nullopt;
    }
    const Json status = {{"kind", "Status"},
                         {"apiVersion", "v1"},
                         {"status", "Failure"},
                         {"message", "too many requests, please try again later"},
                         {"reason", "TooManyRequests"},
                         {"code", 429}};
    return testing::Reply{.status = 429, .body = status.dump(), .headers = {{"Retry-After", "2"}}};
  });
  testsupport::ManualClock clock(io_);
  runtime::WorkQueue queue(io_.get_executor(), clock);
  runtime::OperatorMetrics metrics;
  runtime::TaskSupervisor supervisor;
  std::vector<ReconcileResult> results;
  runtime::Workers workers(queue, metrics,
                           [&](std::string name) -> asio::awaitable<ReconcileResult> {
                             ReconcileResult result = co_await reconciler_.reconcile(name);
                             results.push_back(result);
                             co_return result;
                           });
  workers.start(io_.get_executor(), 1, supervisor);
  queue.add("demo");
  ASSERT_TRUE(runUntil([&] { return results.size() == 1 && queue.numWaiting() == 1; }));
  EXPECT_EQ(throttled, 1);
  EXPECT_EQ(results[0].outcome, ReconcileResult::Outcome::Error);
  EXPECT_NE(results[0].message.find("TooManyRequests"), std::string::npos) << results[0].message;
  EXPECT_EQ(results[0].retryAfter, 2s);
  ASSERT_TRUE(clock.nextDeadline());
  EXPECT_GE(*clock.nextDeadline() - clock.now(), 2s);
  settle(); // the caches show the first pass's writes (the CSIDriver it claimed)
  clock.advance(2s - 1ms);
  EXPECT_EQ(results.size(), 1u);
  EXPECT_EQ(queue.numWaiting(), 1u);
  clock.advance(1ms);
  ASSERT_TRUE(runUntil([&] { return results.size() == 2 && queue.numProcessing() == 0; }));
  EXPECT_NE(api_.findNamed(r::daemonsets, "demo-node"), nullptr) << "created on the retry";
  queue.shutdown();
  clock.settle(); // the worker ends
  EXPECT_FALSE(supervisor.failed()) << supervisor.failure();
}

// The DriverDeployment changed after the cache's read: the status write conflicts, and the pass
// ends with a short requeue (not an error); the next pass, from the new version, writes it.
TEST_F(ReconcilerTest, AStatusWriteThatConflictsRequeuesShortly) {
  api_.put(r::driverdeployments, driverDeployment());
  api_.put(r::csinodes, csiNode("node-1"));
  start();
  api_.hold(r::driverdeployments);
  Json changed = *api_.find(r::driverdeployments, "", "demo");
  changed["metadata"]["labels"] = {{"team", "storage"}};
  api_.put(r::driverdeployments, std::move(changed));
  const ReconcileResult result = reconcile("demo");
  EXPECT_EQ(result.outcome, ReconcileResult::Outcome::Requeue);
  EXPECT_EQ(result.after, requeue::kStatusConflict);
  EXPECT_EQ(condition("Ready"), "<no Ready condition>");
  api_.release(r::driverdeployments);
  queued_.insert("demo");
  drain();
  EXPECT_EQ(ready().rfind("False ", 0), 0u) << ready();
}

// spec.rollout type Verified, against a DaemonSet controller and kubelets the test plays: three
// nodes, a new image; the pass's clock stands at fixedNow() (10:00:00), the new pods were
// created before it.
class VerifiedRolloutTest : public ReconcilerTest {
protected:
  static Json verifiedDriverDeployment() {
    Json dd = driverDeployment();
    dd["spec"]["node"].erase("updateStrategy");
    // The gates' tests replace pods at once; PrePullTest pulls the images first.
    dd["spec"]["rollout"] = {{"type", "Verified"}, {"soakSeconds", 0}, {"prePullImages", false}};
    return dd;
  }

  // Three nodes running revision r1, as a DaemonSet controller would have made them.
  void convergeOnThreeNodes() {
    api_.put(r::driverdeployments, verifiedDriverDeployment());
    for (const char* node : {"node-1", "node-2", "node-3"}) {
      api_.put(r::csinodes, csiNode(node));
    }
    start();
    queued_.insert("demo");
    drain();
    const Json* ds = api_.findNamed(r::daemonsets, "demo-node");
    ASSERT_NE(ds, nullptr);
    ASSERT_EQ((*ds)["spec"]["updateStrategy"], Json({{"type", "OnDelete"}}));
    putRevision("r1", 1);
    for (const char* node : {"node-1", "node-2", "node-3"}) {
      putPod(std::string("old-") + node, node, "r1");
    }
    drain();
    ASSERT_EQ(rollout().value("phase", ""), "Complete") << rollout().dump();
  }

  std::string dsUid() const {
    return (*api_.findNamed(r::daemonsets, "demo-node"))["metadata"].value("uid", "");
  }

  // The node plugin DaemonSet, as the controller of what it makes.
  Json daemonSetOwner() const {
    return {{"apiVersion", "apps/v1"},
            {"kind", "DaemonSet"},
            {"name", "demo-node"},
            {"uid", dsUid()},
            {"controller", true}};
  }

  // The DaemonSet controller records its current template as revision `hash`, number `number`.
  void putRevision(const std::string& hash, int number) {
    const Json& ds = *api_.findNamed(r::daemonsets, "demo-node");
    Json tmpl = ds["spec"]["template"];
    tmpl["$patch"] = "replace";
    api_.put(r::controllerrevisions,
             {{"metadata",
               {{"name", "demo-node-" + hash},
                {"namespace", dsNamespace()},
                {"labels", {{api::kOwnerLabel, "demo"}, {"controller-revision-hash", hash}}},
                {"ownerReferences", {daemonSetOwner()}}}},
              {"data", {{"spec", {{"template", tmpl}}}}},
              {"revision", number}});
  }

  // A node plugin pod on `node` at `revision`, created at 09:59:30, Ready since 09:59:55 (or
  // crash-looping).
  void putPod(const std::string& name, const std::string& node, const std::string& revision,
              bool crashLoops = false) {
    Json status = {{"phase", "Running"},
                   {"conditions",
                    {{{"type", "Ready"},
                      {"status", crashLoops ? "False" : "True"},
                      {"lastTransitionTime", "2024-05-01T09:59:55Z"}}}}};
    if (crashLoops) {
      status["containerStatuses"] = {
          {{"name", "csi-driver"},
           {"state",
            {{"waiting", {{"reason", "CrashLoopBackOff"}, {"message", "back-off 10s"}}}}}}};
    }
    api_.put(r::pods,
             {{"metadata",
               {{"name", name},
                {"namespace", dsNamespace()},
                {"creationTimestamp", "2024-05-01T09:59:30Z"},
                {"labels", {{api::kOwnerLabel, "demo"}, {"controller-revision-hash", revision}}},
                {"ownerReferences", {daemonSetOwner()}}}},
              {"spec", {{"nodeName", node}}},
              {"status", status}});
  }

  // The kubelet of `node` drops the driver and registers it again (the new plugin's registrar).
  void reregister(const std::string& node) {
    api_.put(r::csinodes, {{"metadata", {{"name", node}}}, {"spec", {{"drivers", Json::array()}}}});
    settle();
    api_.put(r::csinodes, csiNode(node));
    settle();
  }

  // One pass on settled caches (a rollout under way requeues itself; drain() would not end).
  ReconcileResult pass() {
    settle();
    const ReconcileResult result = reconcile("demo");
    settle();
    return result;
  }

  Json rollout() const {
    const Json* dd = api_.find(r::driverdeployments, "", "demo");
    return dd == nullptr ? Json::object()
                         : dd->value("status", Json::object())
                               .value("rollout", Json::object())
                               .value("node", Json::object());
  }

  bool podExists(const std::string& name) const {
    return api_.find(r::pods, dsNamespace(), name) != nullptr;
  }

  void newImage() {
    editSpec([](Json& spec) { spec["driver"]["image"] = "example.com/driver:v2"; });
    drain();
    putRevision("r2", 2);
  }
};

TEST_F(VerifiedRolloutTest, TheCanaryGoesFirstAndTheRestFollowOnceTheDriverRegistersAgain) {
  convergeOnThreeNodes();
  newImage();
  EXPECT_EQ(pass().outcome, ReconcileResult::Outcome::Requeue) << "a rollout under way";
  EXPECT_FALSE(podExists("old-node-1")) << "the canary's plugin is replaced";
  EXPECT_TRUE(podExists("old-node-2"));
  EXPECT_TRUE(podExists("old-node-3"));
  EXPECT_EQ(rollout().value("phase", ""), "Canary") << rollout().dump();
  EXPECT_EQ(rollout()["canaries"], Json({"node-1"}));

  putPod("new-node-1", "node-1", "r2");
  pass();
  EXPECT_EQ(rollout().value("phase", ""), "Canary") << "not registered again yet";
  EXPECT_TRUE(podExists("old-node-2"));
  reregister("node-1");
  pass(); // the canary passes; no soak
  pass(); // the first batch: 25 % of 3 nodes, one
  EXPECT_TRUE(recorded("CanaryPassed"));
  EXPECT_TRUE(recorded("BatchStarted"));
  EXPECT_EQ(rollout().value("phase", ""), "Batch") << rollout().dump();
  EXPECT_FALSE(podExists("old-node-2"));
  EXPECT_TRUE(podExists("old-node-3")) << "one node per batch";
  EXPECT_EQ(condition("RolloutFailed"), "False NoFailure: no rollout gate failed");
}

TEST_F(VerifiedRolloutTest, ACanaryThatCrashLoopsIsRolledBackAndNoOtherNodeChanges) {
  convergeOnThreeNodes();
  const std::string uid2 = (*api_.find(r::pods, dsNamespace(), "old-node-2"))["metadata"]["uid"];
  newImage();
  pass();
  ASSERT_FALSE(podExists("old-node-1"));
  putPod("new-node-1", "node-1", "r2", /*crashLoops=*/true);
  pass(); // the PodReady gate fails: rolling back
  EXPECT_TRUE(recorded("RolloutFailed"));
  EXPECT_EQ(rollout().value("phase", ""), "RollingBack") << rollout().dump();
  EXPECT_EQ(rollout().value("failedGate", ""), "PodReady");
  pass(); // the DaemonSet gets revision r1's template back
  const Json& ds = *api_.findNamed(r::daemonsets, "demo-node");
  EXPECT_EQ(ds["spec"]["template"]["spec"]["containers"][0].value("image", ""),
            "example.com/driver:v1")
      << ds["spec"]["template"]["spec"]["containers"][0].dump();
  EXPECT_FALSE(ds["spec"]["template"].contains("$patch"));
  putRevision("r1", 3); // the DaemonSet controller makes r1 current again
  pass();
  EXPECT_FALSE(podExists("new-node-1")) << "the canary goes back";
  putPod("back-node-1", "node-1", "r1");
  pass();
  EXPECT_EQ(rollout().value("phase", ""), "RolledBack") << rollout().dump();
  EXPECT_TRUE(recorded("RolledBack"));
  EXPECT_EQ((*api_.find(r::pods, dsNamespace(), "old-node-2"))["metadata"]["uid"], uid2);
  EXPECT_TRUE(podExists("old-node-3"));
  EXPECT_EQ(condition("RolloutFailed")
                .rfind("True RolledBack: node plugin revision r2 failed gate "
                       "PodReady on node node-1",
                       0),
            0u)
      << condition("RolloutFailed");
  // The failed template is not tried again: the next passes keep r1's template on the DaemonSet.
  pass();
  EXPECT_EQ(
      (*api_.findNamed(r::daemonsets, "demo-node"))["spec"]["template"]["spec"]["containers"][0]
          .value("image", ""),
      "example.com/driver:v1");
}

// spec.rollout.smokeVolume: once the canary is Ready and registered, a claim and a pod pinned to
// it (the test the operator's image runs); the canary passes when the pod succeeds, and a failed
// stage rolls it back, named; no smoke object is left either way.
// spec.rollout.prePullImages: a node's plugin pod goes once a pre-pull pod on that node has the
// new revision's images (the test plays its kubelet).
// The controller Deployment of a verified DriverDeployment: the operator judges each new pod
// template from the Deployment's status and its pods, and puts the previous ReplicaSet's
// template back when a gate fails.
// A node whose plugin pod has been Ready past the grace period while its CSINode does not list the
// driver is named in the status with the reason and the registrar's own last log lines, read once
// a minute at most; it goes from the status and the metric once the driver registers.
TEST_F(VerifiedRolloutTest, ANodeThatDoesNotRegisterIsExplainedWithTheRegistrarsLog) {
  convergeOnThreeNodes();
  int logReads = 0;
  std::string logTarget;
  api_.intercept([&](const testing::Request& request) -> std::optional<testing::Reply> {
    if (request.method != "GET" || request.target.find("/log") == std::string::npos) {
      return std::nullopt;
    }
    ++logReads;
    logTarget = request.target;
    return testing::Reply{.body = "I1129 main.go:135] Version: v2.13.0\n"
                                  "I1129 main.go:164] Running node-driver-registrar in mode=\n"
                                  "I1129 node_register.go:56] Starting Registration Server at: "
                                  "/registration/demo-reg.sock\n"};
  });
  api_.put(r::csinodes,
           {{"metadata", {{"name", "node-2"}}}, {"spec", {{"drivers", Json::array()}}}});
  Json pod = *api_.find(r::pods, dsNamespace(), "old-node-2");
  pod["status"]["conditions"][0]["lastTransitionTime"] = "2024-05-01T09:50:00Z";
  api_.put(r::pods, pod);
  pass();
  const Json status = (*api_.find(r::driverdeployments, "", "demo"))["status"];
  ASSERT_TRUE(status["nodes"].contains("waiting")) << status.dump();
  ASSERT_EQ(status["nodes"]["waiting"].size(), 1U) << status.dump();
  const Json& waiting = status["nodes"]["waiting"][0];
  EXPECT_EQ(waiting["node"], "node-2");
  EXPECT_EQ(waiting["reason"], "NotRegistered");
  const std::string message = waiting["message"];
  EXPECT_NE(message.find("plugin pod old-node-2 has been Ready since 2024-05-01T09:50:00Z"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("the registrar's log ends: \"I1129 main.go:135] Version: v2.13.0\" / "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Starting Registration Server at: /registration/demo-reg.sock\""),
            std::string::npos)
      << message;
  EXPECT_EQ(logTarget, "/api/v1/namespaces/" + dsNamespace() +
                           "/pods/old-node-2/log?container=node-driver-registrar&tailLines=6"
                           "&limitBytes=4096");
  bool degraded = false;
  for (const Json& c : status["conditions"]) {
    if (c["type"] == "Degraded") {
      degraded = c["status"] == "True" && c["reason"] == "RegistrationFailing";
    }
  }
  EXPECT_TRUE(degraded) << status.dump();
  EXPECT_EQ(reconciler_.unregisteredNodes().at("demo"),
            (std::map<std::string, std::int32_t>{{"NotRegistered", 1}}));

  // Another pass within the minute reads no log again, and writes nothing new.
  pass();
  EXPECT_EQ(logReads, 1);

  api_.put(r::csinodes, csiNode("node-2"));
  pass();
  const Json after = (*api_.find(r::driverdeployments, "", "demo"))["status"];
  EXPECT_FALSE(after["nodes"].contains("waiting")) << after.dump();
  EXPECT_TRUE(reconciler_.unregisteredNodes().at("demo").empty());
  EXPECT_EQ(logReads, 1);
}

class ControllerRolloutTest : public VerifiedRolloutTest {
protected:
  Json deployment() const {
    const Json* d = api_.findNamed(r::deployments, "demo-controller");
    return d == nullptr ? Json::object() : *d;
  }

  // The Deployment controller: its current template as ReplicaSet demo-controller-<hash>, its
  // one replica a pod of that hash (created at 10:00, crash-looping or available), its status at
  // the Deployment's generation.
  void deploymentRunsAs(const std::string& hash, bool crashLoops = false) {
    Json d = deployment();
    const std::string ns = d["metadata"]["namespace"];
    Json tmpl = d["spec"]["template"];
    tmpl["metadata"]["labels"]["pod-template-hash"] = hash;
    api_.put(r::replicasets, {{"metadata",
                               {{"name", "demo-controller-" + hash},
                                {"namespace", ns},
                                {"labels", tmpl["metadata"]["labels"]}}},
                              {"spec", {{"template", tmpl}}}});
    for (const Json& pod : api_.all(r::pods)) {
      const std::string name = pod["metadata"]["name"];
      if (name.rfind("demo-controller-", 0) == 0) {
        api_.erase(r::pods, ns, name);
      }
    }
    Json status = {{"phase", "Running"},
                   {"conditions",
                    {{{"type", "Ready"},
                      {"status", crashLoops ? "False" : "True"},
                      {"lastTransitionTime", "2024-05-01T10:00:05Z"}}}}};
    if (crashLoops) {
      status["containerStatuses"] = {
          {{"name", "csi-driver"},
           {"state",
            {{"waiting", {{"reason", "CrashLoopBackOff"}, {"message", "back-off 10s"}}}}}}};
    }
    api_.put(r::pods, {{"metadata",
                        {{"name", "demo-controller-" + hash + "-x"},
                         {"namespace", ns},
                         {"creationTimestamp", "2024-05-01T10:00:00Z"},
                         {"labels", tmpl["metadata"]["labels"]}}},
                       {"status", status}});
    d["status"] = {{"observedGeneration", d["metadata"].value("generation", 1)},
                   {"replicas", 1},
                   {"updatedReplicas", 1},
                   {"availableReplicas", crashLoops ? 0 : 1}};
    api_.put(r::deployments, std::move(d));
  }

  Json controllerRollout() const {
    const Json* dd = api_.find(r::driverdeployments, "", "demo");
    return dd == nullptr ? Json::object()
                         : dd->value("status", Json::object())
                               .value("rollout", Json::object())
                               .value("controller", Json::object());
  }

  static std::string driverArgs(const Json& workload) {
    for (const Json& c : workload["spec"]["template"]["spec"]["containers"]) {
      if (c["name"] == "csi-driver") {
        return c.value("args", Json::array()).dump();
      }
    }
    return "";
  }
};

TEST_F(ControllerRolloutTest, ACrashLoopingControllerGetsThePreviousReplicaSetsTemplateBack) {
  convergeOnThreeNodes();
  editSpec([](Json& spec) { spec["controller"] = Json::object(); });
  pass(); // the Deployment is created: its first template is not gated
  ASSERT_TRUE(deployment().contains("spec"));
  deploymentRunsAs("h1");
  pass();
  EXPECT_EQ(controllerRollout().value("phase", ""), "Complete") << controllerRollout().dump();
  EXPECT_EQ(controllerRollout().value("revision", ""), "h1");
  const std::string goodArgs = driverArgs(deployment());

  editSpec([](Json& spec) { spec["controller"]["driver"]["args"] = {"--no-such-flag"}; });
  pass();
  EXPECT_EQ(controllerRollout().value("phase", ""), "Canary") << controllerRollout().dump();
  EXPECT_EQ(driverArgs(deployment()), R"(["--no-such-flag"])");
  EXPECT_TRUE(recorded("RolloutStarted"));

  deploymentRunsAs("h2", true);
  pass();
  EXPECT_EQ(controllerRollout().value("phase", ""), "RollingBack") << controllerRollout().dump();
  EXPECT_EQ(controllerRollout().value("failedGate", ""), "Available");
  EXPECT_EQ(controllerRollout().value("from", ""), "h1");
  EXPECT_TRUE(recorded("RolloutFailed"));
  pass(); // the next pass applies the template of ReplicaSet demo-controller-h1
  EXPECT_EQ(driverArgs(deployment()), goodArgs) << "the previous template is back";
  EXPECT_FALSE(
      deployment()["spec"]["template"]["metadata"]["labels"].contains("pod-template-hash"));
  EXPECT_EQ(condition("RolloutFailed")
                .rfind("True RollingBack: the controller's new pod template "
                       "failed gate Available: the new controller pod ",
                       0),
            0u)
      << condition("RolloutFailed");

  deploymentRunsAs("h1");
  pass();
  EXPECT_EQ(controllerRollout().value("phase", ""), "RolledBack") << controllerRollout().dump();
  EXPECT_TRUE(recorded("RolledBack"));
  pass();
  EXPECT_EQ(driverArgs(deployment()), goodArgs) << "the failed template is not tried again";
  EXPECT_EQ(controllerRollout()["gates"], Json({"Available"}));
}

class PrePullTest : public VerifiedRolloutTest {
protected:
  void convergeWithPrePulls() {
    convergeOnThreeNodes();
    editSpec([](Json& spec) { spec["rollout"]["prePullImages"] = true; });
    drain();
  }

  const Json* prePull(const std::string& node) const {
    return api_.find(r::pods, dsNamespace(), prePullName("demo", node, "r2"));
  }

  // The kubelet of the pre-pull pod's node: every container's image pulled and its command not
  // found (StartError), or the first image refused with `reason`.
  void kubelet(const std::string& node, const std::string& reason = "") {
    Json pod = *prePull(node);
    Json statuses = Json::array();
    for (const Json& c : pod["spec"]["containers"]) {
      Json state = {{"terminated", {{"reason", "StartError"}, {"exitCode", 128}}}};
      if (!reason.empty() && statuses.empty()) {
        state = {{"waiting", {{"reason", reason}, {"message", "no such image"}}}};
      }
      statuses.push_back({{"name", c["name"]}, {"image", c["image"]}, {"state", state}});
    }
    pod["status"] = {{"phase", reason.empty() ? "Failed" : "Pending"},
                     {"containerStatuses", statuses}};
    api_.put(r::pods, std::move(pod));
  }

  std::string waitingReason(const std::string& node) const {
    const Json* dd = api_.find(r::driverdeployments, "", "demo");
    for (const Json& w : (*dd)["status"]["nodes"].value("waiting", Json::array())) {
      if (w.value("node", "") == node) {
        return w.value("reason", "") + ": " + w.value("message", "");
      }
    }
    return "";
  }
};

TEST_F(PrePullTest, TheCanarysPluginGoesOnceTheNewImagesAreOnItsNode) {
  convergeWithPrePulls();
  newImage();
  pass();
  ASSERT_NE(prePull("node-1"), nullptr) << "a pre-pull pod on the canary";
  EXPECT_EQ(prePull("node-2"), nullptr) << "only where a plugin is about to go";
  EXPECT_TRUE(podExists("old-node-1")) << "the old plugin stays while the images are pulled";
  EXPECT_EQ(waitingReason("node-1").rfind("PullingImages: ", 0), 0u) << waitingReason("node-1");
  const Json& spec = (*prePull("node-1"))["spec"];
  EXPECT_EQ(spec["containers"][0]["image"], "example.com/driver:v2");
  EXPECT_EQ(spec["containers"][0]["command"], Json({"/csi-operator-pre-pull-only"}));
  kubelet("node-1");
  pass();
  EXPECT_FALSE(podExists("old-node-1")) << "pulled: the canary's plugin is replaced";
  EXPECT_EQ(prePull("node-1"), nullptr) << "read, then deleted";
  EXPECT_EQ(rollout().value("phase", ""), "Canary") << rollout().dump();
}

TEST_F(PrePullTest, AnImageThatCannotBePulledFailsTheGateAndTheOldPluginStays) {
  convergeWithPrePulls();
  newImage();
  pass();
  ASSERT_NE(prePull("node-1"), nullptr);
  kubelet("node-1", "InvalidImageName");
  pass();
  EXPECT_TRUE(podExists("old-node-1"));
  EXPECT_EQ(rollout().value("failedGate", ""), "ImagesPulled") << rollout().dump();
  EXPECT_EQ(rollout().value("failedNode", ""), "node-1");
  EXPECT_NE(rollout().value("message", "").find("InvalidImageName: no such image"),
            std::string::npos)
      << rollout().dump();
  EXPECT_TRUE(recorded("RolloutFailed"));
  pass();
  EXPECT_EQ(prePull("node-1"), nullptr) << "no pre-pull pod is left";
  EXPECT_TRUE(podExists("old-node-2"));
  EXPECT_TRUE(podExists("old-node-3"));
}

TEST_F(PrePullTest, WhenVolumesUnusedReplacesANodesPluginOnceItsImagesArePulled) {
  convergeOnThreeNodes();
  editSpec([](Json& spec) {
    spec["rollout"] = {{"prePullImages", true}};
    spec["node"]["updateStrategy"] = {{"type", "WhenVolumesUnused"}};
  });
  drain();
  newImage();
  pass();
  ASSERT_NE(prePull("node-1"), nullptr);
  EXPECT_TRUE(podExists("old-node-1"));
  EXPECT_EQ(waitingReason("node-1").rfind("PullingImages: ", 0), 0u) << waitingReason("node-1");
  kubelet("node-1");
  pass();
  EXPECT_FALSE(podExists("old-node-1"));
  EXPECT_EQ(prePull("node-1"), nullptr);
  // Another node whose image cannot be pulled keeps its plugin, and says why.
  putPod("new-node-1", "node-1", "r2");
  pass();
  ASSERT_NE(prePull("node-2"), nullptr);
  kubelet("node-2", "InvalidImageName");
  pass();
  EXPECT_TRUE(podExists("old-node-2"));
  EXPECT_EQ(waitingReason("node-2"),
            "ImagePullFailed: the new images are not on the node, so its plugin stays: image "
            "example.com/driver:v2: InvalidImageName: no such image");
  pass();
  EXPECT_NE(prePull("node-2"), nullptr) << "kept while it says why";
}

class SmokeVolumeTest : public VerifiedRolloutTest {
protected:
  void SetUp() override {
    VerifiedRolloutTest::SetUp();
    reconciler_.setSmokeImage("ghcr.io/csiop/csi-operator:test", "IfNotPresent");
  }

  void withSmokeVolume() {
    editSpec([](Json& spec) { spec["rollout"]["smokeVolume"] = {{"storageClassName", "fast"}}; });
  }

  // The canary node-1 runs r2, Ready and registered again.
  void canaryReady() {
    withSmokeVolume();
    drain();
    ASSERT_EQ(rollout().value("phase", ""), "Complete")
        << api_.find(r::driverdeployments, "", "demo")->dump();
    newImage();
    pass();
    ASSERT_FALSE(podExists("old-node-1"));
    putPod("new-node-1", "node-1", "r2");
    reregister("node-1");
    pass();
  }

  std::vector<Json> smokeObjects(const kube::ResourceRef& ref) const {
    std::vector<Json> out;
    for (const Json& o : api_.all(ref)) {
      if (o["metadata"].value("labels", Json::object()).value(kSmokeLabel, "") == "demo") {
        out.push_back(o);
      }
    }
    return out;
  }

  // The kubelet ran the smoke pod to its end.
  void smokePodEnded(const std::string& phase, const std::string& message) {
    const auto pods = smokeObjects(r::pods);
    ASSERT_EQ(pods.size(), 1u);
    Json pod = pods[0];
    const Json terminated = {{"exitCode", phase == "Succeeded" ? 0 : 1}, {"message", message}};
    const Json container = {{"name", "smoke"}, {"state", {{"terminated", terminated}}}};
    pod["status"] = {{"phase", phase}, {"containerStatuses", Json::array({container})}};
    api_.put(r::pods, pod);
  }
};

TEST_F(SmokeVolumeTest, ACanaryPassesOnceItsSmokeVolumeWasWrittenAndReadBack) {
  convergeOnThreeNodes();
  canaryReady();
  EXPECT_EQ(rollout().value("phase", ""), "Canary") << "waiting for the smoke volume";
  const auto claims = smokeObjects(r::persistentvolumeclaims);
  const auto pods = smokeObjects(r::pods);
  ASSERT_EQ(claims.size(), 1u);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(claims[0]["spec"]["storageClassName"], "fast");
  EXPECT_EQ(pods[0]["spec"]["containers"][0]["image"], "ghcr.io/csiop/csi-operator:test");
  EXPECT_EQ(
      pods[0]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
          ["nodeSelectorTerms"][0]["matchFields"][0]["values"],
      Json({"node-1"}));
  EXPECT_TRUE(recorded("SmokeVolumeStarted"));
  EXPECT_TRUE(podExists("old-node-2")) << "no other node changes meanwhile";
  pass();
  EXPECT_EQ(smokeObjects(r::pods).size(), 1u) << "one test per canary and revision";

  smokePodEnded("Succeeded", "ok");
  pass(); // the canary passes: its smoke objects go
  EXPECT_TRUE(recorded("CanaryPassed"));
  EXPECT_TRUE(smokeObjects(r::pods).empty());
  EXPECT_TRUE(smokeObjects(r::persistentvolumeclaims).empty());
  EXPECT_EQ(rollout()["gates"], Json({"PodReady", "Registered", "SmokeVolume"}));
}

TEST_F(SmokeVolumeTest, AFailedStageRollsTheCanaryBackNamingTheStage) {
  convergeOnThreeNodes();
  canaryReady();
  smokePodEnded("Failed", "Read: read back 3 bytes, not 24");
  pass();
  EXPECT_EQ(rollout().value("failedGate", ""), "SmokeVolume") << rollout().dump();
  EXPECT_EQ(rollout().value("failedNode", ""), "node-1");
  EXPECT_EQ(rollout().value("message", ""), "Read: read back 3 bytes, not 24");
  EXPECT_TRUE(smokeObjects(r::pods).empty());
  EXPECT_TRUE(smokeObjects(r::persistentvolumeclaims).empty());
  EXPECT_TRUE(podExists("old-node-2"));
}

TEST_F(SmokeVolumeTest, WithoutASmokeVolumeTheStatusSaysWhichGatesRan) {
  convergeOnThreeNodes();
  EXPECT_EQ(rollout()["gates"], Json({"PodReady", "Registered"}));
}

} // namespace
} // namespace csiop::driverdeployment
