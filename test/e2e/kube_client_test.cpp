// The operator's Kubernetes client (operator/kube) against the real API server of the e2e
// cluster: every verb, the typed errors the server really sends, server-side apply semantics,
// the status subresource of the DriverDeployment CRD, discovery, watches (order, bookmarks,
// 410 Gone, cancellation), TLS verification and connection reuse.
//
// Each test works in its own namespace (deleted afterwards) and drives the client from a
// single-threaded io_context, as the operator does.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <random>
#include <set>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <csiop/kube/client.hpp>

#include "harness.hpp"

namespace csiop::e2e {
namespace {

namespace asio = boost::asio;
using kube::ApiError;
using kube::TransportError;
using kube::WatchEventType;
namespace r = kube::resources;

std::string randomSuffix() {
  static std::mt19937 rng(std::random_device{}());
  static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  for (int i = 0; i < 6; ++i)
    out += alphabet[rng() % (sizeof alphabet - 1)];
  return out;
}

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string rvOf(const Json& object) {
  return object.value("metadata", Json::object()).value("resourceVersion", "");
}

// data as JSON text: braced Json lists inside a co_await do not compile with GCC 12.
Json configMap(const std::string& ns, const std::string& name, std::string_view data) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"e2e", "kube"}}}}},
          {"data", Json::parse(data)}};
}

class ScopeExit {
public:
  explicit ScopeExit(std::function<void()> f) : f_(std::move(f)) {}
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;
  ~ScopeExit() { f_(); }

private:
  std::function<void()> f_;
};

struct Call {
  std::string verb;
  std::string resource;
  int code;
};

// Lower-case suite name: `ctest -R kube` selects these tests.
class kubeClient : public ::testing::Test {
protected:
  void SetUp() override {
    config_ = kube::loadKubeconfig(cluster().kubeconfig);
    client_ = makeClient(config_);
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    ns_ = lower("kube-" + std::string(info->name())).substr(0, 40) + "-" + randomSuffix();
    Json nsObject = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}};
    run(client_->create(r::namespaces, std::move(nsObject)));
    calls_.clear();
  }

  void TearDown() override {
    try {
      run(client_->remove(r::namespaces, "", ns_,
                          {.propagationPolicy = kube::Propagation::Background}));
    } catch (const ApiError& e) {
      if (!e.isNotFound())
        ADD_FAILURE() << "deleting namespace " << ns_ << ": " << e.what();
    }
  }

  std::unique_ptr<kube::Client> makeClient(const kube::Config& config) {
    kube::ClientOptions options;
    options.observer = [this](std::string_view verb, std::string_view resource, int code,
                              std::chrono::nanoseconds) {
      calls_.push_back({std::string(verb), std::string(resource), code});
    };
    return std::make_unique<kube::Client>(io_.get_executor(), config, std::move(options));
  }

  // Runs one coroutine on the test's io_context until it is done.
  template <class T> T run(asio::awaitable<T> task) {
    auto future = asio::co_spawn(io_, std::move(task), asio::use_future);
    io_.restart();
    io_.run();
    return future.get();
  }

  asio::awaitable<void> sleep(std::chrono::milliseconds d) {
    asio::steady_timer timer(io_, d);
    co_await timer.async_wait(asio::use_awaitable);
  }

  int count(std::string_view verb) const {
    return static_cast<int>(
        std::count_if(calls_.begin(), calls_.end(), [&](const Call& c) { return c.verb == verb; }));
  }

  asio::io_context io_;
  kube::Config config_;
  std::unique_ptr<kube::Client> client_;
  std::string ns_;
  std::vector<Call> calls_;
};

// ---------------------------------------------------------------------------------------------

TEST_F(kubeClient, VersionIsThePinnedKubernetes) {
  const kube::VersionInfo v = run(client_->version());
  EXPECT_EQ(v.major, "1");
  EXPECT_FALSE(v.minor.empty());
  if (!cluster().external) {
    const auto pinned = readEnvFile(sourceDir() / "test/cluster/versions.env");
    EXPECT_EQ(v.gitVersion, pinned.at("K8S_VERSION"));
  }
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].verb, "version");
  EXPECT_EQ(calls_[0].code, 200);
}

