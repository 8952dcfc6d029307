#include <csiop/driverdeployment/controller_rollout.hpp>

namespace csiop::driverdeployment {

namespace {

using std::chrono::seconds;

std::string secondsText(seconds s) {
  return std::to_string(s.count()) + " s";
}

class Planner {
public:
  explicit Planner(const ControllerRolloutInput& input) : in_(input) {
    out_.record = input.previous;
  }

  ControllerRolloutPlan plan() {
    rec().updated = w().updated;
    rec().total = w().replicas;
    switch (rec().phase) {
    case RolloutPhase::RolledBack:
    case RolloutPhase::Held:
      if (in_.templateDigest == rec().failedTemplate) {
        if (rec().phase == RolloutPhase::RolledBack) {
          out_.revertTo = rec().from;
        }
        return std::move(out_); // the failed template waits for a change or a retry
      }
      start();
      return std::move(out_);
    case RolloutPhase::RollingBack:
      if (in_.templateDigest == rec().failedTemplate) {
        rollBack();
      } else {
        start();
      }
      return std::move(out_);
    case RolloutPhase::Canary:
      if (in_.templateDigest == rec().template_) {
        verify();
      } else {
        start(); // a newer template replaces the one in progress
      }
      return std::move(out_);
    case RolloutPhase::None:
    case RolloutPhase::Complete:
    case RolloutPhase::Soak:
    case RolloutPhase::Batch:
      break;
    }
    if (rec().template_.empty()) {
      // The workload as it is: its first creation (or the first pass of Verified) is not gated.
      rec().template_ = in_.templateDigest;
      rec().phase = RolloutPhase::Complete;
      rec().since = in_.now;
      rec().revision = podRevision();
    } else if (in_.templateDigest == rec().template_) {
      if (w().settled && complete() && !podRevision().empty()) {
        rec().revision = podRevision();
      }
    } else {
      start();
    }
    return std::move(out_);
  }

private:
  RolloutRecord& rec() { return out_.record; }
  const ControllerWorkload& w() const { return in_.workload; }

  // The revision every live pod runs ("": none, or several).
  std::string podRevision() const {
    std::string revision;
    for (const PluginPod& pod : w().pods) {
      if (pod.deleting) {
        continue;
      }
      if (!revision.empty() && pod.revision != revision) {
        return "";
      }
      revision = pod.revision;
    }
    return revision;
  }

  // Every replica runs the workload's template and is available, and no other pod is left.
  bool complete() const {
    return w().updated == w().replicas && w().available == w().replicas &&
           w().current == w().replicas;
  }

  std::string progress() const {
    return std::to_string(w().updated) + " updated, " + std::to_string(w().available) +
           " available of " + std::to_string(w().replicas) + " replicas" +
           (w().current > w().replicas
                ? ", " + std::to_string(w().current - w().replicas) + " old one(s) left"
                : "");
  }

  void start() {
    // What a failure goes back to: the last revision that passed (a rollout replaced before
    // its end, or one that failed, keeps the one it started from).
    const bool passed = rec().phase == RolloutPhase::Complete || rec().phase == RolloutPhase::None;
    RolloutRecord fresh;
    fresh.from = passed ? rec().revision : rec().from;
    fresh.template_ = in_.templateDigest;
    fresh.phase = RolloutPhase::Canary;
    fresh.since = in_.now;
    fresh.retry = rec().retry;
    fresh.updated = w().updated;
    fresh.total = w().replicas;
    rec() = std::move(fresh);
    out_.removeSmoke = true; // an earlier template's test has nothing left to prove
    out_.events.push_back(
        {false, "RolloutStarted",
         "rolling out a new controller pod template" +
             (rec().from.empty() ? std::string() : " (from revision " + rec().from + ")")});
    verify();
  }

