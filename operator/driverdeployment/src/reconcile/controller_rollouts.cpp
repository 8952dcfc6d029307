// spec.rollout type Verified for the controller workload (controller_rollout.hpp plans it): the
// Deployment or StatefulSet rolls its pods by its own strategy; the operator verifies the new
// pod template (its replicas available; where the smoke volume names a StorageClass, a claim
// provisioned through it) and puts the previous revision's template back when a gate fails.
//   holdFailedController (with holdFailedNodePlugins, before the children are applied): a
//     workload whose desired template is the one that failed carries the previous revision's
//     template: the Deployment's ReplicaSet <workload>-<pod-template-hash>, or the StatefulSet's
//     ControllerRevision <workload>-<controller-revision-hash>;
//   rollController (with the node plugin step): plans from the cached workload and its pods,
//     creates, reads and deletes the provision test's claim, records the Events.
#include <csiop/driverdeployment/reconciler.hpp>

#include <algorithm>

#include <csiop/api/json_access.hpp>
#include <csiop/api/rfc3339.hpp>
#include <csiop/driverdeployment/controller_rollout.hpp>
#include <csiop/driverdeployment/object_key.hpp>
#include <csiop/driverdeployment/ownership.hpp>
#include <csiop/driverdeployment/smoke_volume.hpp>
#include <csiop/driverdeployment/unmanaged.hpp>
#include <csiop/kube/attempt.hpp>
#include <spdlog/spdlog.h>

#include "reconcile_run.hpp"
#include "requests.hpp"
#include "rollout_records.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::member;
using api::metadataField;
using api::stringField;

namespace {

std::string controllerName(const api::Effective& effective) {
  return effective.name + "-controller";
}

// A claim of a StorageClass to provision: the controller's smoke test (an ephemeral volume
// never reaches the controller).
bool provisionTest(const api::Effective& effective) {
  return effective.rollout.smokeVolume && !effective.rollout.smokeVolume->storageClassName.empty();
}

std::int32_t intField(const Json& object, const char* key) {
  const Json& value = member(object, key);
  return value.is_number_integer() ? value.get<std::int32_t>() : 0;
}

} // namespace

RolloutRecord& Reconciler::controllerRecord(ReconcileRun& run) {
  if (const auto it = controllerRollouts_.find(run.name); it != controllerRollouts_.end()) {
    return it->second;
  }
  RolloutRecord record;
  if (run.previous && run.previous->rollout && run.previous->rollout->controller) {
    record = recordOf(*run.previous->rollout->controller);
  }
  return controllerRollouts_[run.name] = std::move(record);
}

asio::awaitable<bool> Reconciler::holdFailedController(ReconcileRun& run) {
  const api::Effective& effective = *run.effective;
  if (!effective.rollout.verified || !effective.hasControllerWorkload()) {
    if (controllerRollouts_.erase(run.name) > 0) {
      co_await sweepProvisionTests(run); // a test the spec no longer asks for
    }
    co_return true;
  }
  const std::string name = controllerName(effective);
  const std::string& kind = effective.controller->kind;
  auto desired = std::find_if(run.desired.begin(), run.desired.end(), [&](const Json& o) {
    return stringField(o, "kind") == kind && metadataField(o, "name") == name;
  });
  if (desired == run.desired.end()) {
    co_return true;
  }
  RolloutRecord& record = controllerRecord(run);
  if (run.heldWorkloads.contains(keyOf(*desired).str())) {
    // An operator update held (operatorUpdates Manual): the workload keeps its template, and the
    // rollout its record, until the change is approved and applied.
    co_return true;
  }
  const std::string digest = templateDigest(*desired);
  run.controllerTemplate = digest;
  const std::string retry =
      stringField(member(member(run.dd, "metadata"), "annotations"), api::kRetryRolloutAnnotation);
  if (!retry.empty() && retry != record.retry && !record.failedTemplate.empty()) {
    // An admin asks for the failed template to be tried again.
    // The rollout starts over from the revision that runs: a completed record of another
    // template than the desired one.
    RolloutRecord fresh;
    fresh.retry = retry;
    fresh.phase = RolloutPhase::Complete;
    fresh.revision = record.from;
    fresh.template_ = "retry " + retry;
    record = std::move(fresh);
    // Named, as every argument below: GCC 12 mishandles temporaries made inside a co_await
    // expression.
    const std::string message = "retrying the controller rollout (" +
                                std::string(api::kRetryRolloutAnnotation) + "=" + retry + ")";
    co_await events_.record(run.dd, false, "RolloutRetried", message);
  }
  if (!keepPreviousTemplate(record, digest)) {
    co_return true;
  }
  const bool deployment = kind == "Deployment";
  const std::string previousName = name + "-" + record.from;
  const kube::ResourceRef& history =
      deployment ? kube::resources::replicasets : kube::resources::controllerrevisions;
  auto previous =
      co_await kube::attempt(client_.getOpt(history, effective.namespace_, previousName));
  if (!previous) {
    run.addError(ErrorLine::of("reading the previous controller revision " + record.from +
                                   " to roll back to: ",
                               previous));
    co_return false; // the failed template is not applied again meanwhile
  }
  Json podTemplate;
  if (*previous) {
    podTemplate = deployment ? member(member(**previous, "spec"), "template")
                             : member(member(member(**previous, "data"), "spec"), "template");
  }
  if (!podTemplate.is_object()) {
    // The workload's history no longer has it: nothing to go back to; hold instead.
    record.phase = RolloutPhase::Held;
    record.message += "; the previous revision " + record.from +
                      " is no longer in the workload's history: holding instead of rolling back";
    co_return true;
  }
  podTemplate.erase("$patch"); // a ControllerRevision stores it as a replacing patch
  if (Json& labels = podTemplate["metadata"]["labels"]; labels.is_object()) {
    labels.erase("pod-template-hash"); // the Deployment controller's, not the template's
  }
  (*desired)["spec"]["template"] = std::move(podTemplate);
  co_return true;
}

