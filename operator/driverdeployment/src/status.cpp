#include <csiop/driverdeployment/status.hpp>

#include <algorithm>
#include <functional>

#include <csiop/driverdeployment/pod_problems.hpp>

namespace csiop::driverdeployment {
namespace {

constexpr std::size_t kMaxWaitingNodes = 20; // status.nodes.waiting's maxItems

api::Condition make(const char* type, bool status, std::string reason, std::string message,
                    std::int64_t generation) {
  api::Condition c;
  c.type = type;
  c.status = status ? "True" : "False";
  c.observedGeneration = generation;
  c.reason = std::move(reason);
  c.message = std::move(message);
  return c;
}

std::string counts(std::int32_t have, std::int32_t want, const char* what) {
  return std::to_string(have) + "/" + std::to_string(want) + " " + what;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) {
    out += (out.empty() ? "" : "; ") + l;
  }
  return out;
}

std::string nodeUpdateMessage(const Observed::NodeUpdate& update, std::int32_t desired) {
  std::string message = "node plugin updated on " + counts(update.updated, desired, "nodes");
  if (update.waiting.empty()) {
    return message;
  }
  message += "; waiting: ";
  for (std::size_t i = 0; i < update.waiting.size() && i < 3; ++i) {
    const auto& w = update.waiting[i];
    message += (i == 0 ? "" : "; ") + w.node + " (" + w.reason + ": " + w.message + ")";
  }
  if (update.waiting.size() > 3) {
    message += "; and " + std::to_string(update.waiting.size() - 3) + " more";
  }
  return message;
}

// "node a: NotRegistered: ..." for each node where the driver is not registered.
std::vector<std::string> registrationLines(const std::vector<api::NodeWaiting>& nodes) {
  std::vector<std::string> out;
  out.reserve(nodes.size());
  for (const api::NodeWaiting& n : nodes) {
    out.push_back("node " + n.node + ": " + n.reason + ": " + n.message);
  }
  return out;
}

// status.nodes.waiting: the nodes the node plugin rollout waits on and those where the driver is
// not registered, by node (a node can be in both, with each reason), at most kMaxWaitingNodes.
std::vector<api::NodeWaiting> waitingNodes(const Observed& observed) {
  std::vector<api::NodeWaiting> out;
  if (observed.nodeUpdate) {
    out = observed.nodeUpdate->waiting;
  }
  out.insert(out.end(), observed.unregistered.begin(), observed.unregistered.end());
  std::stable_sort(
      out.begin(), out.end(),
      [](const api::NodeWaiting& a, const api::NodeWaiting& b) { return a.node < b.node; });
  if (out.size() > kMaxWaitingNodes) {
    out.resize(kMaxWaitingNodes);
  }
  return out;
}

bool rolledOut(const Observed::Workload& workload) {
  return workload.observedCurrent && workload.updated == workload.desired &&
         workload.ready == workload.desired;
}

// RolloutFailed: True while a verified rollout (a node plugin's, the controller's) is rolling
// back, rolled back or held after a failed gate (which gate, on which node, why); False
// otherwise.
bool failedPhase(const std::string& phase) {
  return phase == "RollingBack" || phase == "RolledBack" || phase == "Held";
}

std::string failureMessage(const std::string& what, const std::string& gate,
                           const std::string& message, const std::string& phase,
                           const std::string& from) {
  return what + " failed gate " + gate + ": " + message +
         (phase == "Held" ? "" : " (rolled back to " + from + ")");
}

template <class Set>
void setRolloutFailed(const api::RolloutsStatus& rollouts, std::int64_t generation, Set&& set) {
  for (const auto* r : {&rollouts.node, &rollouts.windowsNode}) {
    if (*r && failedPhase((*r)->phase)) {
      const api::RolloutStatus& f = **r;
      set(make(condition::kRolloutFailed, true, f.phase,
               failureMessage("node plugin revision " + f.revision.value_or(""),
                              f.failedGate.value_or("") + " on node " + f.failedNode.value_or(""),
                              f.message.value_or(""), f.phase, f.from.value_or("")),
               generation));
      return;
    }
  }
  if (const auto& c = rollouts.controller; c && failedPhase(c->phase)) {
    const std::string revision = c->revision.value_or("");
    set(make(condition::kRolloutFailed, true, c->phase,
             failureMessage(revision.empty() ? std::string("the controller's new pod template")
                                             : "controller revision " + revision,
                            c->failedGate.value_or(""), c->message.value_or(""), c->phase,
                            c->from.value_or("")),
             generation));
    return;
  }
  set(make(condition::kRolloutFailed, false, "NoFailure", "no rollout gate failed", generation));
}

} // namespace

