// updateStrategy WhenVolumesUnused, the operator's own rollout of the node plugin: the
// DaemonSet is OnDelete, and an out-of-date plugin pod is replaced once no volume of the driver
// is in use on its node (or the node is drained), within maxUnavailable (node_rollout.hpp plans
// it; this step deletes the pods the plan allows and records the rest as waiting).
#include <csiop/driverdeployment/reconciler.hpp>

#include <algorithm>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/node_rollout.hpp>
#include <csiop/driverdeployment/ownership.hpp>
#include <csiop/driverdeployment/unmanaged.hpp>
#include <csiop/kube/attempt.hpp>

#include "reconcile_run.hpp"
#include "requests.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::metadataField;

asio::awaitable<StepResult> Reconciler::rollNodePlugins(ReconcileRun& run) {
  const api::Effective& effective = *run.effective;
  if (effective.rollout.verified) {
    co_await rollVerified(run);
    co_await rollController(run);
    co_return std::nullopt;
  }
  co_await endSmokeTests(run, false); // tests of a verified rollout the spec no longer asks for
  Observed& observed = run.observed;
  const Json& strategy = effective.node.updateStrategy;
  const CachedChild* cachedDs =
      effective.singlePod()
          ? nullptr // no DaemonSet to roll
          : caches_.child("DaemonSet")->get(effective.namespace_, effective.name + "-node");
  const Json* ds = cachedDs == nullptr ? nullptr : &cachedDs->head;
  if (!strategy.is_object() || strategy.value("type", Json()) != "WhenVolumesUnused" ||
      ds == nullptr || !ownedBy(*ds, run.uid) || !managed(*ds)) {
    waitingNodes_.erase(effective.name);
    co_await endPrePulls(run); // those of a strategy the spec no longer asks for
    co_return std::nullopt;
  }
  if (!run.podsRead) {
    // Nothing moves (pod_reads.hpp): the DaemonSet's counts say how far the rollout is.
    const Json& counts = api::member(*ds, "status");
    const std::int32_t desired = counts.value("desiredNumberScheduled", 0);
    const std::int32_t updated = counts.value("updatedNumberScheduled", 0);
    waitingNodes_.erase(effective.name);
    observed.nodeUpdate = Observed::NodeUpdate{updated, std::max(desired - updated, 0), {}};
    co_await endPrePulls(run);
    co_return std::nullopt;
  }
  const std::string dsUid = metadataField(*ds, "uid");
  NodeRolloutInput input;
  input.currentHash = nodePluginRevision(effective, dsUid);
  input.pluginPods = nodePluginPods(run, dsUid);
  input.nodes = nodesOf(input.pluginPods);
  const bool outdated =
      std::any_of(input.pluginPods.begin(), input.pluginPods.end(),
                  [&](const CachedPod* pod) { return pod->revisionHash != input.currentHash; });
  if (outdated && !co_await knowVolumeUsers(run, effective.driverName, true)) {
    // Which nodes' pods use a volume is not known yet: nothing is replaced this pass.
    run.requeueAfter(requeue::kRolloutCheck);
    co_return std::nullopt;
  }
  input.users = volumeUsersByNode(effective.driverName, caches_.persistentVolumes.list(),
                                  caches_.volumeUsers());
  const Json dsStatus = ds->value("status", Json::object());
  const Json params = strategy.value("whenVolumesUnused", Json::object());
  input.maxUnavailable =
      resolveMaxUnavailable(params.is_object() ? params.value("maxUnavailable", Json()) : Json(),
                            dsStatus.value("desiredNumberScheduled", 0));
  input.unavailable = dsStatus.value("numberUnavailable", 0);
  const NodeRolloutPlan plan = planNodeRollout(input);

  // spec.rollout.prePullImages: a pod the plan replaces goes once the new images are on its
  // node; a node whose pull failed keeps its plugin (and its pre-pull pod, which says why,
  // until it is deleted or the revision changes).
  std::vector<Replacement> now;
  std::vector<NodeWait> pulling;
  if (effective.rollout.prePullImages && plan.outdated > 0) {
    const Json podTemplate = api::member(api::member(cachedDs->whole(), "spec"), "template");
    const std::string revision = input.currentHash;
    const PrePulls prePulls = co_await readPrePulls(run, revision);
    PrePullGate gate = gateOnPrePulls(plan.replace, prePulls);
    now = std::move(gate.now);
    pulling = std::move(gate.waiting);
    co_await syncPrePulls(run, prePulls, gate.pull, revision, podTemplate);
  } else {
    now = plan.replace;
    co_await endPrePulls(run);
  }
  co_await replacePluginPods(run, now);
  std::set<std::string>& waiting = waitingNodes_[effective.name];
  waiting.clear();
  Observed::NodeUpdate update{plan.updated, plan.outdated, {}};
  for (const NodeWait& wait : pulling) {
    waiting.insert(wait.node);
    update.waiting.push_back(api::NodeWaiting{wait.node, wait.reason, wait.message});
  }
  if (!pulling.empty()) {
    run.requeueAfter(requeue::kRolloutCheck); // a pull's progress comes with no event
  }
  for (const NodeWait& wait : plan.waiting) {
    waiting.insert(wait.node);
    update.waiting.push_back(api::NodeWaiting{wait.node, wait.reason, wait.message});
  }
  observed.nodeUpdate = std::move(update);
  co_return std::nullopt;
}