asio::awaitable<void> Reconciler::rollController(ReconcileRun& run) {
  const api::Effective& effective = *run.effective;
  if (!effective.hasControllerWorkload()) {
    co_await sweepProvisionTests(run);
    co_return;
  }
  const std::string name = controllerName(effective);
  const CachedChild* cached =
      caches_.child(effective.controller->kind)->get(effective.namespace_, name);
  if (cached == nullptr || !ownedBy(cached->head, run.uid) || !managed(cached->head)) {
    co_return;
  }
  RolloutRecord& record = controllerRecord(run);
  const bool smokeVolume = provisionTest(effective);
  const auto report = [&](const std::string& waiting) {
    api::ControllerRolloutStatus reported = controllerStatusOf(record);
    reported.gates = std::vector<std::string>{"Available"};
    if (smokeVolume) {
      reported.gates->push_back("SmokeVolume");
    }
    if (!waiting.empty() && reported.message.value_or("").empty()) {
      reported.message = waiting;
    }
    if (!run.observed.rollout) {
      run.observed.rollout.emplace();
    }
    run.observed.rollout->controller = std::move(reported);
  };
  if (run.controllerTemplate.empty()) {
    report("an operator update of the workload is held (condition " +
           std::string(condition::kOperatorUpdateHeld) + "): nothing is rolled out");
    co_return;
  }
  if (!run.podsRead) {
    report(""); // nothing moves and the rollout is finished (pod_reads.hpp): as last planned
    co_return;
  }
  const Json& head = cached->head;
  const Json& status = member(head, "status");
  ControllerRolloutInput input;
  input.now = api::parseRfc3339OrEpoch(now_());
  input.policy = policyOf(effective.rollout, 0);
  input.policy.smokeVolume = smokeVolume;
  input.previous = record;
  input.templateDigest = run.controllerTemplate;
  ControllerWorkload& workload = input.workload;
  workload.settled =
      member(status, "observedGeneration") == member(member(head, "metadata"), "generation") &&
      !applied_.behindLastApply(head);
  workload.replicas = effective.controller->replicas;
  workload.current = intField(status, "replicas");
  workload.updated = intField(status, "updatedReplicas");
  workload.available = intField(status, "availableReplicas");
  workload.orderedPods = effective.controller->kind == "StatefulSet";
  const std::string podPrefix = name + "-";
  for (const CachedPod* pod : workloadPods(run)) {
    if (pod->name.rfind(podPrefix, 0) == 0) {
      workload.pods.push_back({pod->name, pod->uid, pod->nodeName, pod->revisionHash, pod->deleting,
                               pod->ready, pod->created, pod->readySince, pod->crashLoop()});
    }
  }
  // The provision test of the template under test, read while it is verified.
  const std::string claimName = provisionName(effective.name, run.controllerTemplate);
  if (input.policy.smokeVolume && record.phase == RolloutPhase::Canary &&
      record.template_ == run.controllerTemplate) {
    auto claim = co_await kube::attempt(
        client_.getOpt(kube::resources::persistentvolumeclaims, effective.namespace_, claimName));
    if (!claim) {
      run.addError(ErrorLine::of("reading the provision test " + claimName + ": ", claim));
    } else if (*claim) {
      input.smokeStarted =
          api::parseRfc3339OrEpoch(stringField(member(**claim, "metadata"), "creationTimestamp"));
      std::vector<Json> events;
      if (stringField(member(**claim, "status"), "phase") != "Bound") {
        const std::string selector = "involvedObject.name=" + claimName;
        auto listed = co_await kube::attempt(client_.listAll(
            kube::resources::events, effective.namespace_, {.fieldSelector = selector}));
        if (listed) {
          events = std::move(listed->items);
        }
      }
      input.smoke = readProvision(**claim, events);
    }
  }
  const ControllerRolloutPlan plan = planControllerRollout(input);
  record = plan.record;
  if (plan.smoke && input.smoke.state == SmokeResult::State::NotStarted) {
    ProvisionTarget target;
    target.owner = effective.name;
    target.ownerUid = run.uid;
    target.namespace_ = effective.namespace_;
    target.templateDigest = run.controllerTemplate;
    target.volume = *effective.rollout.smokeVolume;
    // A node where the driver is registered (the first by name), for the provisioner of a
    // WaitForFirstConsumer class.
    for (const CachedCSINode* node : caches_.csiNodes.byIndex(kByDriver, effective.driverName)) {
      if (target.node.empty() || node->name < target.node) {
        target.node = node->name;
      }
    }
    const Json claim = provisionClaim(target);
    auto created =
        co_await kube::attempt(client_.create(kube::resources::persistentvolumeclaims, claim));
    if (!created && !created.alreadyExists()) {
      run.addError(ErrorLine::of("creating the provision test " + claimName + ": ", created));
    } else {
      spdlog::info("created the provision test {}/{} of DriverDeployment {}", effective.namespace_,
                   claimName, effective.name);
      provisionsClean_.erase(effective.name);
    }
  }
  if (!plan.smoke) {
    co_await sweepProvisionTests(run);
  }
  for (const RolloutEvent& event : plan.events) {
    co_await events_.record(run.dd, event.warning, event.reason, event.message);
  }
  // A StatefulSet's broken pods, once it carries the previous template: its controller would
  // wait for them forever.
  co_await replacePluginPods(run, plan.deletePods, true);
  report(plan.waiting);
  if (inProgress(record.phase)) {
    run.requeueAfter(requeue::kRolloutCheck); // deadlines pass with no event
  }
}

