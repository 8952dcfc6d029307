// Every child: the ServiceAccounts and the driver's own roles with the driver name's claim
// (applyIdentities), then the Namespace (created if missing, never owned), then the rest in
// waves (apply_waves.hpp: one once the identities went with the claim), the objects of a wave at
// the same time. A child is created when the caches do not have it, applied when it differs, and
// left alone when it is someone else's or marked unmanaged.
#include <csiop/driverdeployment/reconciler.hpp>

#include <map>

#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/apply_waves.hpp>
#include <csiop/driverdeployment/compare.hpp>
#include <csiop/driverdeployment/field_ownership.hpp>
#include <csiop/driverdeployment/object_key.hpp>
#include <csiop/driverdeployment/ownership.hpp>
#include <csiop/driverdeployment/unmanaged.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"
#include "requests.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::metadataField;

asio::awaitable<StepResult> Reconciler::applyIdentities(ReconcileRun& run) {
  std::vector<const Json*> identities;
  for (const Json& desired : run.desired) {
    if (!isIdentity(desired["kind"])) {
      continue;
    }
    const std::string ns = metadataField(desired, "namespace");
    if (!ns.empty() && caches_.namespaces.get("", ns) == nullptr) {
      co_return std::nullopt; // created with the Namespace first (applyChildren)
    }
    identities.push_back(&desired);
  }
  co_await applyAtOnce(run, identities);
  run.identitiesApplied = true;
  co_return std::nullopt;
}

asio::awaitable<StepResult> Reconciler::applyChildren(ReconcileRun& run) {
  // After the ServiceAccounts (applyIdentities), which a pod's admission looks up first.
  co_await checkPodSecurity(run);
  std::map<int, std::vector<const Json*>> waves;
  for (const Json& desired : run.desired) {
    const std::string kind = desired["kind"];
    if (isIdentity(kind) && run.identitiesApplied) {
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
      waves[applyWave(kind, run.identitiesApplied)].push_back(&desired);
      continue;
    }
    if (caches_.namespaces.get("", metadataField(desired, "name")) == nullptr) {
      auto created = co_await kube::attempt(client_.create(kube::resources::namespaces, desired));
      if (!created && !created.alreadyExists()) {
        run.addError(ErrorLine::of("Namespace " + metadataField(desired, "name") + ": ", created));
      } else if (created) {
        // What it was labelled with, and why: an admin who finds it should not have to guess.
        std::string labels;
        for (const auto& [key, value] :
             api::member(api::member(desired, "metadata"), "labels").items()) {
          if (key.starts_with("pod-security.kubernetes.io/")) {
            labels += (labels.empty() ? "" : ", ") + key + "=" + value.get<std::string>();
          }
        }
        // Named, not a temporary in the co_await (GCC 12 destroys those twice).
        const std::string message =
            "created Namespace " + metadataField(desired, "name") +
            (labels.empty() ? std::string()
                            : " labelled " + labels +
                                  " (the node plugin's pods are privileged; Pod Security "
                                  "admission must allow them)");
        co_await events_.record(run.dd, false, "NamespaceCreated", message);
      }
    }
  }
  for (const auto& [wave, members] : waves) {
    co_await applyAtOnce(run, members);
  }
  co_return std::nullopt;
}

namespace {

// "ns/name" of the ServiceAccount a workload's pods would run as, when the pass found that one
// to be someone else's; else "".
std::string foreignAccountOf(const ReconcileRun& run, const Json& desired) {
  if (!isWorkload(desired["kind"].get<std::string>())) {
    return {};
  }
  const Json& spec = api::member(api::member(api::member(desired, "spec"), "template"), "spec");
  const std::string account =
      metadataField(desired, "namespace") + "/" + api::stringField(spec, "serviceAccountName");
  return run.foreignAccounts.contains(account) ? account : std::string();
}

} // namespace