TEST_F(kubeClient, ConfigMapCreateGetListApplyPatchUpdateDelete) {
  run([&]() -> asio::awaitable<void> {
    Json created = co_await client_->create(r::configmaps, configMap(ns_, "cm", R"({"a":"1"})"));
    EXPECT_EQ(created["metadata"]["namespace"], ns_);
    EXPECT_FALSE(rvOf(created).empty());

    Json got = co_await client_->get(r::configmaps, ns_, "cm");
    EXPECT_EQ(got["data"]["a"], "1");
    EXPECT_EQ(got["metadata"]["uid"], created["metadata"]["uid"]);

    Json other = configMap(ns_, "other", R"({"b":"2"})");
    other["metadata"]["labels"]["e2e"] = "other";
    co_await client_->create(r::configmaps, std::move(other));
    const kube::ListResult list =
        co_await client_->list(r::configmaps, ns_, {.labelSelector = "e2e in (kube)"});
    EXPECT_FALSE(list.resourceVersion.empty());
    EXPECT_TRUE(list.continueToken.empty());
    EXPECT_EQ(list.items.size(), 1u); // (no ASSERT_* in coroutines: they `return`)
    if (!list.items.empty()) {
      EXPECT_EQ(list.items[0]["metadata"]["name"], "cm");
      EXPECT_EQ(list.items[0]["kind"], "ConfigMap");
    }
    const auto byField =
        co_await client_->list(r::configmaps, ns_, {.fieldSelector = "metadata.name=other"});
    EXPECT_EQ(byField.items.size(), 1u);

    // Server-side apply takes over "a" (force) and adds "c".
    Json applied =
        co_await client_->apply(r::configmaps, configMap(ns_, "cm", R"({"a":"x","c":"3"})"));
    EXPECT_EQ(applied["data"], Json({{"a", "x"}, {"c", "3"}}));
    bool managed = false;
    for (const Json& entry : applied["metadata"]["managedFields"])
      managed |=
          entry.value("manager", "") == "csi-operator" && entry.value("operation", "") == "Apply";
    EXPECT_TRUE(managed) << applied["metadata"]["managedFields"].dump();

    Json patch = {{"data", {{"d", "4"}}}};
    Json patched =
        co_await client_->patch(r::configmaps, ns_, "cm", kube::PatchType::Merge, std::move(patch));
    EXPECT_EQ(patched["data"]["d"], "4");
    Json jsonPatch = Json::parse(R"([{"op":"remove","path":"/data/d"}])");
    patched = co_await client_->patch(r::configmaps, ns_, "cm", kube::PatchType::JsonPatch,
                                      std::move(jsonPatch));
    EXPECT_FALSE(patched["data"].contains("d"));
    Json strategic = {{"metadata", {{"labels", {{"s", "y"}}}}}};
    patched = co_await client_->patch(r::configmaps, ns_, "cm", kube::PatchType::StrategicMerge,
                                      std::move(strategic));
    EXPECT_EQ(patched["metadata"]["labels"]["s"], "y");

    patched["data"]["e"] = "5";
    Json updated = co_await client_->update(r::configmaps, patched);
    EXPECT_EQ(updated["data"]["e"], "5");
    EXPECT_NE(rvOf(updated), rvOf(patched));

    // dryRun: validated and answered, not stored.
    co_await client_->create(r::configmaps, configMap(ns_, "dry", "{}"), {.dryRun = true});
    bool dryStored = true;
    try {
      co_await client_->get(r::configmaps, ns_, "dry");
    } catch (const ApiError& e) {
      dryStored = !e.isNotFound();
    }
    EXPECT_FALSE(dryStored);

    co_await client_->remove(r::configmaps, ns_, "cm");
    bool gone = false;
    try {
      co_await client_->get(r::configmaps, ns_, "cm");
    } catch (const ApiError& e) {
      gone = e.isNotFound();
    }
    EXPECT_TRUE(gone);
  }());
  for (const char* verb : {"create", "get", "list", "apply", "patch", "update", "delete"})
    EXPECT_GT(count(verb), 0) << verb;
}