const api::Condition* findCondition(const std::vector<api::Condition>& conditions,
                                    const std::string& type) {
  const auto it = std::find_if(conditions.begin(), conditions.end(),
                               [&](const api::Condition& c) { return c.type == type; });
  return it == conditions.end() ? nullptr : &*it;
}

void setCondition(std::vector<api::Condition>& conditions, api::Condition c) {
  for (auto& existing : conditions) {
    if (existing.type == c.type) {
      if (existing.status == c.status && !existing.lastTransitionTime.empty()) {
        c.lastTransitionTime = existing.lastTransitionTime;
      }
      existing = std::move(c);
      return;
    }
  }
  conditions.push_back(std::move(c));
}

namespace {

// status.volumes and VolumesFailing: set while some of the driver's volumes fail; False (kept for
// kubectl wait and alerts) once none does.
template <class Set>
void setVolumesFailing(const Observed& observed,
                       const std::optional<api::DriverDeploymentStatus>& previous,
                       api::DriverDeploymentStatus& status,
                       const std::vector<api::Condition>& conditions, const Set& set) {
  if (!observed.volumeHealth) { // not looked at in this pass: as it was
    if (previous) {
      status.volumes = previous->volumes;
    }
    return;
  }
  const VolumeHealth& health = *observed.volumeHealth;
  if (health.total() == 0) {
    if (findCondition(conditions, condition::kVolumesFailing) != nullptr) {
      set(make(condition::kVolumesFailing, false, "NoneFailing",
               "no volume of the driver is failing", observed.generation));
    }
    return;
  }
  api::VolumesStatus volumes;
  const auto count = [&](const char* reason) -> std::optional<std::int32_t> {
    const auto it = health.counts.find(reason);
    return it == health.counts.end() ? std::nullopt
                                     : std::optional(static_cast<std::int32_t>(it->second));
  };
  volumes.provisioningFailed = count(volume_health::kProvisioningFailed);
  volumes.attachFailed = count(volume_health::kAttachFailed);
  volumes.detachFailed = count(volume_health::kDetachFailed);
  volumes.mountFailed = count(volume_health::kMountFailed);
  std::vector<api::VolumeFailureStatus> failures;
  for (const VolumeFailure& f : health.named) {
    failures.push_back({f.reason, f.object,
                        f.volume.empty() ? std::nullopt : std::optional(f.volume), f.message,
                        api::formatRfc3339(f.last)});
  }
  volumes.failures = std::move(failures);
  status.volumes = std::move(volumes);
  // The reason: the first kind of failure, in the order a volume meets them.
  std::string reason;
  for (const char* r : {volume_health::kProvisioningFailed, volume_health::kAttachFailed,
                        volume_health::kMountFailed, volume_health::kDetachFailed}) {
    if (health.counts.contains(r)) {
      reason = r;
      break;
    }
  }
  set(make(condition::kVolumesFailing, true, reason, health.summary(), observed.generation));
}

} // namespace