asio::awaitable<void> Reconciler::applyAtOnce(ReconcileRun& run,
                                              const std::vector<const Json*>& members) {
  Observed& observed = run.observed;
  std::vector<asio::awaitable<std::optional<ErrorLine>>> applies;
  std::vector<const Json*> applied;
  for (const Json* desired : members) {
    if (const Json* live = liveHead(*desired);
        live != nullptr && ownedBy(*live, run.uid) && !managed(*live)) {
      noteUnmanaged(*live, observed);
      continue;
    }
    if (run.heldWorkloads.contains(keyOf(*desired).str())) {
      continue; // the operator's own change, held (holdOperatorUpdates)
    }
    if (run.refusedWorkloads.contains(keyOf(*desired).str())) {
      continue; // its pods would be refused (checkPodSecurity reports it)
    }
    if (const std::string account = foreignAccountOf(run, *desired); !account.empty()) {
      // Its pods would run as someone else's ServiceAccount, with whatever that one may do.
      run.addError(ErrorLine{keyOf(*desired).str() + " not applied: its pods would run as " +
                             "ServiceAccount " + account +
                             ", which exists and is not this DriverDeployment's (never adopted)"});
      continue;
    }
    applied.push_back(desired);
    applies.push_back((*desired)["kind"] == "CSIDriver"
                          ? applyCSIDriver(*desired)
                          : applyChild(*desired, run.uid, &run.created));
  }
  std::vector<std::optional<ErrorLine>> errors = co_await runtime::allOf(std::move(applies));
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) {
      continue;
    }
    if (errors[i]->foreign && (*applied[i])["kind"] == "ServiceAccount") {
      run.foreignAccounts.insert(metadataField(*applied[i], "namespace") + "/" +
                                 metadataField(*applied[i], "name"));
    }
    run.addError(std::move(*errors[i]));
  }
}

asio::awaitable<std::optional<ErrorLine>>
Reconciler::applyChild(const Json& desired, const std::string& uid, std::vector<Json>* created) {
  const ObjectKey key = keyOf(desired);
  const kube::ResourceRef* ref = caches_.resourceOf(key.kind);
  if (ref == nullptr) {
    co_return ErrorLine{key.str() + ": no resource for this kind"};
  }
  const CachedChild* cached = cachedChild(desired);
  if (cached == nullptr) {
    co_return co_await createChild(*ref, desired, uid, created);
  }
  // Most passes end here: the child is as applied, or differs from it in status only.
  const bool owned = ownedBy(cached->head, uid);
  if (owned && applied_.unchangedSinceApplied(desired, *cached)) {
    co_return std::nullopt;
  }
  const Json live = cached->whole(); // `cached` changes while this coroutine waits
  if (owned && contains(live, desired) && !applied_.changedSinceApplied(desired)) {
    applied_.verified(desired, *cached);
    co_return std::nullopt;
  }
  co_return co_await updateChild(*ref, desired, live, uid);
}

asio::awaitable<std::optional<ErrorLine>> Reconciler::createChild(const kube::ResourceRef& ref,
                                                                  const Json& desired,
                                                                  const std::string& uid,
                                                                  std::vector<Json>* createdHere) {
  const ObjectKey key = keyOf(desired);
  kube::Warnings warnings;
  const kube::CreateOptions options{.warnings = &warnings};
  auto created = co_await kube::attempt(client_.create(ref, desired, options));
  if (created) {
    if (createdHere != nullptr) {
      const Json& metadata = api::member(*created, "metadata");
      createdHere->push_back({{"apiVersion", desired["apiVersion"]},
                              {"kind", desired["kind"]},
                              {"metadata",
                               {{"name", api::stringField(metadata, "name")},
                                {"namespace", api::stringField(metadata, "namespace")},
                                {"uid", api::stringField(metadata, "uid")}}}});
    }
    applied_.remember(desired, *created, std::move(warnings));
    co_return std::nullopt;
  }
  if (!created.alreadyExists()) {
    co_return ErrorLine::of(key.str() + ": ", created);
  }
  // Not in the (owner-labelled) cache, yet it exists: just created and not seen yet, or someone
  // else's object of that name. Read it and go on as with a cached one.
  auto fetched = co_await kube::attempt(client_.get(ref, key.namespace_, key.name));
  if (!fetched) {
    co_return ErrorLine::of(key.str() + ": ", fetched);
  }
  co_return co_await updateChild(ref, desired, *fetched, uid);
}