TEST_F(kubeClient, ApplyingTheSameObjectTwiceIsANoOp) {
  run([&]() -> asio::awaitable<void> {
    const Json desired = configMap(ns_, "ssa", R"({"k":"v"})");
    const Json first = co_await client_->apply(r::configmaps, desired);
    const Json second = co_await client_->apply(r::configmaps, desired);
    EXPECT_EQ(rvOf(first), rvOf(second)) << "the second apply wrote";
    const Json dry = co_await client_->apply(r::configmaps, configMap(ns_, "ssa", R"({"k":"w"})"),
                                             {.dryRun = true});
    EXPECT_EQ(dry["data"]["k"], "w");
    const Json third =
        co_await client_->apply(r::configmaps, configMap(ns_, "ssa", R"({"k":"w"})"));
    EXPECT_NE(rvOf(third), rvOf(second));
    EXPECT_EQ((co_await client_->get(r::configmaps, ns_, "ssa"))["data"]["k"], "w");
  }());
}

TEST_F(kubeClient, PaginationWithLimitOne) {
  run([&]() -> asio::awaitable<void> {
    for (int i = 0; i < 5; ++i)
      co_await client_->create(r::configmaps,
                               configMap(ns_, "page-" + std::to_string(i), R"({"i":"x"})"));
    // (label selector: the namespace also holds kube-root-ca.crt, from the controller manager)
    const kube::ListResult first =
        co_await client_->list(r::configmaps, ns_, {.labelSelector = "e2e=kube", .limit = 1});
    EXPECT_EQ(first.items.size(), 1u);
    EXPECT_FALSE(first.continueToken.empty());
    EXPECT_FALSE(first.remainingItemCount); // not computed for filtered lists
    const kube::ListResult second = co_await client_->list(
        r::configmaps, ns_,
        {.labelSelector = "e2e=kube", .limit = 1, .continueToken = first.continueToken});
    EXPECT_EQ(second.items.size(), 1u);
    if (!second.items.empty() && !first.items.empty()) {
      EXPECT_NE(second.items[0]["metadata"]["name"], first.items[0]["metadata"]["name"]);
    }

    calls_.clear();
    const kube::ListResult all =
        co_await client_->listAll(r::configmaps, ns_, {.labelSelector = "e2e=kube", .limit = 1});
    std::set<std::string> names;
    for (const Json& item : all.items)
      names.insert(item["metadata"]["name"].get<std::string>());
    EXPECT_EQ(names, (std::set<std::string>{"page-0", "page-1", "page-2", "page-3", "page-4"}));
    EXPECT_EQ(all.items.size(), 5u);
    EXPECT_FALSE(all.resourceVersion.empty());
    EXPECT_EQ(count("list"), 5); // one page per object
  }());
}

TEST_F(kubeClient, TypedErrors) {
  run([&]() -> asio::awaitable<void> {
    // 404
    try {
      co_await client_->get(r::configmaps, ns_, "missing");
      ADD_FAILURE() << "no error";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.code(), 404);
      EXPECT_TRUE(e.isNotFound()) << e.what();
      EXPECT_EQ(e.status().details.name, "missing");
      EXPECT_EQ(e.status().details.kind, "configmaps");
    }
    // 409 AlreadyExists
    const Json cm = co_await client_->create(r::configmaps, configMap(ns_, "dup", R"({"a":"1"})"));
    try {
      co_await client_->create(r::configmaps, configMap(ns_, "dup", R"({"a":"1"})"));
      ADD_FAILURE() << "no error";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.code(), 409);
      EXPECT_TRUE(e.isAlreadyExists()) << e.what();
      EXPECT_FALSE(e.isConflict());
    }
    // 409 Conflict: an update with a stale resourceVersion.
    Json fresh = cm;
    fresh["data"]["a"] = "2";
    co_await client_->update(r::configmaps, fresh);
    Json stale = cm;
    stale["data"]["a"] = "3";
    try {
      co_await client_->update(r::configmaps, stale);
      ADD_FAILURE() << "no error";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.code(), 409);
      EXPECT_TRUE(e.isConflict()) << e.what();
      EXPECT_FALSE(e.isAlreadyExists());
    }
    // 422 Invalid, with the causes.
    try {
      co_await client_->create(r::configmaps, configMap(ns_, "Not_A_Name", R"({"bad/key":"x"})"));
      ADD_FAILURE() << "no error";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.code(), 422);
      EXPECT_TRUE(e.isInvalid()) << e.what();
      std::set<std::string> fields;
      for (const auto& cause : e.causes())
        fields.insert(cause.field);
      EXPECT_TRUE(fields.count("metadata.name")) << e.what();
      EXPECT_TRUE(fields.count("data[bad/key]")) << e.what();
    }
  }());
}

