// The status, the only place it is written: from what the pass observed (computeStatus is pure),
// or what a step that ended the pass early asked for (paused, an invalid spec, a name conflict);
// written only when it differs from what the server holds.
#include <csiop/controller/reconciler.hpp>

#include <csiop/api/codec.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/controller/compare.hpp>

#include <csiop/controller/pod_problems.hpp>
#include <csiop/kube/attempt.hpp>

#include "reconcile_run.hpp"

namespace csiop::controller {

namespace asio = boost::asio;
using api::Json;
using api::metadataField;

namespace {

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
  const api::DriverDeploymentStatus status = computeStatus(run.observed, run.previous, now_());
  if (std::optional<ReconcileResult> end = co_await writeStatus(run, status)) {
    co_return std::move(*end);
  }
  if (!run.observed.applyErrors.empty()) {
    co_return ReconcileResult::error(run.observed.applyErrors.front(), run.retryWait);
  }
  if (run.pollConfig) {
    co_return ReconcileResult::requeueAfter(configPollPeriod_);
  }
  co_return ReconcileResult::done();
}

void Reconciler::observeWorkloads(ReconcileRun& run) {
  const api::Effective& e = *run.effective;
  Observed& o = run.observed;
  // A workload this reconciler applied a new spec to, before the cache shows it: its status is
  // that of the old spec, which the new one is not.
  const auto observe = [this](const Json& w, bool daemonSet) {
    Observed::Workload out = workload(w, daemonSet);
    out.observedCurrent = out.observedCurrent && !applied_.behindLastApply(w);
    return out;
  };
  if (const CachedChild* ds = caches_.child("DaemonSet")->get(e.namespace_, e.name + "-node")) {
    o.nodes = observe(ds->head, true);
  }
  // The Windows node plugin's nodes count as nodes of the driver alike.
  if (e.windowsNode) {
    const CachedChild* ds = caches_.child("DaemonSet")->get(e.namespace_, e.name + "-node-windows");
    if (ds == nullptr) {
      o.nodes.reset(); // not created yet: the node plugins are not all there
    } else if (o.nodes) {
      const Observed::Workload w = observe(ds->head, true);
      o.nodes->desired += w.desired;
      o.nodes->updated += w.updated;
      o.nodes->ready += w.ready;
      o.nodes->observedCurrent = o.nodes->observedCurrent && w.observedCurrent;
      if (o.nodeUpdate) { // the Linux plugin's own rollout counts its pods; these are current
        o.nodeUpdate->updated += w.updated;
      }
    }
  }
  if (e.hasControllerWorkload()) {
    if (const CachedChild* w =
            caches_.child(e.controller->kind)->get(e.namespace_, e.name + "-controller")) {
      o.controller = observe(w->head, false);
    }
  }
  std::vector<const CachedPod*> pods;
  for (const CachedPod* pod : caches_.pods.byIndex(kByOwner, e.name)) {
    if (pod->namespace_ == e.namespace_) {
      pods.push_back(pod);
    }
  }
  o.podProblems = podProblems(pods);
  o.registered = static_cast<std::int32_t>(caches_.nodesRegistering(e.driverName));
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

} // namespace csiop::controller
