// updateStrategy WhenVolumesUnused, the operator's own rollout of the node plugin: the
// DaemonSet is OnDelete, and an out-of-date plugin pod is replaced once no volume of the driver
// is in use on its node (or the node is drained), within maxUnavailable (node_rollout.hpp plans
// it; this step deletes the pods the plan allows and records the rest as waiting).
#include <csiop/controller/reconciler.hpp>

#include <csiop/api/json_access.hpp>
#include <csiop/controller/node_rollout.hpp>
#include <csiop/controller/ownership.hpp>
#include <csiop/controller/unmanaged.hpp>
#include <csiop/kube/attempt.hpp>

#include "reconcile_run.hpp"
#include "requests.hpp"

namespace csiop::controller {

namespace asio = boost::asio;
using api::Json;
using api::metadataField;

asio::awaitable<StepResult> Reconciler::rollNodePlugins(ReconcileRun& run) {
  const api::Effective& e = *run.effective;
  Observed& o = run.observed;
  const Json& strategy = e.node.updateStrategy;
  const CachedChild* cachedDs = caches_.child("DaemonSet")->get(e.namespace_, e.name + "-node");
  const Json* ds = cachedDs == nullptr ? nullptr : &cachedDs->head;
  if (!strategy.is_object() || strategy.value("type", Json()) != "WhenVolumesUnused" ||
      ds == nullptr || !ownedBy(*ds, run.uid) || !managed(*ds)) {
    waitingNodes_.erase(e.name);
    co_return std::nullopt;
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
  for (const CachedPod* pod : caches_.pods.byIndex(kByOwner, e.name)) {
    if (pod->namespace_ == e.namespace_ && !dsUid.empty() && pod->controllerUid == dsUid) {
      in.pluginPods.push_back(pod);
    }
  }
  for (const CachedPod* pod : in.pluginPods) { // the nodes that matter, not every node
    if (const Json* n = caches_.nodes.get("", pod->nodeName); n != nullptr) {
      in.nodes[pod->nodeName] = n;
    }
  }
  in.users =
      volumeUsersByNode(e.driverName, caches_.persistentVolumes.list(), caches_.volumeUsers());
  const Json dsStatus = ds->value("status", Json::object());
  const Json params = strategy.value("whenVolumesUnused", Json::object());
  in.maxUnavailable =
      resolveMaxUnavailable(params.is_object() ? params.value("maxUnavailable", Json()) : Json(),
                            dsStatus.value("desiredNumberScheduled", 0));
  in.unavailable = dsStatus.value("numberUnavailable", 0);
  const NodeRolloutPlan plan = planNodeRollout(in);

  for (const Replacement& r : plan.replace) {
    const kube::DeleteOptions options = deleteOnly(r.uid);
    auto removed =
        co_await kube::attempt(client_.remove(kube::resources::pods, e.namespace_, r.pod, options));
    if (removed) {
      co_await events_.record(run.dd, false, "NodePluginReplaced",
                              "replaced node plugin pod " + r.pod + " on node " + r.node + ": " +
                                  r.why);
    } else if (!removed.notFound() && !removed.conflict()) {
      run.addError(ErrorLine::of("replacing node plugin pod " + r.pod + ": ", removed));
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
  co_return std::nullopt;
}

} // namespace csiop::controller