TEST_F(kubeClient, DeletePreconditionsMismatchIsAConflict) {
  run([&]() -> asio::awaitable<void> {
    const Json cm = co_await client_->create(r::configmaps, configMap(ns_, "pre", R"({"a":"1"})"));
    const std::string uid = cm["metadata"]["uid"];
    try {
      co_await client_->remove(r::configmaps, ns_, "pre", {.preconditionUid = "not-" + uid});
      ADD_FAILURE() << "deleted despite a wrong uid";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.code(), 409);
      EXPECT_TRUE(e.isConflict()) << e.what();
    }
    Json changed = cm;
    changed["data"]["a"] = "2";
    co_await client_->update(r::configmaps, changed);
    try {
      co_await client_->remove(r::configmaps, ns_, "pre",
                               {.preconditionResourceVersion = rvOf(cm)});
      ADD_FAILURE() << "deleted despite a stale resourceVersion";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.code(), 409);
      EXPECT_TRUE(e.isConflict()) << e.what();
    }
    co_await client_->remove(r::configmaps, ns_, "pre", {.preconditionUid = uid});
    try {
      co_await client_->remove(r::configmaps, ns_, "pre");
      ADD_FAILURE() << "deleted twice";
    } catch (const ApiError& e) {
      EXPECT_TRUE(e.isNotFound()) << e.what();
    }
  }());
}

TEST_F(kubeClient, ServiceAccountTokenWithoutRbacIsForbidden) {
  Json sa = {{"apiVersion", "v1"},
             {"kind", "ServiceAccount"},
             {"metadata", {{"name", "nobody"}, {"namespace", ns_}}}};
  run(client_->create(r::serviceaccounts, std::move(sa)));
  const RunResult token = kubectl({"create", "token", "nobody", "-n", ns_, "--duration=10m"});
  ASSERT_TRUE(token.ok()) << token;
  kube::Config saConfig;
  saConfig.server = config_.server;
  saConfig.caPem = config_.caPem; // the cluster CA, no client certificate
  saConfig.token = token.out.substr(0, token.out.find_last_not_of("\n") + 1);
  auto saClient = makeClient(saConfig);
  const std::string user = "system:serviceaccount:" + ns_ + ":nobody";
  try {
    run(saClient->list(r::configmaps, ns_));
    FAIL() << "listing without RBAC succeeded";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 403);
    EXPECT_TRUE(e.isForbidden()) << e.what();
    // Authenticated as the service account (not 401), refused by RBAC.
    EXPECT_NE(e.status().message.find(user), std::string::npos) << e.what();
  }
  try {
    run([&]() -> asio::awaitable<void> { co_await saClient->watch(r::configmaps, ns_); }());
    FAIL() << "watching without RBAC succeeded";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isForbidden()) << e.what();
  }
  kube::Config bad = saConfig;
  bad.token = "not-a-token";
  auto badClient = makeClient(bad);
  try {
    run(badClient->list(r::configmaps, ns_));
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isUnauthorized()) << e.what();
  }
}

