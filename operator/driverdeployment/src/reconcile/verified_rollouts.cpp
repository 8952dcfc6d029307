// spec.rollout type Verified: the operator rolls a changed node plugin out itself, canary nodes
// first, each proven to serve the driver again before any other node changes, then batches with
// a soak between them; a failed gate puts the previous template back (verified_rollout.hpp plans
// it). Two parts of the pass:
//   holdFailedNodePlugins (before the children are applied): a node plugin DaemonSet whose
//     desired template is the one that failed carries the previous revision's template instead
//     (read from its ControllerRevision), so that the DaemonSet controller makes the previous
//     revision current again and the rolled-back pods are made from it;
//   rollVerified (with the node plugin step): plans the rollout of each node plugin DaemonSet
//     from the caches and deletes the pods the plan replaces.
// What the rollout remembers between passes is status.rollout (kept in memory as well: the
// status write may lag the next pass).
#include <csiop/driverdeployment/reconciler.hpp>

#include <algorithm>

#include <csiop/api/json_access.hpp>
#include <csiop/api/rfc3339.hpp>
#include <csiop/driverdeployment/config_hash.hpp>
#include <csiop/driverdeployment/ownership.hpp>
#include <csiop/driverdeployment/unmanaged.hpp>
#include <csiop/kube/attempt.hpp>

#include "reconcile_run.hpp"
#include "rollout_records.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::member;
using api::metadataField;

namespace {

// A node plugin DaemonSet of the DriverDeployment, and where its rollout is kept in the status.
struct NodePluginSet {
  std::string daemonSet;
  bool windows = false;
};

std::vector<NodePluginSet> nodePluginSets(const api::Effective& effective) {
  std::vector<NodePluginSet> out{{effective.name + "-node", false}};
  if (effective.windowsNode) {
    out.push_back({effective.name + "-node-windows", true});
  }
  return out;
}

PluginPod pluginPod(const CachedPod& pod) {
  return {pod.name,  pod.uid,     pod.nodeName,   pod.revisionHash, pod.deleting,
          pod.ready, pod.created, pod.readySince, pod.crashLoop()};
}

std::string labelSelector(const api::StringMap& labels) {
  std::string out;
  for (const auto& [key, value] : labels) {
    out += (out.empty() ? "" : ",") + key + "=" + value;
  }
  return out;
}

} // namespace

void Reconciler::noteRegistration(const CachedCSINode* old, const CachedCSINode* updated) {
  registrations_.observe(old, updated, api::parseRfc3339OrEpoch(now_()));
}

RolloutRecord& Reconciler::rolloutRecord(ReconcileRun& run, const std::string& daemonSet,
                                         bool windows) {
  auto& byDaemonSet = rollouts_[run.name];
  if (const auto it = byDaemonSet.find(daemonSet); it != byDaemonSet.end()) {
    return it->second;
  }
  RolloutRecord record;
  if (run.previous && run.previous->rollout) {
    const auto& kept = windows ? run.previous->rollout->windowsNode : run.previous->rollout->node;
    if (kept) {
      record = recordOf(*kept);
    }
  }
  return byDaemonSet[daemonSet] = std::move(record);
}

asio::awaitable<StepResult> Reconciler::holdFailedNodePlugins(ReconcileRun& run) {
  const api::Effective& effective = *run.effective;
  if (!co_await holdFailedController(run)) { // controller_rollouts.cpp
    co_return StepResult::toStatus();        // the failed template is not applied meanwhile
  }
  if (!effective.rollout.verified) {
    rollouts_.erase(run.name);
    co_return std::nullopt;
  }
  const std::string retry = api::stringField(member(member(run.dd, "metadata"), "annotations"),
                                             api::kRetryRolloutAnnotation);
  for (const NodePluginSet& set : nodePluginSets(effective)) {
    auto desired = std::find_if(run.desired.begin(), run.desired.end(), [&](const Json& o) {
      return api::stringField(o, "kind") == "DaemonSet" &&
             metadataField(o, "name") == set.daemonSet;
    });
    if (desired == run.desired.end()) {
      continue;
    }
    const std::string digest = templateDigest(*desired);
    run.nodeTemplates[set.daemonSet] = digest;
    RolloutRecord& record = rolloutRecord(run, set.daemonSet, set.windows);
    if (!retry.empty() && retry != record.retry && !record.failedTemplate.empty()) {
      // An admin asks for the failed template to be tried again: the rollout starts over.
      RolloutRecord fresh;
      fresh.retry = retry;
      record = std::move(fresh);
      co_await events_.record(run.dd, false, "RolloutRetried",
                              "retrying the node plugin rollout (" +
                                  std::string(api::kRetryRolloutAnnotation) + "=" + retry + ")");
    }
    if (!keepPreviousTemplate(record, digest)) {
      continue;
    }
    auto revision = co_await kube::attempt(client_.getOpt(kube::resources::controllerrevisions,
                                                          effective.namespace_,
                                                          set.daemonSet + "-" + record.from));
    if (!revision) {
      run.addError(ErrorLine::of("reading the previous node plugin revision " + record.from +
                                     " to roll back to: ",
                                 revision));
      co_return StepResult::toStatus(); // the failed template is not applied again meanwhile
    }
    Json previous =
        *revision ? member(member(member(**revision, "data"), "spec"), "template") : Json();
    if (!previous.is_object()) {
      // The DaemonSet's history no longer has it: nothing to go back to; hold instead.
      record.phase = RolloutPhase::Held;
      record.message += "; the previous revision " + record.from +
                        " is no longer in the DaemonSet's history: holding instead of rolling back";
      continue;
    }
    previous.erase("$patch"); // the revision stores the template as a replacing patch
    (*desired)["spec"]["template"] = std::move(previous);
  }
  co_return std::nullopt;
}