api::DriverDeploymentStatus
computeStatus(const Observed& observed, const std::optional<api::DriverDeploymentStatus>& previous,
              const std::string& now) {
  api::DriverDeploymentStatus status;
  status.observedGeneration = observed.generation;
  std::vector<api::Condition> conditions =
      previous && previous->conditions ? *previous->conditions : std::vector<api::Condition>{};
  const auto set = [&](api::Condition c) {
    c.lastTransitionTime = now;
    setCondition(conditions, std::move(c));
  };
  const std::int64_t generation = observed.generation;

  if (observed.conflictWith) {
    set(make(condition::kDriverNameConflict, true, "NameInUse",
             "the driver name is already used by " + *observed.conflictWith +
                 "; nothing is deployed for this DriverDeployment",
             generation));
    set(make(condition::kReady, false, "DriverNameConflict", "the driver name is in use",
             generation));
    set(make(condition::kProgressing, false, "DriverNameConflict", "nothing to roll out",
             generation));
    set(make(condition::kDegraded, true, "DriverNameConflict",
             "the driver name is already used by " + *observed.conflictWith, generation));
    status.conditions = std::move(conditions);
    return status;
  }
  set(make(condition::kDriverNameConflict, false, "NameClaimed",
           "this DriverDeployment owns the driver name", generation));

  if (observed.nodes) {
    status.nodes = api::NodesStatus{
        observed.nodes->desired, observed.nodes->ready, observed.registered, {}, {}, {}};
  } else {
    status.nodes = api::NodesStatus{0, 0, observed.registered, {}, {}, {}};
  }
  status.nodes->held = observed.held;
  if (observed.nodeUpdate) {
    status.nodes->updated = observed.nodeUpdate->updated;
  }
  if (std::vector<api::NodeWaiting> waiting = waitingNodes(observed); !waiting.empty()) {
    status.nodes->waiting = std::move(waiting);
  }
  if (observed.hasController) {
    const auto controller = observed.controller.value_or(Observed::Workload{});
    status.controller = api::ControllerStatus{controller.desired, controller.ready};
  }
  if (observed.rollout) {
    status.rollout = observed.rollout;
    setRolloutFailed(*observed.rollout, generation, set);
  }

  if (!observed.unmanaged.empty()) {
    status.unmanaged = observed.unmanaged;
  }
  if (!observed.workloads.empty()) {
    status.workloads = observed.workloads;
  }
  if (observed.operatorUpdateHeld) {
    set(make(condition::kOperatorUpdateHeld, true, "Held", *observed.operatorUpdateHeld,
             generation));
  } else if (findCondition(conditions, condition::kOperatorUpdateHeld) != nullptr) {
    set(make(condition::kOperatorUpdateHeld, false, "NoneHeld",
             "the workloads are as this operator renders them", generation));
  }
  setVolumesFailing(observed, previous, status, conditions, set);
  if (!observed.apiWarnings.empty()) {
    set(make(condition::kApiWarnings, true, "Warned", joined(observed.apiWarnings), generation));
  } else if (findCondition(conditions, condition::kApiWarnings) != nullptr) {
    set(make(condition::kApiWarnings, false, "NoWarnings",
             "the API server took the last write of every object without a warning", generation));
  }
  if (!observed.applyErrors.empty()) {
    set(make(condition::kDegraded, true, "ApplyFailed", joined(observed.applyErrors), generation));
  } else if (!observed.missingPrerequisites.empty()) {
    set(make(condition::kDegraded, true, "PrerequisitesMissing",
             joined(observed.missingPrerequisites), generation));
  } else if (!observed.annotationProblems.empty()) {
    set(make(condition::kDegraded, true, "InvalidAnnotation", joined(observed.annotationProblems),
             generation));
  } else if (!observed.configProblems.empty()) {
    set(make(condition::kDegraded, true, "ConfigUnavailable", joined(observed.configProblems),
             generation));
  } else if (!observed.podCreationFailures.empty()) {
    set(make(condition::kDegraded, true, "PodsNotCreated",
             summarizeProblems(observed.podCreationFailures), generation));
  } else if (!observed.podProblems.empty()) {
    set(make(condition::kDegraded, true, "PodsFailing", summarizeProblems(observed.podProblems),
             generation));
  } else if (!observed.unregistered.empty()) {
    set(make(condition::kDegraded, true, "RegistrationFailing",
             summarizeProblems(registrationLines(observed.unregistered)), generation));
  } else {
    set(make(condition::kDegraded, false, "AsExpected", "every object is applied", generation));
  }

  // What is still missing, in the order an admin would look at it.
  std::vector<std::pair<std::string, std::string>> pending; // reason, message
  if (!observed.applyErrors.empty()) {
    pending.emplace_back("ApplyFailed", "not every object could be applied");
  }
  // With WhenVolumesUnused an out-of-date plugin that serves its node is not "rolling out":
  // it waits, on purpose, and the driver is ready meanwhile (Progressing says why).
  const bool nodesDone =
      observed.nodes && (observed.nodeUpdate ? observed.nodes->observedCurrent &&
                                                   observed.nodes->ready == observed.nodes->desired
                                             : rolledOut(*observed.nodes));
  if (!nodesDone) {
    const auto nodes = observed.nodes.value_or(Observed::Workload{});
    pending.emplace_back("NodePluginRollingOut",
                         "node plugin " + counts(nodes.ready, nodes.desired, "ready") + ", " +
                             counts(nodes.updated, nodes.desired, "updated"));
  }
  if (observed.hasController && (!observed.controller || !rolledOut(*observed.controller))) {
    const auto controller = observed.controller.value_or(Observed::Workload{});
    pending.emplace_back("ControllerRollingOut",
                         "controller " +
                             counts(controller.ready, controller.desired, "replicas ready"));
  }
  const std::int32_t desiredNodes = observed.nodes ? observed.nodes->desired : 0;
  // spec.startupTaint: the nodes still held, where the driver is not registered.
  const std::string heldNote =
      observed.held.value_or(0) > 0
          ? " (" + std::to_string(*observed.held) + " kept from workloads by the startup taint)"
          : std::string();
  if (observed.registered < desiredNodes) {
    pending.emplace_back(
        "RegistrationPending",
        "driver registered on " + counts(observed.registered, desiredNodes, "nodes") + heldNote +
            (observed.unregistered.empty()
                 ? std::string()
                 : ": " + summarizeProblems(registrationLines(observed.unregistered), 1)));
  }

  const bool rollingOut = std::any_of(pending.begin(), pending.end(), [](const auto& p) {
    return p.first != "ApplyFailed" && p.first != "RegistrationPending";
  });
  if (!rollingOut && observed.nodeUpdate && observed.nodeUpdate->outdated > 0) {
    set(make(condition::kProgressing, true, "NodePluginUpdateWaiting",
             nodeUpdateMessage(*observed.nodeUpdate, observed.nodes ? observed.nodes->desired : 0),
             generation));
  } else {
    set(make(condition::kProgressing, rollingOut, rollingOut ? "RollingOut" : "Complete",
             rollingOut ? "waiting for the rollout" : "the rollout is complete", generation));
  }

  if (pending.empty()) {
    set(make(condition::kReady, true, "Ready",
             "driver registered on " + counts(observed.registered, desiredNodes, "nodes") +
                 heldNote + (observed.hasController ? ", controller ready" : ""),
             generation));
  } else {
    std::string message;
    for (const auto& [reason, text] : pending) {
      message += (message.empty() ? "" : "; ") + text;
    }
    if (!observed.podCreationFailures.empty()) {
      message += ": " + summarizeProblems(observed.podCreationFailures, 1);
    } else if (!observed.podProblems.empty()) {
      message += ": " + summarizeProblems(observed.podProblems);
    }
    set(make(condition::kReady, false, pending.front().first, message, generation));
  }

  if (observed.csiDriverRecreated) {
    set(make(condition::kCSIDriverRecreated, true, "ImmutableFieldChanged",
             *observed.csiDriverRecreated, generation));
  }
  setLifecycleConditions(observed, conditions, now);
  status.conditions = std::move(conditions);
  return status;
}