TEST_F(kubeClient, DriverDeploymentStatusSubresource) {
  applyCrds();
  const std::string name = "kube-e2e-" + randomSuffix();
  Json dd = {{"apiVersion", "csiop.dev/v1alpha1"},
             {"kind", "DriverDeployment"},
             {"metadata", {{"name", name}}},
             {"spec", {{"driverName", name + ".example.com"}, {"driver", {{"image", "x"}}}}}};
  run([&]() -> asio::awaitable<void> {
    Json created = co_await client_->create(r::driverdeployments, dd);
    EXPECT_FALSE(created.contains("status") && created["status"].contains("observedGeneration"));

    Json withStatus = created;
    withStatus["status"] = {{"observedGeneration", 1}};
    Json updated =
        co_await client_->update(r::driverdeployments, withStatus, {.subresource = "status"});
    EXPECT_EQ(updated["status"]["observedGeneration"], 1);
    EXPECT_EQ(updated["metadata"]["generation"], 1); // status writes do not bump generation

    // Through the main resource, status is ignored; spec changes bump the generation.
    Json viaMain = updated;
    viaMain["status"]["observedGeneration"] = 99;
    viaMain["spec"]["driver"]["image"] = "y";
    Json main = co_await client_->update(r::driverdeployments, viaMain);
    EXPECT_EQ(main["status"]["observedGeneration"], 1);
    EXPECT_EQ(main["metadata"]["generation"], 2);

    // Server-side apply of the status subresource.
    Json statusApply = {{"apiVersion", "csiop.dev/v1alpha1"},
                        {"kind", "DriverDeployment"},
                        {"metadata", {{"name", name}}},
                        {"status", {{"observedGeneration", 2}}}};
    Json applied = co_await client_->apply(r::driverdeployments, std::move(statusApply),
                                           {.subresource = "status"});
    EXPECT_EQ(applied["status"]["observedGeneration"], 2);
    const Json got =
        co_await client_->get(r::driverdeployments, "", name, {.subresource = "status"});
    EXPECT_EQ(got["status"]["observedGeneration"], 2);
    EXPECT_EQ(got["spec"]["driver"]["image"], "y");

    co_await client_->remove(r::driverdeployments, "", name);
  }());
}

TEST_F(kubeClient, Discovery) {
  run([&]() -> asio::awaitable<void> {
    EXPECT_TRUE(co_await client_->serves("storage.k8s.io", "v1", "csidrivers"));
    EXPECT_TRUE(co_await client_->serves("storage.k8s.io", "v1", "csinodes"));
    EXPECT_FALSE(co_await client_->serves("storage.k8s.io", "v1", "nosuchthings"));
    EXPECT_FALSE(co_await client_->serves("bogus.example.com", "v1", "things"));
    EXPECT_FALSE(co_await client_->discovery("bogus.example.com", "v1"));
    EXPECT_FALSE(co_await client_->serves("csi.storage.k8s.io", "v1alpha1", "csidrivers"));
    const auto core = co_await client_->discovery("", "v1");
    EXPECT_TRUE(core);
    if (core) {
      EXPECT_EQ(core->groupVersion, "v1");
      const kube::ApiResource* cm = core->find("configmaps");
      EXPECT_TRUE(cm && cm->namespaced && cm->kind == "ConfigMap");
      const kube::ApiResource* nodes = core->find("nodes");
      EXPECT_TRUE(nodes && !nodes->namespaced);
    }
    // Every predefined ref names a resource the server serves, with the right scope and kind.
    for (const kube::ResourceRef* ref : {&r::namespaces,
                                         &r::serviceaccounts,
                                         &r::configmaps,
                                         &r::secrets,
                                         &r::events,
                                         &r::nodes,
                                         &r::pods,
                                         &r::daemonsets,
                                         &r::deployments,
                                         &r::statefulsets,
                                         &r::replicasets,
                                         &r::clusterroles,
                                         &r::clusterrolebindings,
                                         &r::roles,
                                         &r::rolebindings,
                                         &r::csidrivers,
                                         &r::csinodes,
                                         &r::storageclasses,
                                         &r::customresourcedefinitions,
                                         &r::leases}) {
      const auto list = co_await client_->discovery(ref->group, ref->version);
      const kube::ApiResource* found = list ? list->find(ref->resource) : nullptr;
      EXPECT_TRUE(found) << ref->resource;
      if (found) {
        EXPECT_EQ(found->namespaced, ref->namespaced) << ref->resource;
        EXPECT_EQ(found->kind, ref->kind) << ref->resource;
      }
    }
  }());
  EXPECT_GT(count("discovery"), 20);
}