  void verify() {
    if (!w().settled) {
      deadline("the workload's controller has not taken the new template yet");
      return;
    }
    for (const PluginPod& pod : w().pods) {
      if (!pod.deleting && pod.created >= rec().since && !pod.crashLoop.empty()) {
        fail("Available", "the new controller pod " + pod.name + " crash-loops: " + pod.crashLoop);
        return;
      }
    }
    if (!complete()) {
      deadline("waiting for the new replicas: " + progress());
      return;
    }
    for (const PluginPod& pod : w().pods) {
      if (!pod.deleting && pod.created >= rec().since &&
          (!pod.ready || in_.now < pod.readySince + kControllerStableFor)) {
        deadline("the new replicas are available; waiting until each has been Ready for " +
                 secondsText(kControllerStableFor));
        return;
      }
    }
    rec().revision = podRevision();
    if (in_.policy.smokeVolume) {
      switch (in_.smoke.state) {
      case SmokeResult::State::Passed:
        break;
      case SmokeResult::State::Failed:
        fail("SmokeVolume",
             in_.smoke.stage + (in_.smoke.stage.empty() ? "" : ": ") + in_.smoke.message);
        return;
      case SmokeResult::State::NotStarted:
      case SmokeResult::State::Running: {
        const std::string stage = in_.smoke.stage.empty() ? "Provision" : in_.smoke.stage;
        if (in_.smokeStarted != WallTime{} &&
            in_.now >= in_.smokeStarted + in_.policy.gateTimeout) {
          fail("SmokeVolume", stage + ": the claim was not provisioned within " +
                                  secondsText(in_.policy.gateTimeout) +
                                  (in_.smoke.message.empty() ? "" : ": " + in_.smoke.message));
          return;
        }
        out_.smoke = true;
        out_.waiting = "waiting for a claim of the smoke volume's class to be provisioned "
                       "through the new controller" +
                       (in_.smoke.message.empty() ? std::string() : ": " + in_.smoke.message);
        return;
      }
      }
    }
    rec().phase = RolloutPhase::Complete;
    rec().since = in_.now;
    out_.removeSmoke = true;
    std::string gates = "its replicas available";
    if (in_.policy.smokeVolume) {
      gates += ", a claim provisioned through it (" + in_.smoke.message + ")";
    }
    out_.events.push_back(
        {false, "RolloutComplete",
         "controller revision " + rec().revision + " passed every gate: " + gates});
  }

  // Waits, or fails the Available gate once the progress deadline has passed.
  void deadline(const std::string& waiting) {
    if (in_.now >= rec().since + in_.policy.progressDeadline) {
      fail("Available", "the new replicas were not all available within " +
                            secondsText(in_.policy.progressDeadline) + ": " + progress());
      return;
    }
    out_.waiting = waiting;
  }

  void fail(const std::string& gate, const std::string& message) {
    rec().failedTemplate = rec().template_;
    rec().failedGate = gate;
    rec().message = message;
    rec().since = in_.now;
    out_.removeSmoke = true;
    out_.smoke = false;
    out_.waiting.clear();
    const bool back = in_.policy.rollBack && !rec().from.empty();
    const std::string revision =
        rec().revision.empty() ? "the new template" : "revision " + rec().revision;
    out_.events.push_back(
        {true, "RolloutFailed",
         "controller " + revision + " failed gate " + gate + ": " + message +
             (back ? "; rolling back to revision " + rec().from : std::string("; holding"))});
    if (back) {
      rec().phase = RolloutPhase::RollingBack;
      rollBack();
    } else {
      rec().phase = RolloutPhase::Held;
      if (in_.policy.rollBack) {
        rec().message += "; no earlier revision is known to roll back to";
      }
    }
  }

  void rollBack() {
    out_.revertTo = rec().from;
    if (w().settled && complete() && podRevision() == rec().from) {
      rec().phase = RolloutPhase::RolledBack;
      rec().since = in_.now;
      out_.events.push_back({true, "RolledBack",
                             "the controller is back at revision " + rec().from +
                                 "; the failed template is not tried again until the "
                                 "DriverDeployment changes"});
      return;
    }
    out_.waiting = "rolling back to revision " + rec().from + ": " + progress();
    // The previous template goes back on the workload in the pass after the failure (before
    // the children are applied): settled since then, the workload carries it.
    if (w().orderedPods && w().settled && in_.previous.phase == RolloutPhase::RollingBack) {
      for (const PluginPod& pod : w().pods) {
        if (!pod.deleting && pod.revision != rec().from) {
          out_.deletePods.push_back({pod.name, pod.uid, pod.node,
                                     "rolling the controller back to revision " + rec().from});
        }
      }
    }
  }

  const ControllerRolloutInput& in_;
  ControllerRolloutPlan out_;
};

} // namespace

ControllerRolloutPlan planControllerRollout(const ControllerRolloutInput& input) {
  return Planner(input).plan();
}

} // namespace csiop::driverdeployment
