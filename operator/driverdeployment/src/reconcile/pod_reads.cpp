// Whether this pass reads the workloads' pods (pod_reads.hpp), and if so, their cache running and
// listed before the steps that read them (the node plugin rollouts, the registration's
// explanation, the status's pod problems).
#include <csiop/driverdeployment/reconciler.hpp>

#include <spdlog/spdlog.h>

#include <csiop/api/annotations.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/kube/attempt.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::member;

namespace {

// How long a pass waits for the workloads' pods to be listed.
constexpr std::chrono::seconds kPodsWait{30};
// A stall's explanation (its pods listed for the pass) is read again this often while it lasts.
constexpr std::chrono::seconds kStallRelist{60};

std::int32_t count(const Json& object, const char* field) {
  const Json& value = member(object, field);
  return value.is_number_integer() ? value.get<std::int32_t>() : 0;
}

WorkloadPods countsOf(const Json& live, bool daemonSet, bool nodePlugin) {
  const Json& status = member(live, "status");
  const Json& generation = member(member(live, "metadata"), "generation");
  WorkloadPods out;
  out.nodePlugin = nodePlugin;
  out.generation = generation.is_number_integer() ? generation.get<std::int64_t>() : 0;
  out.observedCurrent = member(status, "observedGeneration") == generation;
  if (daemonSet) {
    out.desired = count(status, "desiredNumberScheduled");
    out.existing = count(status, "currentNumberScheduled");
    out.updated = count(status, "updatedNumberScheduled");
    out.ready = count(status, "numberReady");
  } else {
    out.desired = count(member(live, "spec"), "replicas");
    out.existing = count(status, "replicas");
    out.updated = count(status, "updatedReplicas");
    out.ready = count(status, "readyReplicas");
  }
  return out;
}

bool whenVolumesUnused(const Json& updateStrategy) {
  return updateStrategy.is_object() && updateStrategy.value("type", Json()) == "WhenVolumesUnused";
}

// The operator's own rollout of the pods ("": none).
std::string operatorRolloutOf(const api::Effective& effective) {
  if (effective.rollout.verified) {
    return "a verified rollout";
  }
  if (whenVolumesUnused(effective.node.updateStrategy) ||
      (effective.windowsNode && whenVolumesUnused(effective.windowsNode->updateStrategy))) {
    return "a WhenVolumesUnused rollout";
  }
  return "";
}

bool finished(const RolloutRecord& record, const std::string& templateDigest) {
  const bool done = record.phase == RolloutPhase::Complete ||
                    record.phase == RolloutPhase::RolledBack || record.phase == RolloutPhase::Held;
  return done && (templateDigest.empty() || record.template_ == templateDigest ||
                  record.failedTemplate == templateDigest);
}

} // namespace

