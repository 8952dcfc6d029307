#include <csiop/controller/status.hpp>

#include <algorithm>

#include <csiop/controller/pod_problems.hpp>

namespace csiop::controller {
namespace {

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
    s.nodes = api::NodesStatus{o.nodes->desired, o.nodes->ready, o.registered};
  } else {
    s.nodes = api::NodesStatus{0, 0, o.registered};
  }
  if (o.hasController) {
    const auto w = o.controller.value_or(Observed::Workload{});
    s.controller = api::ControllerStatus{w.desired, w.ready};
  }

  if (!o.applyErrors.empty()) {
    std::string message;
    for (const auto& e : o.applyErrors) {
      message += (message.empty() ? "" : "; ") + e;
    }
    set(make(condition::kDegraded, true, "ApplyFailed", message, g));
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
  if (!o.nodes || !rolledOut(*o.nodes)) {
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
  set(make(condition::kProgressing, rollingOut, rollingOut ? "RollingOut" : "Complete",
           rollingOut ? "waiting for the rollout" : "the rollout is complete", g));

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
  s.conditions = std::move(conditions);
  return s;
}

} // namespace csiop::controller