std::string Reconciler::nodePluginRevision(const api::Effective& effective,
                                           const std::string& dsUid) {
  std::vector<const Json*> revisions;
  for (const Json* revision : caches_.controllerRevisions.byIndex(kByOwner, effective.name)) {
    if (metadataField(*revision, "namespace") == effective.namespace_) {
      revisions.push_back(revision);
    }
  }
  return currentRevisionHash(revisions, dsUid);
}

std::vector<const CachedPod*> Reconciler::nodePluginPods(const ReconcileRun& run,
                                                         const std::string& dsUid) {
  std::vector<const CachedPod*> out;
  for (const CachedPod* pod : workloadPods(run)) {
    if (!dsUid.empty() && pod->controllerUid == dsUid) {
      out.push_back(pod);
    }
  }
  return out;
}

std::map<std::string, const Json*> Reconciler::nodesOf(const std::vector<const CachedPod*>& pods) {
  std::map<std::string, const Json*> out;
  for (const CachedPod* pod : pods) { // the nodes that matter, not every node
    if (const Json* node = caches_.nodes.get("", pod->nodeName); node != nullptr) {
      out[pod->nodeName] = node;
    }
  }
  return out;
}

asio::awaitable<void> Reconciler::replacePluginPods(ReconcileRun& run,
                                                    const std::vector<Replacement>& replace,
                                                    bool controller) {
  const std::string& ns = run.effective->namespace_;
  const std::string what = controller ? "controller pod " : "node plugin pod ";
  for (const Replacement& replacement : replace) {
    const kube::DeleteOptions options = deleteOnly(replacement.uid);
    auto removed =
        co_await kube::attempt(client_.remove(kube::resources::pods, ns, replacement.pod, options));
    if (removed) {
      // Named: GCC 12 destroys a temporary of a conditional inside a co_await expression twice.
      const std::string reason = controller ? "ControllerPodReplaced" : "NodePluginReplaced";
      const std::string where = replacement.node.empty() ? "" : " on node " + replacement.node;
      const std::string message =
          "replaced " + what + replacement.pod + where + ": " + replacement.why;
      co_await events_.record(run.dd, false, reason, message);
    } else if (!removed.notFound() && !removed.conflict()) {
      run.addError(ErrorLine::of("replacing " + what + replacement.pod + ": ", removed));
    }
  }
}

} // namespace csiop::driverdeployment
