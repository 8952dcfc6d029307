// The status, the only place it is written: from what the pass observed (computeStatus is pure),
// or what a step that ended the pass early asked for (paused, an invalid spec, a name conflict);
// written only when it differs from what the server holds.
#include <csiop/driverdeployment/reconciler.hpp>

#include <csiop/api/codec.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/compare.hpp>
#include <csiop/driverdeployment/pod_creation.hpp>
#include <csiop/driverdeployment/pod_problems.hpp>
#include <csiop/kube/attempt.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::metadataField;

namespace {

Observed::Workload workload(const Json& live, bool daemonSet) {
  const Json status = live.value("status", Json::object());
  const auto num = [&](const Json& object, const char* field) {
    return object.contains(field) && object[field].is_number_integer()
               ? object[field].get<std::int32_t>()
               : 0;
  };
  Observed::Workload counts;
  const auto generation = live["metadata"].value("generation", Json(0));
  counts.observedCurrent = status.value("observedGeneration", Json(-1)) == generation;
  if (daemonSet) {
    counts.desired = num(status, "desiredNumberScheduled");
    counts.updated = num(status, "updatedNumberScheduled");
    counts.ready = num(status, "numberReady");
  } else {
    counts.desired = num(live.value("spec", Json::object()), "replicas");
    counts.updated = num(status, "updatedReplicas");
    counts.ready = num(status, "readyReplicas");
  }
  return counts;
}

} // namespace

asio::awaitable<StepResult> Reconciler::reportStatus(ReconcileRun& run) {
  if (run.endedEarly) {
    api::DriverDeploymentStatus status;
    switch (run.endedEarly->status) {
    case EarlyStatus::Paused:
      status = pausedStatus(run.observed, run.previous, now_());
      break;
    case EarlyStatus::InvalidSpec:
      status = invalidSpecStatus(run.observed, run.previous, run.specErrors, now_());
      break;
    case EarlyStatus::NameConflict:
      status = computeStatus(run.observed, run.previous, now_());
      break;
    }
    if (std::optional<ReconcileResult> end = co_await writeStatus(run, status)) {
      co_return std::move(*end);
    }
    co_return std::move(run.endedEarly->result);
  }
  observeWorkloads(run);
  run.observed.apiWarnings = applied_.warningsOf(run.name);
  const api::DriverDeploymentStatus status = computeStatus(run.observed, run.previous, now_());
  if (std::optional<ReconcileResult> end = co_await writeStatus(run, status)) {
    co_return std::move(*end);
  }
  if (!run.observed.applyErrors.empty()) {
    co_return ReconcileResult::error(run.observed.applyErrors.front(), run.retryWait);
  }
  if (run.pollConfig) {
    run.requeueAfter(configPollPeriod_);
  }
  if (run.requeue) {
    co_return ReconcileResult::requeueAfter(*run.requeue);
  }
  co_return ReconcileResult::done();
}