asio::awaitable<StepResult> Reconciler::readPodsWhenNeeded(ReconcileRun& run) {
  const api::Effective& effective = *run.effective;
  PodReadInput input;
  input.operatorRollout = operatorRolloutOf(effective);
  if (effective.singlePod()) {
    input.everyPass = "the single-pod node plugin";
  }
  if (effective.rollout.verified) {
    for (const auto& [daemonSet, record] : rollouts_[run.name]) {
      const auto digest = run.nodeTemplates.find(daemonSet);
      input.rolloutUnderway =
          input.rolloutUnderway ||
          !finished(record, digest == run.nodeTemplates.end() ? "" : digest->second);
    }
    if (const auto controller = controllerRollouts_.find(run.name);
        controller != controllerRollouts_.end()) {
      input.rolloutUnderway =
          input.rolloutUnderway || !finished(controller->second, run.controllerTemplate);
    }
  }
  input.registered = static_cast<std::int32_t>(caches_.nodesRegistering(effective.driverName));
  const bool verified = effective.rollout.verified;
  const auto add = [&](const std::string& kind, const std::string& name, bool nodePlugin,
                       bool operatorRolled) {
    if (const CachedChild* workload = caches_.child(kind)->get(effective.namespace_, name)) {
      WorkloadPods& counts =
          input.workloads.emplace_back(countsOf(workload->head, kind == "DaemonSet", nodePlugin));
      counts.observedCurrent = counts.observedCurrent && !applied_.behindLastApply(workload->head);
      counts.operatorRolled = operatorRolled;
    }
  };
  add(effective.nodeWorkloadKind(), effective.name + "-node", true,
      verified || whenVolumesUnused(effective.node.updateStrategy));
  if (effective.windowsNode) {
    add("DaemonSet", effective.name + "-node-windows", true,
        verified || whenVolumesUnused(effective.windowsNode->updateStrategy));
  }
  if (effective.hasControllerWorkload()) {
    add(effective.controller->kind, effective.name + "-controller", false, verified);
  }
  // The operator's own rollouts keep the watch of the workloads' pods: a new template starts its
  // rollout in the pass that sees it, with no list to wait for.
  if (input.operatorRollout.empty()) {
    podWatchers_.erase(run.name);
  } else {
    podWatchers_.insert(run.name);
  }
  caches_.podsOnDemand.hold(!podWatchers_.empty());
  const api::WallTime now = api::parseRfc3339OrEpoch(now_());
  const PodRead decision = podReadDecision(input, podReadClocks_[run.name], now);
  run.podsRead = caches_.podsOnDemand.synced();
  if (!decision.read) {
    if (decision.recheckAt) {
      const auto due =
          std::chrono::duration_cast<std::chrono::milliseconds>(*decision.recheckAt - now);
      run.requeueAfter(std::max(due, std::chrono::milliseconds(0)) + std::chrono::seconds(1));
    }
    co_return std::nullopt; // what the cache holds, if another DriverDeployment keeps it
  }
  if (decision.stall) {
    // Looked at again while it lasts: the pods may change their story with the counts put.
    run.requeueAfter(kStallRelist);
    if (!run.podsRead) {
      co_await listWorkloadPods(run, decision.why);
    }
    co_return std::nullopt;
  }
  if (!caches_.podsOnDemand.synced()) {
    spdlog::info("DriverDeployment {} reads its workloads' pods: {}", run.name, decision.why);
  }
  run.podsRead = co_await caches_.podsOnDemand.demand(kPodsWait);
  if (run.podsRead) {
    co_return std::nullopt;
  }
  // Its decisions would take no pod for no pod: the pass ends here, and is retried.
  co_return failedWith(
      ErrorLine{"the workloads' pods are not listed yet (read for " + decision.why + ")"});
}

asio::awaitable<void> Reconciler::listWorkloadPods(ReconcileRun& run, const std::string& why) {
  const api::Effective& effective = *run.effective;
  const std::string selector = std::string(api::kOwnerLabel) + "=" + effective.name;
  auto listed = co_await kube::attempt(
      client_.listAll(kube::resources::pods, effective.namespace_, {.labelSelector = selector}));
  if (!listed) {
    spdlog::warn("DriverDeployment {}: listing its workloads' pods ({}): {}; its status goes "
                 "without them",
                 run.name, why, listed.message());
    co_return;
  }
  std::vector<CachedPod>& pods = run.listedPods.emplace();
  pods.reserve(listed->items.size());
  for (const Json& pod : listed->items) {
    if (keptInPodCache(pod)) {
      pods.push_back(decodePod(pod));
    }
  }
  run.podsRead = true;
}

std::vector<const CachedPod*> Reconciler::workloadPods(const ReconcileRun& run) {
  std::vector<const CachedPod*> out;
  const std::string& ns = run.effective->namespace_;
  if (run.listedPods) {
    for (const CachedPod& pod : *run.listedPods) {
      out.push_back(&pod);
    }
    return out;
  }
  for (const CachedPod* pod : caches_.pods.byIndex(kByOwner, run.name)) {
    if (pod->namespace_ == ns) {
      out.push_back(pod);
    }
  }
  return out;
}

} // namespace csiop::driverdeployment