namespace {

// The previous status, observed at this generation, with `set` applied to its conditions and
// then the lifecycle conditions.
api::DriverDeploymentStatus
carriedOver(const Observed& observed, const std::optional<api::DriverDeploymentStatus>& previous,
            const std::string& now,
            const std::function<void(std::vector<api::Condition>&)>& set = {}) {
  api::DriverDeploymentStatus status = previous.value_or(api::DriverDeploymentStatus{});
  status.observedGeneration = observed.generation;
  std::vector<api::Condition> conditions =
      status.conditions.value_or(std::vector<api::Condition>{});
  if (set) {
    set(conditions);
  }
  setLifecycleConditions(observed, conditions, now);
  status.conditions = std::move(conditions);
  return status;
}

} // namespace

api::DriverDeploymentStatus pausedStatus(const Observed& observed,
                                         const std::optional<api::DriverDeploymentStatus>& previous,
                                         const std::string& now) {
  return carriedOver(observed, previous, now);
}

api::DriverDeploymentStatus
invalidSpecStatus(const Observed& observed,
                  const std::optional<api::DriverDeploymentStatus>& previous,
                  const std::vector<std::string>& errors, const std::string& now) {
  return carriedOver(observed, previous, now, [&](std::vector<api::Condition>& conditions) {
    for (const auto& [type, status] :
         {std::pair{condition::kReady, false}, std::pair{condition::kDegraded, true}}) {
      api::Condition c = make(type, status, "InvalidSpec", joined(errors), observed.generation);
      c.lastTransitionTime = now;
      setCondition(conditions, std::move(c));
    }
  });
}

bool conditionTrue(const std::optional<api::DriverDeploymentStatus>& status, const char* type) {
  const auto* c = status && status->conditions ? findCondition(*status->conditions, type) : nullptr;
  return c != nullptr && c->status == "True";
}

void setLifecycleConditions(const Observed& observed, std::vector<api::Condition>& conditions,
                            const std::string& now) {
  const std::int64_t generation = observed.generation;
  const auto set = [&](api::Condition c) {
    c.lastTransitionTime = now;
    setCondition(conditions, std::move(c));
  };
  if (observed.paused && observed.deleting) {
    set(make(condition::kPaused, true, "DeletionPaused",
             "spec.paused is true: the DriverDeployment is being deleted, and its objects are kept "
             "until spec.paused is false",
             generation));
  } else if (observed.paused) {
    set(make(condition::kPaused, true, "Paused",
             "spec.paused is true: nothing is applied, pruned or deleted until it is false",
             generation));
  } else if (findCondition(conditions, condition::kPaused) != nullptr) {
    set(make(condition::kPaused, false, "Resumed", "the operator manages the driver", generation));
  }
  if (observed.deletionBlocked) {
    set(make(condition::kDeletionBlocked, true, "VolumesInUse",
             "the deletion waits: " + *observed.deletionBlocked +
                 " still use the driver; it completes by itself when they are gone (or annotate "
                 "csiop.dev/force-delete=true to delete anyway)",
             generation));
  }
}

} // namespace csiop::driverdeployment