asio::awaitable<void> Reconciler::rollVerified(ReconcileRun& run) {
  const api::Effective& effective = *run.effective;
  Observed::NodeUpdate update;
  api::RolloutsStatus rollouts;
  std::set<std::string>& waitingOn = waitingNodes_[effective.name];
  waitingOn.clear();
  const api::WallTime now = api::parseRfc3339OrEpoch(now_());
  bool active = false;
  for (const NodePluginSet& set : nodePluginSets(effective)) {
    const CachedChild* cachedDs =
        caches_.child("DaemonSet")->get(effective.namespace_, set.daemonSet);
    if (cachedDs == nullptr || !ownedBy(cachedDs->head, run.uid) || !managed(cachedDs->head)) {
      continue;
    }
    const std::string dsUid = metadataField(cachedDs->head, "uid");
    RolloutRecord& record = rolloutRecord(run, set.daemonSet, set.windows);
    const bool smoke = effective.rollout.smokeVolume.has_value() && !set.windows;
    const bool pulls = effective.rollout.prePullImages && !set.windows;
    const auto report = [&] {
      api::RolloutStatus status = statusOf(record);
      status.gates = pulls ? std::vector<std::string>{"ImagesPulled"} : std::vector<std::string>{};
      for (const char* gate : {"PodReady", "Registered"}) {
        status.gates->push_back(gate);
      }
      if (smoke) {
        status.gates->push_back("SmokeVolume");
      }
      (set.windows ? rollouts.windowsNode : rollouts.node) = std::move(status);
    };
    if (!run.podsRead) {
      // Nothing moves and the rollout is finished (pod_reads.hpp): as it was last planned.
      update.updated += record.updated;
      update.outdated += record.total - record.updated;
      report();
      continue;
    }
    VerifiedRolloutInput input;
    input.now = now;
    input.previous = record;
    input.templateDigest = run.nodeTemplates[set.daemonSet];
    input.currentRevision = nodePluginRevision(effective, dsUid);
    const Json& dsMeta = cachedDs->head["metadata"];
    input.revisionSettled = member(member(cachedDs->head, "status"), "observedGeneration") ==
                                dsMeta.value("generation", Json()) &&
                            !applied_.behindLastApply(cachedDs->head);
    const std::vector<const CachedPod*> pods = nodePluginPods(run, dsUid);
    for (const CachedPod* pod : pods) {
      input.pods.push_back(pluginPod(*pod));
      input.registration[pod->nodeName] =
          registrations_.of(caches_.csiNodes.get("", pod->nodeName), effective.driverName);
    }
    const Json& strategy =
        (set.windows ? static_cast<const api::EffectiveNodePlugin&>(*effective.windowsNode)
                     : effective.node)
            .updateStrategy;
    const bool outdated = std::any_of(pods.begin(), pods.end(), [&](const CachedPod* pod) {
      return pod->revisionHash != input.currentRevision;
    });
    if (strategy.is_object() && strategy.value("type", Json()) == "WhenVolumesUnused" && outdated) {
      if (!co_await knowVolumeUsers(run, effective.driverName, true)) {
        // Which nodes' pods use a volume is not known yet: every outdated node waits this pass.
        for (const CachedPod* pod : pods) {
          input.unsafe[pod->nodeName] = "the pods using the driver's volumes are not listed yet";
        }
      }
      const std::map<std::string, const Json*> nodes = nodesOf(pods);
      const auto users = volumeUsersByNode(effective.driverName, caches_.persistentVolumes.list(),
                                           caches_.volumeUsers());
      for (const CachedPod* pod : pods) {
        if (auto wait = nodeSafety(pod->nodeName, users, nodes).wait) {
          input.unsafe[pod->nodeName] = wait->message;
        }
      }
    }
    const std::int32_t nodeCount = static_cast<std::int32_t>(input.pods.size());
    input.policy = policyOf(effective.rollout, nodeCount);
    // The pre-pull pod runs the operator's Linux security context: Windows nodes pull as their
    // pods start.
    input.policy.prePull = pulls;
    const bool outdatedPods =
        std::any_of(input.pods.begin(), input.pods.end(), [&](const PluginPod& pod) {
          return !pod.deleting && pod.revision != input.currentRevision;
        });
    const bool prePull = input.policy.prePull && outdatedPods && !effective.rollout.paused;
    const Json podTemplate =
        prePull ? member(member(cachedDs->whole(), "spec"), "template") : Json();
    // The smoke pod runs the operator's Linux image: Windows nodes roll on the pod and
    // registration gates alone.
    input.policy.smokeVolume = smoke;
    if (!effective.rollout.canarySelector.empty() && record.canaries.empty()) {
      const std::string selector = labelSelector(effective.rollout.canarySelector);
      auto listed = co_await kube::attempt(
          client_.listAll(kube::resources::nodes, "", {.labelSelector = selector}));
      if (!listed) {
        run.addError(ErrorLine::of("listing the canary nodes (" + selector + "): ", listed));
        report(); // kept as is
        continue;
      }
      for (const Json& node : listed->items) {
        input.canaryPool.insert(metadataField(node, "name"));
      }
      if (input.canaryPool.empty()) {
        input.canaryPool.insert(""); // no node matches: none may be a canary
      }
    }
    if (effective.rollout.paused) {
      for (const PluginPod& pod : input.pods) {
        if (!pod.deleting && pod.revision != input.currentRevision) {
          update.waiting.push_back(
              {pod.node, "RolloutPaused", "spec.rollout.paused: no node plugin is replaced"});
          ++update.outdated;
        } else if (!pod.deleting) {
          ++update.updated;
        }
      }
      report();
      continue;
    }
    if (input.policy.smokeVolume && record.phase == RolloutPhase::Canary) {
      input.smoke = co_await readSmokeTests(run, record);
    }
    PrePulls prePulls;
    if (prePull) {
      prePulls = co_await readPrePulls(run, input.currentRevision);
      input.images = prePulls.results;
    }
    const VerifiedRolloutPlan plan = planVerifiedRollout(input);
    record = plan.record;
    if (prePull) {
      const std::set<std::string> nodes(plan.prePullOn.begin(), plan.prePullOn.end());
      co_await syncPrePulls(run, prePulls, nodes, input.currentRevision, podTemplate);
    } else if (!set.windows) {
      co_await endPrePulls(run);
    }
    co_await replacePluginPods(run, plan.replace);
    if (!plan.smokeOn.empty()) {
      co_await startSmokeTests(run, record, plan.smokeOn, input.smoke);
    } else if (!set.windows) {
      co_await endSmokeTests(run, input.policy.smokeVolume);
    }
    for (const RolloutEvent& event : plan.events) {
      co_await events_.record(run.dd, event.warning, event.reason, event.message);
    }
    for (const NodeWait& wait : plan.waiting) {
      waitingOn.insert(wait.node);
      update.waiting.push_back(api::NodeWaiting{wait.node, wait.reason, wait.message});
    }
    update.updated += record.updated;
    update.outdated += record.total - record.updated;
    active = active || inProgress(record.phase) || !plan.prePullOn.empty() ||
             (plan.revertTo && input.currentRevision != *plan.revertTo);
    report();
  }
  std::sort(update.waiting.begin(), update.waiting.end(),
            [](const api::NodeWaiting& a, const api::NodeWaiting& b) { return a.node < b.node; });
  run.observed.nodeUpdate = std::move(update);
  run.observed.rollout = std::move(rollouts);
  if (active) {
    run.requeueAfter(requeue::kRolloutCheck); // soaks and gate deadlines pass with no event
  }
}

} // namespace csiop::driverdeployment
