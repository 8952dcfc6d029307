// Step 8: every child: the Namespace first (created if missing, never owned), then in two waves
// (decisions.hpp's applyWave: roles, the CSIDriver claimDriverName claimed, and the workloads
// if the ServiceAccounts went with the claim; then the bindings), the objects of a wave at the
// same time. A child is created when the caches do not have it, applied when it differs, and
// left alone when it is someone else's or marked unmanaged.
#include <csiop/controller/reconciler.hpp>

#include <map>

#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/controller/compare.hpp>
#include <csiop/controller/decisions.hpp>
#include <csiop/controller/field_ownership.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"
#include "requests.hpp"

namespace csiop::controller {

namespace asio = boost::asio;
using api::Json;
using api::metadataField;

asio::awaitable<StepResult> Reconciler::applyServiceAccounts(ReconcileRun& run) {
  std::vector<const Json*> accounts;
  for (const Json& desired : run.desired) {
    if (desired["kind"] != "ServiceAccount") {
      continue;
    }
    if (caches_.namespaces.get("", metadataField(desired, "namespace")) == nullptr) {
      co_return std::nullopt; // created with the Namespace first (applyChildren)
    }
    accounts.push_back(&desired);
  }
  co_await applyAtOnce(run, accounts);
  run.serviceAccountsApplied = true;
  co_return std::nullopt;
}

asio::awaitable<StepResult> Reconciler::applyChildren(ReconcileRun& run) {
  Observed& o = run.observed;
  std::map<int, std::vector<const Json*>> waves;
  for (const Json& desired : run.desired) {
    const std::string kind = desired["kind"];
    if (kind == "ServiceAccount" && run.serviceAccountsApplied) {
      continue;
    }
    if (kind == "CSIDriver") {
      if (run.applyCSIDriver) {
        waves[0].push_back(&desired); // claimed by claimDriverName, applied with the first wave
      }
      continue;
    }
    if (run.unservedKinds.contains(kind)) {
      continue; // checkPrerequisites reports it
    }
    if (kind != "Namespace") {
      waves[applyWave(kind, run.serviceAccountsApplied)].push_back(&desired);
      continue;
    }
    if (caches_.namespaces.get("", metadataField(desired, "name")) == nullptr) {
      auto created = co_await kube::attempt(client_.create(kube::resources::namespaces, desired));
      if (!created && !created.alreadyExists()) {
        o.applyErrors.push_back("Namespace " + metadataField(desired, "name") + ": " +
                                created.message());
      }
    }
  }
  for (const auto& [wave, members] : waves) {
    co_await applyAtOnce(run, members);
  }
  co_return std::nullopt;
}

asio::awaitable<void> Reconciler::applyAtOnce(ReconcileRun& run,
                                              const std::vector<const Json*>& members) {
  Observed& o = run.observed;
  std::vector<asio::awaitable<std::string>> applies;
  for (const Json* desired : members) {
    if (const Json* l = liveHead(*desired); l != nullptr && ownedBy(*l, run.uid) && !managed(*l)) {
      noteUnmanaged(*l, o);
      continue;
    }
    applies.push_back((*desired)["kind"] == "CSIDriver" ? applyCSIDriver(*desired)
                                                        : applyChild(*desired, run.uid));
  }
  for (std::string& error : co_await runtime::allOf(std::move(applies))) {
    if (!error.empty()) {
      o.applyErrors.push_back(std::move(error));
    }
  }
}

asio::awaitable<std::string> Reconciler::applyChild(const Json& desired, const std::string& uid) {
  const ObjectKey k = keyOf(desired);
  const kube::ResourceRef* ref = caches_.resourceOf(k.kind);
  if (ref == nullptr) {
    co_return k.str() + ": no resource for this kind";
  }
  const CachedChild* cached = cachedChild(desired);
  if (cached == nullptr) {
    co_return co_await createChild(*ref, desired, uid);
  }
  // Most passes end here: the child is as applied, or differs from it in status only.
  const bool owned = ownedBy(cached->head, uid);
  if (owned && applied_.unchangedSinceApplied(desired, *cached)) {
    co_return "";
  }
  const Json live = cached->whole(); // `cached` changes while this coroutine waits
  if (owned && contains(live, desired)) {
    applied_.verified(desired, *cached);
    co_return "";
  }
  co_return co_await updateChild(*ref, desired, live, uid);
}

asio::awaitable<std::string> Reconciler::createChild(const kube::ResourceRef& ref,
                                                     const Json& desired, const std::string& uid) {
  const ObjectKey k = keyOf(desired);
  auto created = co_await kube::attempt(client_.create(ref, desired));
  if (created) {
    applied_.remember(desired, *created);
    co_return "";
  }
  if (!created.alreadyExists()) {
    co_return k.str() + ": " + created.message();
  }
  // Not in the (owner-labelled) cache, yet it exists: just created and not seen yet, or someone
  // else's object of that name. Read it and go on as with a cached one.
  auto fetched = co_await kube::attempt(client_.get(ref, k.namespace_, k.name));
  if (!fetched) {
    co_return k.str() + ": " + fetched.message();
  }
  co_return co_await updateChild(ref, desired, *fetched, uid);
}

asio::awaitable<std::string> Reconciler::updateChild(const kube::ResourceRef& ref,
                                                     const Json& desired, const Json& live,
                                                     const std::string& uid) {
  const ObjectKey k = keyOf(desired);
  if (!ownedBy(live, uid)) {
    co_return k.str() + " already exists and is not managed by this DriverDeployment; " +
        "left untouched";
  }
  if (contains(live, desired)) {
    co_return "";
  }
  spdlog::info("applying {}: differs at {}", k.str(), firstDifference(live, desired));
  // `live` may be the cache's entry, which changes while this coroutine waits.
  const std::string liveUid = metadataField(live, "uid");
  auto applied = co_await kube::attempt(takeOwnershipAndApply(ref, desired, live));
  if (applied) {
    applied_.remember(desired, *applied);
    co_return "";
  }
  if (applied.invalid() && k.kind == "StorageClass") {
    // parameters, provisioner, reclaimPolicy, ... are immutable
    co_return co_await recreateStorageClass(ref, desired, liveUid);
  }
  co_return k.str() + ": " + applied.message();
}

asio::awaitable<Json> Reconciler::takeOwnershipAndApply(const kube::ResourceRef& ref,
                                                        const Json& desired, const Json& live) {
  // What the operator created with a POST is handed over to its server-side apply first
  // (field_ownership.hpp): every field is then owned by the apply, so fields dropped from the
  // spec later are removed by the next apply.
  if (std::optional<Json> handOver = ownershipUpgrade(live, client_.fieldManager())) {
    const ObjectKey k = keyOf(live);
    co_await client_.patch(ref, k.namespace_, k.name, kube::PatchType::JsonPatch,
                           std::move(*handOver));
  }
  co_return co_await client_.apply(ref, desired);
}

asio::awaitable<std::string> Reconciler::recreateStorageClass(const kube::ResourceRef& ref,
                                                              const Json& desired,
                                                              std::string oldUid) {
  const ObjectKey k = keyOf(desired);
  const kube::DeleteOptions options = deleteOnly(oldUid);
  auto removed = co_await kube::attempt(client_.remove(ref, k.namespace_, k.name, options));
  if (!removed) {
    co_return k.str() + " (recreating an immutable StorageClass): " + removed.message();
  }
  auto created = co_await kube::attempt(client_.apply(ref, desired));
  if (!created) {
    co_return k.str() + " (recreating an immutable StorageClass): " + created.message();
  }
  applied_.remember(desired, *created);
  co_return "";
}

} // namespace csiop::controller
