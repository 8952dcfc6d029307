// The finalizer, in one place (as kube-rs's finalizer(apply, cleanup)): a DriverDeployment the
// operator manages carries csiop.dev/cleanup; once it is deleted, its children go (or are
// orphaned, deletionPolicy Orphan) and then the finalizer, unless volumes of its driver are in
// use: the deletion then waits, and the driver is managed on.
#include <csiop/driverdeployment/reconciler.hpp>

#include <algorithm>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include <csiop/api/defaults.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/object_key.hpp>
#include <csiop/driverdeployment/ownership.hpp>
#include <csiop/driverdeployment/pruning.hpp>
#include <csiop/driverdeployment/unmanaged.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/render/render.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"
#include "requests.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
namespace r = kube::resources;
using api::Json;
using api::metadataField;
using api::stringField;

namespace {

// The JSON patch that sets metadata.finalizers to `list` with `op` ("add" or "replace"), guarded
// by a "test" of the list as read (when there is one): it fails, and the pass is retried, if
// someone changed the list meanwhile.
Json finalizersPatch(const Json& metadata, const char* op, Json list) {
  Json patch = Json::array();
  if (metadata.contains("finalizers")) {
    patch.push_back(
        {{"op", "test"}, {"path", "/metadata/finalizers"}, {"value", metadata["finalizers"]}});
  }
  patch.push_back({{"op", op}, {"path", "/metadata/finalizers"}, {"value", std::move(list)}});
  return patch;
}

// Sets the DriverDeployment's finalizers to `list`, if they are still those of `metadata`.
asio::awaitable<kube::Attempt<Json>> patchFinalizers(kube::Client& client, const std::string& name,
                                                     const Json& metadata, const char* op,
                                                     Json list) {
  Json patch = finalizersPatch(metadata, op, std::move(list));
  co_return co_await kube::attempt(
      client.patch(r::driverdeployments, "", name, kube::PatchType::JsonPatch, std::move(patch)));
}

} // namespace

asio::awaitable<StepResult> Reconciler::finalizeUnlessBlocked(ReconcileRun& run) {
  Observed& observed = run.observed;
  if (!observed.deleting) {
    co_return std::nullopt;
  }
  // The smoke and provision tests go first (their volumes are the driver's to remove), listed
  // whatever this process remembers of them: a test the previous process left is found too.
  // Meanwhile the pods that may use the driver's inline volumes are listed (deletionBlocker):
  // one round trip for the three.
  // (Named: the coroutines hold references to their arguments until they run.)
  provisionsClean_.erase(run.name);
  const std::set<std::string> keepNone;
  const Json& spec = api::member(run.dd, "spec");
  const std::string driverName = stringField(spec, "driverName");
  std::vector<asio::awaitable<bool>> first;
  first.push_back(sweepSmokeTests(run, keepNone));
  first.push_back(sweepProvisionTests(run));
  if (stringField(spec, "deletionPolicy", "Delete") != "Orphan") {
    first.push_back(knowVolumeUsers(run, driverName, false));
  }
  co_await runtime::allOf(std::move(first));
  observed.deletionBlocked = co_await deletionBlocker(run);
  if (!observed.deletionBlocked) {
    co_return co_await finalize(run);
  }
  // The driver keeps being managed (its volumes need it) until they are gone.
  if (!conditionTrue(run.previous, condition::kDeletionBlocked)) {
    co_await events_.record(run.dd, true, "DeletionBlocked",
                            "the deletion waits until no volume of the driver is in use: " +
                                *observed.deletionBlocked);
  }
  co_return std::nullopt;
}

asio::awaitable<StepResult> Reconciler::ensureFinalizer(ReconcileRun& run) {
  Json& dd = run.dd;
  if (run.observed.deleting || hasFinalizer(dd, kFinalizer)) {
    co_return std::nullopt; // a finalizer cannot be added once the deletion has begun
  }
  Json with = dd["metadata"].value("finalizers", Json::array());
  with.push_back(kFinalizer);
  auto updated =
      co_await patchFinalizers(client_, run.name, dd["metadata"], "add", std::move(with));
  if (!updated) {
    co_return failedWith(
        ErrorLine::of("adding the finalizer " + std::string(kFinalizer) + ": ", updated));
  }
  dd["metadata"] = (*updated)["metadata"];
  co_return std::nullopt;
}

asio::awaitable<std::optional<std::string>> Reconciler::deletionBlocker(ReconcileRun& run) {
  const Json& dd = run.dd;
  const Json spec = dd.value("spec", Json::object());
  if (stringField(spec, "deletionPolicy", "Delete") == "Orphan") {
    co_return std::nullopt; // the driver stays: nothing is stranded
  }
  const Flag force = flagAnnotation(dd, api::kForceDeleteAnnotation);
  const std::string driverName = stringField(spec, "driverName");
  if (!co_await knowVolumeUsers(run, driverName, false) && force != Flag::Yes) {
    co_return "the pods that may use the driver's inline volumes are not listed yet";
  }
  const VolumeUsage usage = caches_.volumesOf(driverName, run.testOwner());
  if (usage.empty()) {
    if (!usage.tests.empty() && force != Flag::Yes) {
      // Swept above; the driver removes their volumes, which it could not do once gone.
      co_return describeTests(usage) + " (removed; the driver removes their volumes)";
    }
    co_return std::nullopt;
  }
  if (force == Flag::Yes) {
    if (std::string& recorded = forcedDeletions_[run.name]; recorded != run.uid) {
      recorded = run.uid;
      co_await events_.record(dd, true, "DeletionForced",
                              std::string(api::kForceDeleteAnnotation) +
                                  "=true: deleting the driver although " + describe(usage) +
                                  " still use it");
    }
    co_return std::nullopt;
  }
  if (force == Flag::Invalid) {
    run.observed.annotationProblems.push_back(
        invalidFlagMessage(dd, api::kForceDeleteAnnotation, "the DriverDeployment") +
        "; the deletion stays blocked");
  }
  co_return describe(usage);
}