TEST_F(kubeClient, WatchSeesAddedModifiedDeletedInOrder) {
  std::vector<std::string> seen;
  std::string lastRv;
  run([&]() -> asio::awaitable<void> {
    const auto start = co_await client_->list(r::configmaps, ns_);
    kube::Watch w = co_await client_->watch(
        r::configmaps, ns_,
        {.resourceVersion = start.resourceVersion, .fieldSelector = "metadata.name=w"});
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          co_await client_->create(r::configmaps, configMap(ns_, "w", R"({"v":"1"})"));
          Json patch = {{"data", {{"v", "2"}}}};
          co_await client_->patch(r::configmaps, ns_, "w", kube::PatchType::Merge,
                                  std::move(patch));
          co_await client_->create(r::configmaps, configMap(ns_, "not-w", R"({"v":"1"})"));
          co_await client_->remove(r::configmaps, ns_, "w");
        },
        asio::detached);
    asio::steady_timer guard(io_, std::chrono::seconds(30));
    guard.async_wait([&](auto ec) {
      if (!ec)
        w.cancel();
    });
    while (auto event = co_await w.next()) {
      if (event->type == WatchEventType::Bookmark)
        continue;
      const Json& meta = event->object["metadata"];
      seen.push_back(std::string(kube::toString(event->type)) + " " + meta.value("name", "") +
                     " v=" + event->object["data"].value("v", ""));
      lastRv = rvOf(event->object);
      if (event->type == WatchEventType::Deleted)
        break;
    }
    guard.cancel();
    EXPECT_EQ(w.resourceVersion(), lastRv);
    w.cancel();
    EXPECT_FALSE(co_await w.next());
    EXPECT_EQ(w.end(), kube::WatchEnd::Cancelled);
  }());
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED w v=1", "MODIFIED w v=2", "DELETED w v=2"}));
}

TEST_F(kubeClient, WatchReceivesBookmarks) {
  // The API server sends a bookmark to watchers that allow them about every minute and,
  // for watches with a timeout, shortly (about 2 s) before the timeout ends the stream.
  // It only sends one whose resourceVersion is newer than the watch's, so a write the
  // selector does not match moves the configmaps watch cache forward first.
  const auto started = std::chrono::steady_clock::now();
  run([&]() -> asio::awaitable<void> {
    const auto start = co_await client_->list(r::configmaps, ns_);
    // Nothing matches the selector (kube-root-ca.crt may still appear in the namespace).
    kube::Watch w = co_await client_->watch(r::configmaps, ns_,
                                            {.resourceVersion = start.resourceVersion,
                                             .labelSelector = "e2e=nothing",
                                             .timeoutSeconds = 6});
    Json unmatched = configMap(ns_, "bookmark-bump", "{}");
    co_await client_->create(r::configmaps, std::move(unmatched));
    std::vector<std::string> bookmarks;
    while (auto event = co_await w.next()) {
      EXPECT_EQ(event->type, WatchEventType::Bookmark) << event->object.dump();
      bookmarks.push_back(rvOf(event->object));
    }
    EXPECT_EQ(w.end(), kube::WatchEnd::Closed); // the server ended it at timeoutSeconds
    EXPECT_FALSE(bookmarks.empty());
    if (!bookmarks.empty()) {
      EXPECT_FALSE(bookmarks.back().empty());
      EXPECT_EQ(w.resourceVersion(), bookmarks.back()); // tracked from bookmarks
    }
  }());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
}

