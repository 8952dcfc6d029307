#include <csiop/controller/reconciler.hpp>

#include <algorithm>
#include <functional>
#include <set>

#include <spdlog/spdlog.h>

#include <csiop/api/codec.hpp>
#include <csiop/api/defaults.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/api/load.hpp>
#include <csiop/controller/compare.hpp>
#include <csiop/controller/concurrently.hpp>
#include <csiop/controller/config_hash.hpp>
#include <csiop/controller/decisions.hpp>
#include <csiop/controller/field_ownership.hpp>
#include <csiop/controller/node_rollout.hpp>
#include <csiop/controller/pod_problems.hpp>
#include <csiop/controller/status.hpp>
#include <csiop/controller/volume_usage.hpp>
#include <csiop/render/config_refs.hpp>
#include <csiop/render/render.hpp>

namespace csiop::controller {
namespace {

namespace asio = boost::asio;
namespace r = kube::resources;
using api::Json;
using api::metadataField;
using api::stringField;

std::string ownerLabel(const Json& o) {
  const Json labels = o.value("metadata", Json::object()).value("labels", Json::object());
  return stringField(labels, render::kOwnerLabel);
}

Observed::Workload workload(const Json& o, bool daemonSet) {
  const Json status = o.value("status", Json::object());
  const auto num = [&](const Json& j, const char* f) {
    return j.contains(f) && j[f].is_number_integer() ? j[f].get<std::int32_t>() : 0;
  };
  Observed::Workload w;
  const auto generation = o["metadata"].value("generation", Json(0));
  w.observedCurrent = status.value("observedGeneration", Json(-1)) == generation;
  if (daemonSet) {
    w.desired = num(status, "desiredNumberScheduled");
    w.updated = num(status, "updatedNumberScheduled");
    w.ready = num(status, "numberReady");
  } else {
    w.desired = num(o.value("spec", Json::object()), "replicas");
    w.updated = num(status, "updatedReplicas");
    w.ready = num(status, "readyReplicas");
  }
  return w;
}

// DeleteOptions hold string_views: the uid must outlive the request, so it is
// passed as a named string (never a temporary inside a co_await expression,
// which g++ 12 miscompiles).
kube::DeleteOptions deleteOnly(const std::string& uid, bool background = false) {
  kube::DeleteOptions o;
  o.preconditionUid = uid;
  if (background) {
    o.propagationPolicy = kube::Propagation::Background;
  }
  return o;
}

bool conditionTrue(const std::optional<api::DriverDeploymentStatus>& status, const char* type) {
  const auto* c = status && status->conditions ? findCondition(*status->conditions, type) : nullptr;
  return c != nullptr && c->status == "True";
}

bool hasFinalizer(const Json& dd) {
  const Json f = dd["metadata"].value("finalizers", Json::array());
  return std::find(f.begin(), f.end(), Json(kFinalizer)) != f.end();
}

} // namespace

Reconciler::Reconciler(kube::Client& client, Caches& caches, EventRecorder& events,
                       std::function<std::string()> now, std::chrono::milliseconds configPollPeriod)
    : client_(client), caches_(caches), events_(events), now_(std::move(now)),
      configPollPeriod_(configPollPeriod) {}

const Json* Reconciler::live(const Json& desired) {
  const ObjectKey k = keyOf(desired);
  if (k.kind == "CSIDriver") {
    return caches_.csiDrivers.get("", k.name);
  }
  Informer* cache = caches_.child(k.kind);
  return cache == nullptr ? nullptr : cache->get(k.namespace_, k.name);
}

void Reconciler::remember(const Json& desired, const Json& result) {
  const Json generation = result.value("metadata", Json::object()).value("generation", Json(0));
  applied_[keyOf(desired).str()] = {
      std::to_string(std::hash<std::string>{}(desired.dump())),
      metadataField(result, "resourceVersion"), metadataField(result, "uid"),
      generation.is_number_integer() ? generation.get<std::int64_t>() : 0};
}

bool Reconciler::behindLastApply(const Json& liveObject) const {
  const auto it = applied_.find(keyOf(liveObject).str());
  const Json generation = liveObject.value("metadata", Json::object()).value("generation", Json(0));
  return it != applied_.end() && it->second.uid == metadataField(liveObject, "uid") &&
         generation.is_number_integer() && it->second.generation > generation.get<std::int64_t>();
}

bool Reconciler::unchangedSinceApplied(const Json& desired, const Json& liveObject) const {
  const auto it = applied_.find(keyOf(desired).str());
  return it != applied_.end() &&
         it->second.desiredHash == std::to_string(std::hash<std::string>{}(desired.dump())) &&
         it->second.resourceVersion == metadataField(liveObject, "resourceVersion");
}

std::vector<std::string> Reconciler::fieldManagers() const {
  return {client_.fieldManager(), kClaimFieldManager};
}

std::vector<Json> Reconciler::ownedChildren(const std::string& name, const std::string& uid) {
  const std::vector<std::string> managers = fieldManagers();
  std::vector<Json> out;
  for (auto& cache : caches_.children) {
    for (const Json* o : cache->byIndex(kByOwner, name)) {
      if (madeFor(*o, uid, managers)) {
        out.push_back(*o);
      }
    }
  }
  for (const Json* o : caches_.csiDrivers.byIndex(kByOwner, name)) {
    if (madeFor(*o, uid, managers)) {
      out.push_back(*o);
    }
  }
  return out;
}

std::vector<std::string> Reconciler::ownersOf(const Json& object) {
  const std::string kind = object.value("kind", std::string());
  if (kind == "DriverDeployment") {
    return {metadataField(object, "name")};
  }
  if (const std::string owner = ownerLabel(object); !owner.empty() && kind != "CSIDriver") {
    return {owner};
  }
  // A CSIDriver (ours or foreign) or a CSINode concerns the DriverDeployments of its driver(s);
  // a volume of a driver, only those being deleted (their deletion may wait for it).
  std::set<std::string> drivers;
  bool deletingOnly = false;
  std::vector<std::string> out;
  // A Node, or a pod with volumes, concerns the node plugin rollouts waiting on that node.
  if (kind == "Node" || kind == "Pod") {
    const std::string node = kind == "Node"
                                 ? metadataField(object, "name")
                                 : stringField(object.value("spec", Json::object()), "nodeName");
    for (const auto& [dd, nodes] : waitingNodes_) {
      if (nodes.contains(node)) {
        out.push_back(dd);
      }
    }
  }
  if (const auto used = driversUsedBy(object); !used.empty()) {
    drivers.insert(used.begin(), used.end());
    deletingOnly = true;
  } else if (kind == "CSIDriver") {
    drivers.insert(metadataField(object, "name"));
  } else if (kind == "CSINode") {
    for (const auto& d : object.value("spec", Json::object()).value("drivers", Json::array())) {
      drivers.insert(stringField(d, "name"));
    }
  }
  for (const std::string& driver : drivers) {
    for (const Json* dd : caches_.driverDeploymentsOf(driver)) {
      if (!deletingOnly || (*dd)["metadata"].contains("deletionTimestamp")) {
        out.push_back(metadataField(*dd, "name"));
      }
    }
  }
  return out;
}

asio::awaitable<void> Reconciler::ensureFinalizer(Json& dd) {
  if (hasFinalizer(dd)) {
    co_return;
  }
  const Json current = dd["metadata"].value("finalizers", Json::array());
  Json with = current;
  with.push_back(kFinalizer);
  // test + replace: fails (and requeues) if someone changed the list meanwhile.
  Json patch = Json::array();
  if (dd["metadata"].contains("finalizers")) {
    patch.push_back({{"op", "test"}, {"path", "/metadata/finalizers"}, {"value", current}});
  }
  patch.push_back({{"op", "add"}, {"path", "/metadata/finalizers"}, {"value", with}});
  const Json updated = co_await client_.patch(r::driverdeployments, "", metadataField(dd, "name"),
                                              kube::PatchType::JsonPatch, std::move(patch));
  dd["metadata"] = updated["metadata"];
}

asio::awaitable<std::string> Reconciler::applyChild(const Json& desired, const std::string& uid) {
  const ObjectKey k = keyOf(desired);
  const kube::ResourceRef* ref = caches_.resourceOf(k.kind);
  if (ref == nullptr) {
    co_return k.str() + ": no resource for this kind";
  }
  const Json* l = live(desired);
  Json fetched;
  std::string error;
  bool recreate = false;
  try {
    if (l == nullptr) {
      // Not in the (owner-labelled) cache: most often absent, so one create; if it exists
      // after all (just created and not seen yet, or someone else's object of that name),
      // read it and go on as with a cached one.
      try {
        Json created = co_await client_.create(*ref, desired);
        remember(desired, created);
        co_return "";
      } catch (const kube::ApiError& e) {
        if (!e.isAlreadyExists()) {
          throw;
        }
      }
      fetched = co_await client_.get(*ref, k.namespace_, k.name);
      l = &fetched;
    }
    if (!ownedBy(*l, uid)) {
      co_return k.str() + " already exists and is not managed by this DriverDeployment; " +
          "left untouched";
    }
    if (unchangedSinceApplied(desired, *l) || contains(*l, desired)) {
      co_return "";
    }
    spdlog::info("applying {}: differs at {}", k.str(), firstDifference(*l, desired));
    co_await takeOwnership(*ref, *l);
    // Every field is then owned by the apply, so fields dropped from the spec later are removed
    // by the next apply.
    Json result = co_await client_.apply(*ref, desired);
    remember(desired, result);
    co_return "";
  } catch (const kube::ApiError& e) {
    if (e.isInvalid() && k.kind == "StorageClass" && l != nullptr) {
      recreate = true; // parameters, provisioner, reclaimPolicy, ... are immutable
    } else {
      error = k.str() + ": " + e.what();
    }
  } catch (const kube::TransportError& e) {
    error = k.str() + ": " + e.what();
  }
  if (recreate) {
    try {
      const std::string oldUid = metadataField(*l, "uid");
      const kube::DeleteOptions options = deleteOnly(oldUid);
      co_await client_.remove(*ref, k.namespace_, k.name, options);
      Json created = co_await client_.apply(*ref, desired);
      remember(desired, created);
      co_return "";
    } catch (const std::exception& e) {
      error = k.str() + " (recreating an immutable StorageClass): " + e.what();
    }
  }
  co_return error;
}

asio::awaitable<void> Reconciler::takeOwnership(const kube::ResourceRef& ref, const Json& live) {
  std::optional<Json> patch = ownershipUpgrade(live, client_.fieldManager());
  if (!patch) {
    co_return;
  }
  const ObjectKey k = keyOf(live);
  co_await client_.patch(ref, k.namespace_, k.name, kube::PatchType::JsonPatch, std::move(*patch));
}

asio::awaitable<void> Reconciler::claimCSIDriver(const Json& desired) {
  // The claim is a create: of two DriverDeployments (or operators) racing for a
  // name exactly one succeeds, and the other gets AlreadyExists. It carries
  // only what identifies the owner and the immutable fields, under a field
  // manager of its own; the apply that follows owns everything else, so later
  // applies can drop fields.
  Json claim = {{"apiVersion", desired["apiVersion"]},
                {"kind", "CSIDriver"},
                {"metadata", desired["metadata"]},
                {"spec", {{"attachRequired", desired["spec"]["attachRequired"]}}}};
  if (desired["spec"].contains("volumeLifecycleModes")) { // not in the legacy API
    claim["spec"]["volumeLifecycleModes"] = desired["spec"]["volumeLifecycleModes"];
  }
  const kube::ResourceRef& ref = caches_.csiDrivers.resource();
  co_await client_.create(ref, std::move(claim), {.fieldManager = kClaimFieldManager});
  Json applied = co_await client_.apply(ref, desired);
  remember(desired, applied);
}

asio::awaitable<void> Reconciler::writeStatus(const Json& dd,
                                              const api::DriverDeploymentStatus& s) {
  const Json status = api::encode(s);
  const std::string name = metadataField(dd, "name");
  const std::string cachedVersion = metadataField(dd, "resourceVersion");
  auto written = statusWritten_.find(name);
  if (written != statusWritten_.end() && written->second.resourceVersion == cachedVersion) {
    statusWritten_.erase(written); // the cache shows the last write
    written = statusWritten_.end();
  }
  // The status the server holds, as far as this reconciler knows: the cached one, unless the
  // cache does not show the last write yet. A status equal to an older cached one (a rollout
  // that went back to where it was) must still be written.
  if (sameJson(dd.value("status", Json()), status) &&
      (written == statusWritten_.end() || sameJson(written->second.status, status))) {
    co_return; // nothing changed: no write
  }
  Json body = dd;
  body["status"] = status;
  const Json result =
      co_await client_.update(r::driverdeployments, std::move(body), {.subresource = "status"});
  statusWritten_[name] = {metadataField(result, "resourceVersion"), status};
}

asio::awaitable<ReconcileResult> Reconciler::reconcile(std::string name) {
  const Json* cached = caches_.driverDeployments.get("", name);
  if (cached == nullptr) {
    statusWritten_.erase(name);
    co_return ReconcileResult{};
  }
  Json dd = *cached; // the cache may change while this coroutine waits
  const std::string uid = metadataField(dd, "uid");
  const api::Decoded decoded = api::decode(dd);
  const auto& previous = decoded.object.status;
  Observed o;
  o.generation = decoded.object.generation();
  o.deleting = dd["metadata"].contains("deletionTimestamp");
  o.paused = api::isTrue(dd.value("spec", Json::object()), "paused");
  if (o.deleting && !hasFinalizer(dd)) {
    co_return ReconcileResult{};
  }
  if (o.paused) {
    co_return co_await reconcilePaused(dd, o, previous);
  }
  if (conditionTrue(previous, condition::kPaused)) {
    co_await events_.record(dd, false, "Resumed",
                            "spec.paused is false: managing the driver again");
  }
  if (o.deleting) {
    o.deletionBlocked = co_await deletionBlocker(dd, o);
    if (!o.deletionBlocked) {
      co_return co_await finalize(dd);
    }
    // The driver keeps being managed (its volumes need it) until they are gone.
    if (!conditionTrue(previous, condition::kDeletionBlocked)) {
      co_await events_.record(dd, true, "DeletionBlocked",
                              "the deletion waits until no volume of the driver is in use: " +
                                  *o.deletionBlocked);
    }
  }

  api::Loaded loaded = api::loadDriverDeployment(dd, api::UnknownFields::Ignore);
  if (!loaded.ok()) {
    // Validation the schema could not express; the webhook normally stops it earlier.
    api::DriverDeploymentStatus s = previous.value_or(api::DriverDeploymentStatus{});
    s.observedGeneration = o.generation;
    std::vector<api::Condition> conditions = s.conditions.value_or(std::vector<api::Condition>{});
    std::string message;
    for (const auto& e : loaded.errors) {
      message += (message.empty() ? "" : "; ") + e;
    }
    for (const auto& [type, status] :
         {std::pair{condition::kReady, false}, std::pair{condition::kDegraded, true}}) {
      api::Condition c{type,   status ? "True" : "False", o.generation, now_(), "InvalidSpec",
                       message};
      setCondition(conditions, std::move(c));
    }
    setLifecycleConditions(o, conditions, now_());
    s.conditions = std::move(conditions);
    co_await writeStatus(dd, s);
    co_return ReconcileResult{};
  }
  const api::DriverDeployment& object = loaded.objects.front();
  if (!o.deleting) { // a finalizer cannot be added once the deletion has begun
    co_await ensureFinalizer(dd);
  }

  std::vector<Json> objects = render::render(object, {.csiDriverV1 = csiDriverV1()});
  // Pods roll when a ConfigMap or Secret they reference changes: its content hash on the
  // workload's pod template. Those objects are read again every configPollPeriod_.
  const api::Effective effective = api::resolve(object);
  const bool pollConfig = co_await annotateConfigHashes(objects, effective, o);
  const auto driverIt = std::find_if(objects.begin(), objects.end(),
                                     [](const Json& x) { return x["kind"] == "CSIDriver"; });
  const Json& desiredDriver = *driverIt;
  o.hasController = effective.hasControllerWorkload();

  // 1. The driver name: the CSIDriver object decides who owns it.
  const Json* liveDriver = caches_.csiDrivers.get("", object.spec.driverName);
  const bool adopt = stringField(dd["metadata"].value("annotations", Json::object()),
                                 render::kAdoptAnnotation) == "true";
  CSIDriverDecision decision = decideCSIDriver(liveDriver, desiredDriver, uid, adopt);
  using A = CSIDriverDecision::Action;
  if (liveDriver != nullptr && ownedBy(*liveDriver, uid) && !managed(*liveDriver)) {
    noteUnmanaged(*liveDriver, o);
    decision.action = A::Keep;
  }
  std::optional<ReconcileResult> early;
  try {
    switch (decision.action) {
    case A::Conflict: {
      o.conflictWith = decision.detail;
      const auto* was = previous && previous->conditions
                            ? findCondition(*previous->conditions, condition::kDriverNameConflict)
                            : nullptr;
      if (was == nullptr || was->status != "True") {
        co_await events_.record(dd, true, "DriverNameConflict",
                                "driver name " + object.spec.driverName + " is already used by " +
                                    decision.detail);
      }
      co_await writeStatus(dd, computeStatus(o, previous, now_()));
      co_return ReconcileResult{};
    }
    case A::Create: {
      co_await claimCSIDriver(desiredDriver);
      break;
    }
    case A::Recreate: {
      const std::string oldUid = metadataField(*liveDriver, "uid");
      const kube::DeleteOptions options = deleteOnly(oldUid);
      co_await client_.remove(caches_.csiDrivers.resource(), "", object.spec.driverName, options);
      co_await claimCSIDriver(desiredDriver);
      o.csiDriverRecreated = "CSIDriver " + object.spec.driverName + " was recreated because " +
                             decision.detail + " changed (immutable on a CSIDriver)";
      co_await events_.record(dd, false, "CSIDriverRecreated", *o.csiDriverRecreated);
      break;
    }
    case A::Apply: {
      Json applied = co_await client_.apply(caches_.csiDrivers.resource(), desiredDriver);
      remember(desiredDriver, applied);
      break;
    }
    case A::Keep:
      break;
    }
  } catch (const kube::ApiError& e) {
    if (e.isAlreadyExists() || e.isConflict() || e.isNotFound()) {
      // Someone created or changed it between our read and write: decide again
      // from the cache, which will show it.
      early =
          ReconcileResult{ReconcileResult::Outcome::Requeue, std::chrono::milliseconds(500), {}};
    } else {
      early = ReconcileResult{ReconcileResult::Outcome::Error, {}, e.what()};
    }
  }
  if (early) {
    co_return *early;
  }

  // 2. Every other child: the Namespace first, then in waves (identities and
  // roles, bindings, workloads), each wave's objects at the same time.
  std::map<int, std::vector<const Json*>> waves;
  for (const Json& desired : objects) {
    const std::string kind = desired["kind"];
    if (kind == "CSIDriver") {
      continue;
    }
    if (kind != "Namespace") {
      waves[applyWave(kind)].push_back(&desired);
      continue;
    }
    if (caches_.namespaces.get("", metadataField(desired, "name")) == nullptr) {
      try {
        co_await client_.create(r::namespaces, desired);
      } catch (const kube::ApiError& e) {
        if (!e.isAlreadyExists()) {
          o.applyErrors.push_back("Namespace " + metadataField(desired, "name") + ": " + e.what());
        }
      }
    }
  }
  for (const auto& [wave, members] : waves) {
    std::vector<asio::awaitable<std::string>> applies;
    for (const Json* desired : members) {
      if (const Json* l = live(*desired); l != nullptr && ownedBy(*l, uid) && !managed(*l)) {
        noteUnmanaged(*l, o);
        continue;
      }
      applies.push_back(applyChild(*desired, uid));
    }
    std::vector<std::string> errors = co_await allOf(std::move(applies));
    for (std::string& error : errors) {
      if (!error.empty()) {
        o.applyErrors.push_back(std::move(error));
      }
    }
  }

  // 3. Prune what the spec no longer wants.
  for (const Json& gone :
       toPrune(ownedChildren(object.name(), uid), objects, uid, fieldManagers())) {
    const ObjectKey k = keyOf(gone);
    if (!managed(gone)) {
      noteUnmanaged(gone, o);
      continue;
    }
    try {
      const std::string goneUid = metadataField(gone, "uid");
      const kube::DeleteOptions options = deleteOnly(goneUid, true);
      co_await client_.remove(*caches_.resourceOf(k.kind), k.namespace_, k.name, options);
      applied_.erase(k.str());
      spdlog::info("pruned {} of DriverDeployment {}", k.str(), object.name());
    } catch (const kube::ApiError& e) {
      if (!e.isNotFound()) {
        o.applyErrors.push_back("pruning " + k.str() + ": " + e.what());
      }
    }
  }

  // 4. The node plugin's own rollout (WhenVolumesUnused), then the status.
  co_await rollNodePlugins(effective, dd, o);
  observeWorkloads(effective, o);
  bool statusConflict = false;
  try {
    co_await writeStatus(dd, computeStatus(o, previous, now_()));
  } catch (const kube::ApiError& err) {
    if (!err.isConflict() && !err.isNotFound()) {
      throw;
    }
    statusConflict = true; // the object changed meanwhile: its event queues us again
  }
  if (statusConflict) {
    co_return ReconcileResult{
        ReconcileResult::Outcome::Requeue, std::chrono::milliseconds(200), {}};
  }
  if (!o.applyErrors.empty()) {
    co_return ReconcileResult{ReconcileResult::Outcome::Error, {}, o.applyErrors.front()};
  }
  if (pollConfig) {
    co_return ReconcileResult{ReconcileResult::Outcome::Requeue, configPollPeriod_, {}};
  }
  co_return ReconcileResult{};
}

asio::awaitable<bool> Reconciler::annotateConfigHashes(std::vector<Json>& objects,
                                                       const api::Effective& e, Observed& o) {
  // What was read, by reference: the object, nullopt if absent; an unreadable one is absent
  // from the map and named in `unreadable`.
  std::map<std::string, std::optional<Json>> read;
  std::map<std::string, std::string> unreadable;
  bool any = false;
  for (Json& workload : objects) {
    const std::string kind = stringField(workload, "kind");
    if (kind != "DaemonSet" && kind != "Deployment" && kind != "StatefulSet") {
      continue;
    }
    std::vector<render::ConfigReference> refs = render::configReferences(workload);
    const std::string what = kind == "DaemonSet" ? "the node plugin" : "the controller";
    for (auto& r : render::storageClassSecrets(e, what == "the controller")) {
      refs.push_back(std::move(r));
    }
    if (refs.empty()) {
      continue;
    }
    any = true;
    std::vector<ReadReference> contents;
    bool complete = true;
    for (const render::ConfigReference& ref : refs) {
      const std::string key = ref.str();
      if (!read.contains(key) && !unreadable.contains(key)) {
        try {
          const auto& resource =
              ref.kind == "ConfigMap" ? kube::resources::configmaps : kube::resources::secrets;
          read[key] = co_await client_.get(resource, ref.namespace_, ref.name);
        } catch (const kube::ApiError& err) {
          if (err.isNotFound()) {
            read[key] = std::nullopt;
          } else {
            unreadable[key] = err.what();
          }
        } catch (const kube::TransportError& err) {
          unreadable[key] = err.what();
        }
      }
      if (const auto it = unreadable.find(key); it != unreadable.end()) {
        o.configProblems.push_back("cannot read " + key + " (referenced by " + what +
                                   "): " + it->second + "; its pods keep their configuration");
        complete = false;
        continue;
      }
      const std::optional<Json>& content = read[key];
      if (!content && !ref.optional) {
        o.configProblems.push_back(key + " (referenced by " + what + ") does not exist");
      }
      contents.emplace_back(ref, content);
    }
    if (complete) {
      render::setConfigHash(workload, configContentHash(contents));
    } else if (const Json* l = live(workload); l != nullptr && !render::configHash(*l).empty()) {
      render::setConfigHash(workload, render::configHash(*l)); // no roll on a failed read
    }
  }
  co_return any;
}

asio::awaitable<void> Reconciler::rollNodePlugins(const api::Effective& e, const Json& dd,
                                                  Observed& o) {
  const Json& strategy = e.node.updateStrategy;
  const Json* ds = caches_.child("DaemonSet")->get(e.namespace_, e.name + "-node");
  const std::string uid = metadataField(dd, "uid");
  if (!strategy.is_object() || strategy.value("type", Json()) != "WhenVolumesUnused" ||
      ds == nullptr || !ownedBy(*ds, uid) || !managed(*ds)) {
    waitingNodes_.erase(e.name);
    co_return;
  }
  const std::string dsUid = metadataField(*ds, "uid");
  NodeRolloutInput in;
  std::vector<const Json*> revisions;
  for (const Json* r : caches_.controllerRevisions.byIndex(kByOwner, e.name)) {
    if (metadataField(*r, "namespace") == e.namespace_) {
      revisions.push_back(r);
    }
  }
  in.currentHash = currentRevisionHash(revisions, dsUid);
  for (const Json* pod : caches_.pods.byIndex(kByOwner, e.name)) {
    if (metadataField(*pod, "namespace") == e.namespace_ && ownedBy(*pod, dsUid)) {
      in.pluginPods.push_back(pod);
    }
  }
  for (const Json* pod : in.pluginPods) { // the nodes that matter, not every node
    const std::string node = stringField(pod->value("spec", Json::object()), "nodeName");
    if (const Json* n = caches_.nodes.get("", node); n != nullptr) {
      in.nodes[node] = n;
    }
  }
  in.users =
      volumeUsersByNode(e.driverName, caches_.persistentVolumes.list(), caches_.volumeUsers.list());
  const Json dsStatus = ds->value("status", Json::object());
  const Json params = strategy.value("whenVolumesUnused", Json::object());
  in.maxUnavailable =
      resolveMaxUnavailable(params.is_object() ? params.value("maxUnavailable", Json()) : Json(),
                            dsStatus.value("desiredNumberScheduled", 0));
  in.unavailable = dsStatus.value("numberUnavailable", 0);
  const NodeRolloutPlan plan = planNodeRollout(in);

  for (const Replacement& r : plan.replace) {
    try {
      const kube::DeleteOptions options = deleteOnly(r.uid);
      co_await client_.remove(kube::resources::pods, e.namespace_, r.pod, options);
      co_await events_.record(dd, false, "NodePluginReplaced",
                              "replaced node plugin pod " + r.pod + " on node " + r.node + ": " +
                                  r.why);
    } catch (const kube::ApiError& err) {
      if (!err.isNotFound() && !err.isConflict()) {
        o.applyErrors.push_back("replacing node plugin pod " + r.pod + ": " + err.what());
      }
    }
  }
  std::set<std::string>& waiting = waitingNodes_[e.name];
  waiting.clear();
  Observed::NodeUpdate update{plan.updated, plan.outdated, {}};
  for (const NodeWait& w : plan.waiting) {
    waiting.insert(w.node);
    update.waiting.push_back(api::NodeWaiting{w.node, w.reason, w.message});
  }
  o.nodeUpdate = std::move(update);
}

void Reconciler::noteUnmanaged(const Json& child, Observed& o) {
  o.unmanaged.push_back(unmanagedEntry(child));
  if (flagAnnotation(child, render::kUnmanagedAnnotation) == Flag::Invalid) {
    o.annotationProblems.push_back(
        invalidFlagMessage(child, render::kUnmanagedAnnotation, keyOf(child).str()) +
        "; left unmanaged until it is corrected");
  }
}

void Reconciler::observeWorkloads(const api::Effective& e, Observed& o) {
  // A workload this reconciler applied a new spec to, before the cache shows it: its status is
  // that of the old spec, which the new one is not.
  const auto observe = [this](const Json& w, bool daemonSet) {
    Observed::Workload out = workload(w, daemonSet);
    out.observedCurrent = out.observedCurrent && !behindLastApply(w);
    return out;
  };
  if (const Json* ds = caches_.child("DaemonSet")->get(e.namespace_, e.name + "-node")) {
    o.nodes = observe(*ds, true);
  }
  if (e.hasControllerWorkload()) {
    if (const Json* w =
            caches_.child(e.controller->kind)->get(e.namespace_, e.name + "-controller")) {
      o.controller = observe(*w, false);
    }
  }
  std::vector<const Json*> pods;
  for (const Json* pod : caches_.pods.byIndex(kByOwner, e.name)) {
    if (metadataField(*pod, "namespace") == e.namespace_) {
      pods.push_back(pod);
    }
  }
  o.podProblems = podProblems(pods);
  o.registered = static_cast<std::int32_t>(caches_.nodesRegistering(e.driverName));
}

asio::awaitable<std::optional<std::string>> Reconciler::deletionBlocker(const Json& dd,
                                                                        Observed& o) {
  const Json spec = dd.value("spec", Json::object());
  if (stringField(spec, "deletionPolicy", "Delete") == "Orphan") {
    co_return std::nullopt; // the driver stays: nothing is stranded
  }
  const Flag force = flagAnnotation(dd, render::kForceDeleteAnnotation);
  const VolumeUsage usage = caches_.volumesOf(stringField(spec, "driverName"));
  if (usage.empty()) {
    co_return std::nullopt;
  }
  if (force == Flag::Yes) {
    const std::string uid = metadataField(dd, "uid");
    if (forcedDeletions_.insert(uid).second) {
      co_await events_.record(dd, true, "DeletionForced",
                              std::string(render::kForceDeleteAnnotation) +
                                  "=true: deleting the driver although " + describe(usage) +
                                  " still use it");
    }
    co_return std::nullopt;
  }
  if (force == Flag::Invalid) {
    o.annotationProblems.push_back(
        invalidFlagMessage(dd, render::kForceDeleteAnnotation, "the DriverDeployment") +
        "; the deletion stays blocked");
  }
  co_return describe(usage);
}

asio::awaitable<ReconcileResult>
Reconciler::reconcilePaused(const Json& dd, Observed& o,
                            const std::optional<api::DriverDeploymentStatus>& previous) {
  if (!conditionTrue(previous, condition::kPaused)) {
    co_await events_.record(dd, false, "Paused",
                            o.deleting ? "spec.paused is true: the deletion waits until it is false"
                                       : "spec.paused is true: nothing is applied, pruned or "
                                         "deleted until it is false");
  }
  // The status stays what was last observed, with the pause said (and observed).
  api::DriverDeploymentStatus s = previous.value_or(api::DriverDeploymentStatus{});
  s.observedGeneration = o.generation;
  std::vector<api::Condition> conditions = s.conditions.value_or(std::vector<api::Condition>{});
  setLifecycleConditions(o, conditions, now_());
  s.conditions = std::move(conditions);
  bool statusConflict = false;
  try {
    co_await writeStatus(dd, s);
  } catch (const kube::ApiError& e) {
    if (!e.isConflict() && !e.isNotFound()) {
      throw;
    }
    statusConflict = true; // changed meanwhile: its event queues it again
  }
  if (statusConflict) {
    co_return ReconcileResult{
        ReconcileResult::Outcome::Requeue, std::chrono::milliseconds(200), {}};
  }
  co_return ReconcileResult{};
}

asio::awaitable<void> Reconciler::orphan(const Json& child) {
  const ObjectKey k = keyOf(child);
  // No owner reference (so the garbage collector keeps it), no owner marks.
  Json patch = {{"metadata",
                 {{"ownerReferences", nullptr},
                  {"labels", {{render::kOwnerLabel, nullptr}}},
                  {"annotations", {{render::kOwnerUidAnnotation, nullptr}}}}}};
  try {
    co_await client_.patch(*caches_.resourceOf(k.kind), k.namespace_, k.name,
                           kube::PatchType::Merge, std::move(patch));
  } catch (const kube::ApiError& e) {
    if (!e.isNotFound()) {
      throw;
    }
  }
}

asio::awaitable<ReconcileResult> Reconciler::finalize(const Json& dd) {
  const std::string name = metadataField(dd, "name");
  const std::string uid = metadataField(dd, "uid");
  const std::string policy =
      stringField(dd.value("spec", Json::object()), "deletionPolicy", "Delete");
  std::vector<Json> children = ownedChildren(name, uid);
  sortForDeletion(children);
  // Children marked unmanaged are left as they are, whatever the policy: orphaned.
  std::vector<Json> handsOff;
  std::erase_if(children, [&](const Json& c) {
    if (managed(c)) {
      return false;
    }
    handsOff.push_back(c);
    return true;
  });
  for (const Json& c : handsOff) {
    co_await orphan(c);
    co_await events_.record(dd, false, "Orphaned",
                            keyOf(c).str() + " carries " + render::kUnmanagedAnnotation +
                                ": left in place, no longer owned");
  }
  if (policy == "Orphan") {
    for (const Json& c : children) {
      co_await orphan(c);
    }
  } else {
    // Everything else first, the CSIDriver once nothing else is left.
    const bool onlyDriverLeft = std::all_of(children.begin(), children.end(), [](const Json& c) {
      return c.value("kind", std::string()) == "CSIDriver";
    });
    for (const Json& c : children) {
      const ObjectKey k = keyOf(c);
      if (k.kind == "CSIDriver" && !onlyDriverLeft) {
        continue;
      }
      spdlog::info("deleting {} of DriverDeployment {}", k.str(), name);
      try {
        const std::string childUid = metadataField(c, "uid");
        const kube::DeleteOptions options = deleteOnly(childUid, true);
        co_await client_.remove(*caches_.resourceOf(k.kind), k.namespace_, k.name, options);
      } catch (const kube::ApiError& e) {
        if (!e.isNotFound()) {
          throw;
        }
      }
    }
    if (!children.empty()) {
      // Wait until the caches show them gone.
      co_return ReconcileResult{
          ReconcileResult::Outcome::Requeue, std::chrono::milliseconds(300), {}};
    }
  }
  const Json current = dd["metadata"]["finalizers"];
  Json without = Json::array();
  for (const auto& f : current) {
    if (f != kFinalizer) {
      without.push_back(f);
    }
  }
  Json patch = Json::array();
  patch.push_back({{"op", "test"}, {"path", "/metadata/finalizers"}, {"value", current}});
  patch.push_back({{"op", "replace"}, {"path", "/metadata/finalizers"}, {"value", without}});
  co_await client_.patch(r::driverdeployments, "", name, kube::PatchType::JsonPatch,
                         std::move(patch));
  co_return ReconcileResult{};
}

} // namespace csiop::controller