asio::awaitable<std::optional<ErrorLine>> Reconciler::orphan(const Json& child) {
  const ObjectKey key = keyOf(child);
  // No owner reference (so the garbage collector keeps it), no owner marks.
  Json patch = {{"metadata",
                 {{"ownerReferences", nullptr},
                  {"labels", {{api::kOwnerLabel, nullptr}}},
                  {"annotations", {{api::kOwnerUidAnnotation, nullptr}}}}}};
  auto patched =
      co_await kube::attempt(client_.patch(*caches_.resourceOf(key.kind), key.namespace_, key.name,
                                           kube::PatchType::Merge, std::move(patch)));
  if (!patched && !patched.notFound()) {
    co_return ErrorLine::of("orphaning " + key.str() + ": ", patched);
  }
  co_return std::nullopt;
}

asio::awaitable<std::optional<ErrorLine>>
Reconciler::deleteChild(const Json& child, std::string owner, bool* lingers) {
  const ObjectKey key = keyOf(child);
  spdlog::info("deleting {} of DriverDeployment {}", key.str(), owner);
  const std::string uid = metadataField(child, "uid"); // the options view it
  const kube::DeleteOptions options = deleteOnly(uid, true);
  auto removed = co_await kube::attempt(
      client_.remove(*caches_.resourceOf(key.kind), key.namespace_, key.name, options));
  if (removed.notFound()) {
    co_return std::nullopt;
  }
  if (!removed) {
    co_return ErrorLine::of("deleting " + key.str() + ": ", removed);
  }
  // The answer is a Status, or the object as deleted; one with finalizers is still there.
  if (lingers != nullptr && !api::member(api::member(*removed, "metadata"), "finalizers").empty()) {
    *lingers = true;
  }
  co_return std::nullopt;
}

asio::awaitable<std::optional<ErrorLine>> Reconciler::removeFinalizer(const ReconcileRun& run) {
  const Json& metadata = run.dd["metadata"];
  Json without = Json::array();
  for (const auto& f : metadata.value("finalizers", Json::array())) {
    if (f != kFinalizer) {
      without.push_back(f);
    }
  }
  auto patched =
      co_await patchFinalizers(client_, run.name, metadata, "replace", std::move(without));
  if (!patched && !patched.notFound()) { // not found: gone already (a pass before this one)
    co_return ErrorLine::of("removing the finalizer " + std::string(kFinalizer) + ": ", patched);
  }
  co_return std::nullopt;
}

asio::awaitable<ReconcileResult> Reconciler::finalize(const ReconcileRun& run) {
  const Json& dd = run.dd;
  const std::string policy =
      stringField(dd.value("spec", Json::object()), "deletionPolicy", "Delete");
  std::vector<Json> children; // copies: the deletes below wait, and the caches change meanwhile
  for (const Json* child : ownedChildren(run.name, run.uid)) {
    children.push_back(*child);
  }
  sortForDeletion(children);
  // Children marked unmanaged are left as they are, whatever the policy: orphaned.
  std::vector<Json> handsOff;
  std::erase_if(children, [&](const Json& child) {
    if (managed(child)) {
      return false;
    }
    handsOff.push_back(child);
    return true;
  });
  for (const Json& child : handsOff) {
    if (std::optional<ErrorLine> error = co_await orphan(child)) {
      co_return failedWith(std::move(*error));
    }
    co_await events_.record(dd, false, "Orphaned",
                            keyOf(child).str() + " carries " + api::kUnmanagedAnnotation +
                                ": left in place, no longer owned");
  }
  std::vector<asio::awaitable<std::optional<ErrorLine>>> last;
  if (policy == "Orphan") {
    for (const Json& child : children) {
      if (std::optional<ErrorLine> error = co_await orphan(child)) {
        co_return failedWith(std::move(*error));
      }
    }
  } else {
    // Every child but the CSIDriver at once, in the background (the garbage collector removes
    // what each owns; a workload's pods terminate after it is gone, whatever the order of the
    // deletes). Once every answer says its child is gone, the CSIDriver: the driver name stays
    // claimed until nothing else of the driver is left.
    const Json* driver = nullptr;
    bool lingers = false;
    std::vector<asio::awaitable<std::optional<ErrorLine>>> deletions;
    for (const Json& child : children) {
      if (keyOf(child).kind == "CSIDriver") {
        driver = &child;
        continue;
      }
      deletions.push_back(deleteChild(child, run.name, &lingers));
    }
    for (std::optional<ErrorLine>& error : co_await runtime::allOf(std::move(deletions))) {
      if (error) {
        co_return failedWith(std::move(*error));
      }
    }
    if (lingers) {
      // A child's own finalizers hold it: until the caches show it gone.
      co_return ReconcileResult::requeueAfter(requeue::kChildrenGoing);
    }
    if (driver != nullptr) {
      last.push_back(deleteChild(*driver, run.name, nullptr));
    }
  }
  // With the CSIDriver's delete, the finalizer: should that delete fail, the CSIDriver's owner
  // reference hands it to the garbage collector once the DriverDeployment is gone.
  last.push_back(removeFinalizer(run));
  std::vector<std::optional<ErrorLine>> errors = co_await runtime::allOf(std::move(last));
  if (!errors.back()) {
    finalized_[run.name] = run.uid;
  }
  for (std::optional<ErrorLine>& error : errors) {
    if (error) {
      co_return failedWith(std::move(*error));
    }
  }
  co_return ReconcileResult::done();
}

} // namespace csiop::driverdeployment