asio::awaitable<std::optional<ErrorLine>> Reconciler::updateChild(const kube::ResourceRef& ref,
                                                                  const Json& desired,
                                                                  const Json& live,
                                                                  const std::string& uid) {
  const ObjectKey key = keyOf(desired);
  if (!ownedBy(live, uid)) {
    ErrorLine foreign{key.str() + " already exists and is not managed by this DriverDeployment; " +
                      "left untouched"};
    foreign.foreign = true;
    co_return foreign;
  }
  const std::string difference = firstDifference(live, desired);
  if (difference.empty() && !applied_.changedSinceApplied(desired)) {
    co_return std::nullopt;
  }
  spdlog::info("applying {}: {}", key.str(),
               difference.empty() ? "changed since the last apply" : "differs at " + difference);
  // `live` may be the cache's entry, which changes while this coroutine waits.
  const std::string liveUid = metadataField(live, "uid");
  kube::Warnings warnings;
  auto applied = co_await takeOwnershipAndApply(ref, desired, live, &warnings);
  if (applied) {
    applied_.remember(desired, *applied, std::move(warnings));
    co_return std::nullopt;
  }
  if (applied.invalid() && key.kind == "StorageClass") {
    // parameters, provisioner, reclaimPolicy, ... are immutable
    co_return co_await recreateStorageClass(ref, desired, liveUid);
  }
  co_return ErrorLine::of(key.str() + ": ", applied);
}

asio::awaitable<kube::Attempt<Json>> Reconciler::takeOwnershipAndApply(const kube::ResourceRef& ref,
                                                                       const Json& desired,
                                                                       const Json& live,
                                                                       kube::Warnings* warnings) {
  // What the operator created with a POST is handed over to its server-side apply first
  // (field_ownership.hpp): every field is then owned by the apply, so fields dropped from the
  // spec later are removed by the next apply.
  if (std::optional<Json> handOver = ownershipUpgrade(live, client_.fieldManager())) {
    const ObjectKey key = keyOf(live);
    auto handedOver = co_await kube::attempt(client_.patch(
        ref, key.namespace_, key.name, kube::PatchType::JsonPatch, std::move(*handOver)));
    if (!handedOver) {
      co_return handedOver;
    }
  }
  const kube::ApplyOptions options{.warnings = warnings};
  co_return co_await kube::attempt(client_.apply(ref, desired, options));
}

asio::awaitable<std::optional<ErrorLine>>
Reconciler::recreateStorageClass(const kube::ResourceRef& ref, const Json& desired,
                                 std::string oldUid) {
  const ObjectKey key = keyOf(desired);
  const kube::DeleteOptions options = deleteOnly(oldUid);
  auto removed = co_await kube::attempt(client_.remove(ref, key.namespace_, key.name, options));
  if (!removed) {
    co_return ErrorLine::of(key.str() + " (recreating an immutable StorageClass): ", removed);
  }
  kube::Warnings warnings;
  const kube::ApplyOptions applyOptions{.warnings = &warnings};
  auto created = co_await kube::attempt(client_.apply(ref, desired, applyOptions));
  if (!created) {
    co_return ErrorLine::of(key.str() + " (recreating an immutable StorageClass): ", created);
  }
  applied_.remember(desired, *created, std::move(warnings));
  co_return std::nullopt;
}

} // namespace csiop::driverdeployment