TEST_F(kubeClient, WatchFromATooOldResourceVersionIsGone) {
  // How to get a resourceVersion that is reliably outside the watch window: the API server's
  // watch cache of a resource starts at the resourceVersion current when it was initialised,
  // and cannot serve watches from before that ("too old resource version", 410). Writing many
  // objects does not push the window out reliably: the cache's event buffer doubles (from 100
  // up to 102,400 events) as long as its oldest event is younger than 75 s, so evicting an RV
  // takes either >100k writes or a >75 s wait plus a refill. A CRD created now gets a fresh
  // watch cache, so any resourceVersion recorded before its creation is older than its window:
  // deterministic, and about 2 s.
  const Json before = run(client_->create(r::configmaps, configMap(ns_, "before", "{}")));
  const std::string oldRv = rvOf(before);

  const std::string group = "k" + randomSuffix() + ".kube-e2e.csiop.dev";
  const kube::ResourceRef widgets{group, "v1", "widgets", "Widget", false};
  Json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", "widgets." + group}}},
              {"spec",
               {{"group", group},
                {"scope", "Cluster"},
                {"names", {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}}},
                {"versions",
                 {{{"name", "v1"},
                   {"served", true},
                   {"storage", true},
                   {"schema",
                    {{"openAPIV3Schema",
                      {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}}}}};
  run(client_->create(r::customresourcedefinitions, std::move(crd)));
  const ScopeExit deleteCrd([&] {
    try {
      run(client_->remove(r::customresourcedefinitions, "", "widgets." + group));
    } catch (const std::exception& e) {
      ADD_FAILURE() << "deleting CRD widgets." << group << ": " << e.what();
    }
  });
  ASSERT_TRUE(waitFor("CRD widgets." + group + " served", 60s, [&](std::string& seenState) {
    const kube::ListResult list = run(client_->list(widgets, ""));
    seenState = "listed, rv " + list.resourceVersion;
    return true;
  }));

  run([&]() -> asio::awaitable<void> {
    kube::Watch w = co_await client_->watch(widgets, "", {.resourceVersion = oldRv});
    auto event = co_await w.next();
    EXPECT_TRUE(event && event->type == WatchEventType::Error);
    if (event) {
      EXPECT_TRUE(event->isExpired()) << event->object.dump();
      EXPECT_TRUE(event->error().isGone());
    }
    EXPECT_FALSE(co_await w.next());
    EXPECT_EQ(w.end(), kube::WatchEnd::Expired);
    EXPECT_TRUE(w.expired());
    EXPECT_EQ(w.resourceVersion(), oldRv); // nothing newer was seen: relist

    // The recovery a caller does: relist, then watch from the list's resourceVersion.
    const kube::ListResult list = co_await client_->list(widgets, "");
    kube::Watch again = co_await client_->watch(
        widgets, "", {.resourceVersion = list.resourceVersion, .timeoutSeconds = 1});
    while (auto e = co_await again.next())
      EXPECT_NE(e->type, WatchEventType::Error) << e->object.dump();
    EXPECT_EQ(again.end(), kube::WatchEnd::Closed);
  }());
}

TEST_F(kubeClient, CancellingAWatchEndsItPromptly) {
  const auto started = std::chrono::steady_clock::now();
  run([&]() -> asio::awaitable<void> {
    kube::Watch w = co_await client_->watch(r::configmaps, ns_);
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          co_await sleep(std::chrono::milliseconds(300));
          w.cancel(); // shutdown, or leadership lost
        },
        asio::detached);
    while (co_await w.next()) {
    }
    EXPECT_EQ(w.end(), kube::WatchEnd::Cancelled);
  }());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

TEST_F(kubeClient, FiftySequentialRequestsUseOneConnection) {
  run(client_->create(r::configmaps, configMap(ns_, "reuse", R"({"a":"1"})")));
  auto fresh = makeClient(config_);
  calls_.clear();
  run([&]() -> asio::awaitable<void> {
    for (int i = 0; i < 50; ++i)
      co_await fresh->get(r::configmaps, ns_, "reuse");
  }());
  const kube::HttpStats stats = fresh->http().stats();
  EXPECT_EQ(stats.requests, 50u);
  EXPECT_EQ(stats.connects, 1u);
  EXPECT_EQ(stats.reuses, 49u);
  EXPECT_EQ(stats.retries, 0u);
  EXPECT_EQ(count("get"), 50);
  EXPECT_TRUE(std::all_of(calls_.begin(), calls_.end(), [](const Call& c) {
    return c.code == 200 && c.resource == "configmaps";
  }));
}

TEST_F(kubeClient, TlsVerifiesTheApiServer) {
  // Wrong name: the serving certificate does not carry it.
  kube::Config wrongName = config_;
  wrongName.tlsServerName = "not-the-apiserver.example.com";
  auto a = makeClient(wrongName);
  try {
    run(a->version());
    FAIL() << "accepted a certificate for another name";
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::Tls);
    EXPECT_NE(std::string(e.what()).find("hostname mismatch"), std::string::npos) << e.what();
  }
  // Unknown CA: without the cluster CA the system trust store does not know it.
  kube::Config noCa = config_;
  noCa.caPem.clear();
  auto b = makeClient(noCa);
  try {
    run(b->version());
    FAIL() << "accepted a certificate from an unknown CA";
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::Tls);
  }
  // The name the kubeconfig server uses works; so does "localhost" (a SAN of the cluster).
  kube::Config byName = config_;
  byName.tlsServerName = "localhost";
  EXPECT_FALSE(run(makeClient(byName)->version()).gitVersion.empty());
}

} // namespace
} // namespace csiop::e2e