asio::awaitable<bool> Reconciler::sweepProvisionTests(ReconcileRun& run) {
  const SmokeTestOwner owner = run.testOwner();
  const std::string& dd = owner.name;
  if (provisionsClean_.contains(dd)) {
    co_return true;
  }
  const std::string& ns = owner.namespace_;
  const std::string selector = std::string(kProvisionLabel) + "=" + dd;
  auto listed = co_await kube::attempt(
      client_.listAll(kube::resources::persistentvolumeclaims, ns, {.labelSelector = selector}));
  if (!listed) {
    run.addError(ErrorLine::of("listing the provision tests: ", listed));
    co_return false;
  }
  bool clean = true;
  for (const Json& claim : listed->items) {
    const std::string name = metadataField(claim, "name");
    if (!member(member(claim, "metadata"), "deletionTimestamp").is_null()) {
      continue;
    }
    spdlog::info("deleting the provision test {}/{} of DriverDeployment {}", ns, name, dd);
    const std::string uid = metadataField(claim, "uid");
    const kube::DeleteOptions options = deleteOnly(uid);
    auto removed = co_await kube::attempt(
        client_.remove(kube::resources::persistentvolumeclaims, ns, name, options));
    if (!removed && !removed.notFound() && !removed.conflict()) {
      run.addError(ErrorLine::of("deleting the provision test " + name + ": ", removed));
      clean = false;
    }
  }
  if (clean) {
    provisionsClean_.insert(dd);
  }
  co_return clean;
}

} // namespace csiop::driverdeployment
