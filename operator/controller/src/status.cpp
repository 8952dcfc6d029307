#include <csiop/controller/status.hpp>

#include <algorithm>
#include <functional>

#include <csiop/controller/pod_problems.hpp>

namespace csiop::controller {
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

std::string nodeUpdateMessage(const Observed::NodeUpdate& u, std::int32_t desired) {
  std::string message = "node plugin updated on " + counts(u.updated, desired, "nodes");
  if (u.waiting.empty()) {
    return message;
  }
  message += "; waiting: ";
  for (std::size_t i = 0; i < u.waiting.size() && i < 3; ++i) {
    const auto& w = u.waiting[i];
    message += (i == 0 ? "" : "; ") + w.node + " (" + w.reason + ": " + w.message + ")";
  }
  if (u.waiting.size() > 3) {
    message += "; and " + std::to_string(u.waiting.size() - 3) + " more";
  }
  return message;
}

bool rolledOut(const Observed::Workload& w) {
  return w.observedCurrent && w.updated == w.desired && w.ready == w.desired;
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

api::DriverDeploymentStatus
computeStatus(const Observed& o, const std::optional<api::DriverDeploymentStatus>& previous,
              const std::string& now) {
  api::DriverDeploymentStatus s;
  s.observedGeneration = o.generation;
  std::vector<api::Condition> conditions =
      previous && previous->conditions ? *previous->conditions : std::vector<api::Condition>{};
  const auto set = [&](api::Condition c) {
    c.lastTransitionTime = now;
    setCondition(conditions, std::move(c));
  };
  const std::int64_t g = o.generation;

  if (o.conflictWith) {
    set(make(condition::kDriverNameConflict, true, "NameInUse",
             "the driver name is already used by " + *o.conflictWith +
                 "; nothing is deployed for this DriverDeployment",
             g));
    set(make(condition::kReady, false, "DriverNameConflict", "the driver name is in use", g));
    set(make(condition::kProgressing, false, "DriverNameConflict", "nothing to roll out", g));
    set(make(condition::kDegraded, true, "DriverNameConflict",
             "the driver name is already used by " + *o.conflictWith, g));
    s.conditions = std::move(conditions);
    return s;
  }
  set(make(condition::kDriverNameConflict, false, "NameClaimed",
           "this DriverDeployment owns the driver name", g));

  if (o.nodes) {
    s.nodes = api::NodesStatus{o.nodes->desired, o.nodes->ready, o.registered, {}, {}};
  } else {
    s.nodes = api::NodesStatus{0, 0, o.registered, {}, {}};
  }
  if (o.nodeUpdate) {
    s.nodes->updated = o.nodeUpdate->updated;
    if (!o.nodeUpdate->waiting.empty()) {
      const auto n = std::min<std::size_t>(o.nodeUpdate->waiting.size(), kMaxWaitingNodes);
      s.nodes->waiting = std::vector<api::NodeWaiting>(o.nodeUpdate->waiting.begin(),
                                                       o.nodeUpdate->waiting.begin() + n);
    }
  }
  if (o.hasController) {
    const auto w = o.controller.value_or(Observed::Workload{});
    s.controller = api::ControllerStatus{w.desired, w.ready};
  }

  if (!o.unmanaged.empty()) {
    s.unmanaged = o.unmanaged;
  }
  if (!o.applyErrors.empty()) {
    set(make(condition::kDegraded, true, "ApplyFailed", joined(o.applyErrors), g));
  } else if (!o.missingPrerequisites.empty()) {
    set(make(condition::kDegraded, true, "PrerequisitesMissing", joined(o.missingPrerequisites),
             g));
  } else if (!o.annotationProblems.empty()) {
    set(make(condition::kDegraded, true, "InvalidAnnotation", joined(o.annotationProblems), g));
  } else if (!o.configProblems.empty()) {
    set(make(condition::kDegraded, true, "ConfigUnavailable", joined(o.configProblems), g));
  } else if (!o.podProblems.empty()) {
    set(make(condition::kDegraded, true, "PodsFailing", summarizeProblems(o.podProblems), g));
  } else {
    set(make(condition::kDegraded, false, "AsExpected", "every object is applied", g));
  }

  // What is still missing, in the order an admin would look at it.
  std::vector<std::pair<std::string, std::string>> pending; // reason, message
  if (!o.applyErrors.empty()) {
    pending.emplace_back("ApplyFailed", "not every object could be applied");
  }
  // With WhenVolumesUnused an out-of-date plugin that serves its node is not "rolling out":
  // it waits, on purpose, and the driver is ready meanwhile (Progressing says why).
  const bool nodesDone =
      o.nodes && (o.nodeUpdate ? o.nodes->observedCurrent && o.nodes->ready == o.nodes->desired
                               : rolledOut(*o.nodes));
  if (!nodesDone) {
    const auto n = o.nodes.value_or(Observed::Workload{});
    pending.emplace_back("NodePluginRollingOut", "node plugin " +
                                                     counts(n.ready, n.desired, "ready") + ", " +
                                                     counts(n.updated, n.desired, "updated"));
  }
  if (o.hasController && (!o.controller || !rolledOut(*o.controller))) {
    const auto c = o.controller.value_or(Observed::Workload{});
    pending.emplace_back("ControllerRollingOut",
                         "controller " + counts(c.ready, c.desired, "replicas ready"));
  }
  const std::int32_t desiredNodes = o.nodes ? o.nodes->desired : 0;
  if (o.registered < desiredNodes) {
    pending.emplace_back("RegistrationPending",
                         "driver registered on " + counts(o.registered, desiredNodes, "nodes"));
  }

  const bool rollingOut = std::any_of(pending.begin(), pending.end(), [](const auto& p) {
    return p.first != "ApplyFailed" && p.first != "RegistrationPending";
  });
  if (!rollingOut && o.nodeUpdate && o.nodeUpdate->outdated > 0) {
    set(make(condition::kProgressing, true, "NodePluginUpdateWaiting",
             nodeUpdateMessage(*o.nodeUpdate, o.nodes ? o.nodes->desired : 0), g));
  } else {
    set(make(condition::kProgressing, rollingOut, rollingOut ? "RollingOut" : "Complete",
             rollingOut ? "waiting for the rollout" : "the rollout is complete", g));
  }

  if (pending.empty()) {
    set(make(condition::kReady, true, "Ready",
             "driver registered on " + counts(o.registered, desiredNodes, "nodes") +
                 (o.hasController ? ", controller ready" : ""),
             g));
  } else {
    std::string message;
    for (const auto& [reason, text] : pending) {
      message += (message.empty() ? "" : "; ") + text;
    }
    if (!o.podProblems.empty()) {
      message += ": " + summarizeProblems(o.podProblems);
    }
    set(make(condition::kReady, false, pending.front().first, message, g));
  }

  if (o.csiDriverRecreated) {
    set(make(condition::kCSIDriverRecreated, true, "ImmutableFieldChanged", *o.csiDriverRecreated,
             g));
  }
  setLifecycleConditions(o, conditions, now);
  s.conditions = std::move(conditions);
  return s;
}

namespace {

// The previous status, observed at this generation, with `set` applied to its conditions and
// then the lifecycle conditions.
api::DriverDeploymentStatus
carriedOver(const Observed& o, const std::optional<api::DriverDeploymentStatus>& previous,
            const std::string& now,
            const std::function<void(std::vector<api::Condition>&)>& set = {}) {
  api::DriverDeploymentStatus s = previous.value_or(api::DriverDeploymentStatus{});
  s.observedGeneration = o.generation;
  std::vector<api::Condition> conditions = s.conditions.value_or(std::vector<api::Condition>{});
  if (set) {
    set(conditions);
  }
  setLifecycleConditions(o, conditions, now);
  s.conditions = std::move(conditions);
  return s;
}

} // namespace

api::DriverDeploymentStatus pausedStatus(const Observed& o,
                                         const std::optional<api::DriverDeploymentStatus>& previous,
                                         const std::string& now) {
  return carriedOver(o, previous, now);
}

api::DriverDeploymentStatus
invalidSpecStatus(const Observed& o, const std::optional<api::DriverDeploymentStatus>& previous,
                  const std::vector<std::string>& errors, const std::string& now) {
  return carriedOver(o, previous, now, [&](std::vector<api::Condition>& conditions) {
    for (const auto& [type, status] :
         {std::pair{condition::kReady, false}, std::pair{condition::kDegraded, true}}) {
      api::Condition c = make(type, status, "InvalidSpec", joined(errors), o.generation);
      c.lastTransitionTime = now;
      setCondition(conditions, std::move(c));
    }
  });
}

bool conditionTrue(const std::optional<api::DriverDeploymentStatus>& status, const char* type) {
  const auto* c = status && status->conditions ? findCondition(*status->conditions, type) : nullptr;
  return c != nullptr && c->status == "True";
}

void setLifecycleConditions(const Observed& o, std::vector<api::Condition>& conditions,
                            const std::string& now) {
  const std::int64_t g = o.generation;
  const auto set = [&](api::Condition c) {
    c.lastTransitionTime = now;
    setCondition(conditions, std::move(c));
  };
  if (o.paused && o.deleting) {
    set(make(condition::kPaused, true, "DeletionPaused",
             "spec.paused is true: the DriverDeployment is being deleted, and its objects are kept "
             "until spec.paused is false",
             g));
  } else if (o.paused) {
    set(make(condition::kPaused, true, "Paused",
             "spec.paused is true: nothing is applied, pruned or deleted until it is false", g));
  } else if (findCondition(conditions, condition::kPaused) != nullptr) {
    set(make(condition::kPaused, false, "Resumed", "the operator manages the driver", g));
  }
  if (o.deletionBlocked) {
    set(make(condition::kDeletionBlocked, true, "VolumesInUse",
             "the deletion waits: " + *o.deletionBlocked +
                 " still use the driver; it completes by itself when they are gone (or annotate "
                 "csiop.dev/force-delete=true to delete anyway)",
             g));
  }
}

} // namespace csiop::controller