void Reconciler::observeWorkloads(ReconcileRun& run) {
  const api::Effective& effective = *run.effective;
  Observed& observed = run.observed;
  // A workload this reconciler applied a new spec to, before the cache shows it: its status is
  // that of the old spec, which the new one is not.
  const auto observe = [this](const Json& live, bool daemonSet) {
    Observed::Workload out = workload(live, daemonSet);
    out.observedCurrent = out.observedCurrent && !applied_.behindLastApply(live);
    return out;
  };
  const CachedChild* nodePlugin = caches_.child(effective.nodeWorkloadKind())
                                      ->get(effective.namespace_, effective.name + "-node");
  if (nodePlugin != nullptr) {
    observed.nodes = observe(nodePlugin->head, !effective.singlePod());
  }
  // The Windows node plugin's nodes count as nodes of the driver alike.
  if (effective.windowsNode) {
    const CachedChild* daemonSet =
        caches_.child("DaemonSet")->get(effective.namespace_, effective.name + "-node-windows");
    if (daemonSet == nullptr) {
      observed.nodes.reset(); // not created yet: the node plugins are not all there
    } else if (observed.nodes) {
      const Observed::Workload windows = observe(daemonSet->head, true);
      observed.nodes->desired += windows.desired;
      observed.nodes->updated += windows.updated;
      observed.nodes->ready += windows.ready;
      observed.nodes->observedCurrent = observed.nodes->observedCurrent && windows.observedCurrent;
      if (observed
              .nodeUpdate) { // the Linux plugin's own rollout counts its pods; these are current
        observed.nodeUpdate->updated += windows.updated;
      }
    }
  }
  if (effective.hasControllerWorkload()) {
    if (const CachedChild* controller =
            caches_.child(effective.controller->kind)
                ->get(effective.namespace_, effective.name + "-controller")) {
      observed.controller = observe(controller->head, false);
    }
  }
  observed.podProblems = podProblems(workloadPods(run));
  // Workloads short of pods their controller could not create: the FailedCreate Events (a
  // Deployment's ReplicaFailure condition).
  std::vector<std::pair<std::string, std::string>> workloads = {
      {effective.nodeWorkloadKind(), effective.name + "-node"}};
  if (effective.windowsNode) {
    workloads.emplace_back("DaemonSet", effective.name + "-node-windows");
  }
  if (effective.hasControllerWorkload()) {
    workloads.emplace_back(effective.controller->kind, effective.name + "-controller");
  }
  for (const auto& [kind, name] : workloads) {
    const CachedChild* workload = caches_.child(kind)->get(effective.namespace_, name);
    if (workload == nullptr) {
      continue;
    }
    const std::vector<const Json*> events =
        caches_.failedCreates.byIndex(kByWorkload, workloadKey(kind, effective.namespace_, name));
    if (std::optional<std::string> failure = podCreationFailure(workload->head, events)) {
      observed.podCreationFailures.push_back(std::move(*failure));
    }
  }
  if (!effective.singlePod()) {
    observed.registered = static_cast<std::int32_t>(caches_.nodesRegistering(effective.driverName));
    return;
  }
  // One pod: registered where it runs. A node it ran on before may still list the driver (its
  // kubelet removes it only once the registrar's socket is gone), and counts for nothing.
  observed.registered = 0;
  if (nodePlugin != nullptr) {
    for (const CachedPod* pod : nodePluginPods(run, api::metadataField(nodePlugin->head, "uid"))) {
      const CachedCSINode* csiNode = caches_.csiNodes.get("", pod->nodeName);
      if (!pod->nodeName.empty() && csiNode != nullptr &&
          std::ranges::find(csiNode->drivers, effective.driverName) != csiNode->drivers.end()) {
        ++observed.registered;
      }
    }
  }
}

asio::awaitable<std::optional<ReconcileResult>>
Reconciler::writeStatus(const ReconcileRun& run, const api::DriverDeploymentStatus& toWrite) {
  const Json status = api::encode(toWrite);
  const std::string& name = run.name;
  const std::string cachedVersion = metadataField(run.dd, "resourceVersion");
  auto written = statusWritten_.find(name);
  if (written != statusWritten_.end() && written->second.resourceVersion == cachedVersion) {
    statusWritten_.erase(written); // the cache shows the last write
    written = statusWritten_.end();
  }
  // The status the server holds, as far as this reconciler knows: the cached one, unless the
  // cache does not show the last write yet. A status equal to an older cached one (a rollout
  // that went back to where it was) must still be written.
  if (sameJson(run.dd.value("status", Json()), status) &&
      (written == statusWritten_.end() || sameJson(written->second.status, status))) {
    co_return std::nullopt; // nothing changed: no write
  }
  Json body = run.dd;
  body["status"] = status;
  auto result = co_await kube::attempt(client_.update(kube::resources::driverdeployments,
                                                      std::move(body), {.subresource = "status"}));
  if (result.conflict() || result.notFound()) {
    // Changed (or deleted) meanwhile: its own watch event queues it again.
    co_return ReconcileResult::requeueAfter(requeue::kStatusConflict);
  }
  if (!result) {
    co_return failedWith(ErrorLine::of("writing the status: ", result));
  }
  statusWritten_[name] = {metadataField(*result, "resourceVersion"), status};
  co_return std::nullopt;
}

} // namespace csiop::driverdeployment
