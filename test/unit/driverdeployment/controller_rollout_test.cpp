#include <gtest/gtest.h>

#include <csiop/driverdeployment/controller_rollout.hpp>

namespace csiop::driverdeployment {
namespace {

using namespace std::chrono_literals;

const WallTime kT0 = WallTime{} + std::chrono::hours(24 * 365 * 56);

// A Deployment of two replicas whose pods run revision "old", verified by the operator.
class ControllerRollout : public ::testing::Test {
protected:
  void SetUp() override {
    policy.progressDeadline = 600s;
    policy.gateTimeout = 300s;
    workload.settled = true;
    workload.replicas = 2;
    pods("old", 2, kT0 - 1h);
    ControllerRolloutPlan adopted = run(kT0 - 30min); // the workload as it was created
    ASSERT_EQ(adopted.record.phase, RolloutPhase::Complete);
    ASSERT_EQ(adopted.record.revision, "old");
    ASSERT_TRUE(adopted.events.empty());
  }

  // The workload's controller has replaced every pod with `n` of `revision` created at `at`.
  void pods(const std::string& revision, int n, WallTime at, bool ready = true) {
    workload.pods.clear();
    for (int i = 0; i < n; ++i) {
      const std::string name = "controller-" + revision + "-" + std::to_string(i);
      workload.pods.push_back(
          PluginPod{name, "uid-" + name, "", revision, false, ready, at, at + 5s, ""});
    }
    workload.current = n;
    workload.updated = n;
    workload.available = ready ? n : 0;
  }

  ControllerRolloutPlan run(WallTime now) {
    ControllerRolloutInput in;
    in.now = now;
    in.policy = policy;
    in.previous = record;
    in.templateDigest = digest;
    in.workload = workload;
    in.smoke = smoke;
    in.smokeStarted = smokeStarted;
    ControllerRolloutPlan plan = planControllerRollout(in);
    record = plan.record;
    return plan;
  }

  static std::vector<std::string> reasons(const ControllerRolloutPlan& plan) {
    std::vector<std::string> out;
    for (const RolloutEvent& e : plan.events) {
      out.push_back(e.reason);
    }
    return out;
  }

  // A new template applied at kT0: the workload's controller has not seen it yet.
  ControllerRolloutPlan change() {
    digest = "template-new";
    workload.settled = false;
    workload.updated = 0; // no pod runs the new template yet
    return run(kT0);
  }

  RolloutPolicy policy;
  RolloutRecord record;
  std::string digest = "template-old";
  ControllerWorkload workload;
  SmokeResult smoke;
  WallTime smokeStarted{};
};

TEST_F(ControllerRollout, AnUnchangedTemplateStaysCompleteWithNoEvent) {
  const ControllerRolloutPlan plan = run(kT0);
  EXPECT_EQ(plan.record.phase, RolloutPhase::Complete);
  EXPECT_TRUE(plan.events.empty());
  EXPECT_FALSE(plan.revertTo);
  EXPECT_TRUE(plan.waiting.empty());
}

TEST_F(ControllerRollout, ANewTemplateIsCompleteOnceEveryNewReplicaIsAvailable) {
  const ControllerRolloutPlan started = change();
  EXPECT_EQ(started.record.phase, RolloutPhase::Canary);
  EXPECT_EQ(started.record.from, "old");
  EXPECT_EQ(reasons(started), std::vector<std::string>{"RolloutStarted"});
  EXPECT_EQ(started.waiting, "the workload's controller has not taken the new template yet");

  // Half way: one new replica, one old left.
  workload.settled = true;
  pods("new", 1, kT0 + 5s);
  workload.current = 2;
  workload.pods.push_back(
      PluginPod{"controller-old-1", "uid-o1", "", "old", false, true, kT0 - 1h, kT0 - 1h, ""});
  workload.replicas = 2;
  const ControllerRolloutPlan half = run(kT0 + 10s);
  EXPECT_EQ(half.record.phase, RolloutPhase::Canary);
  EXPECT_EQ(half.waiting, "waiting for the new replicas: 1 updated, 1 available of 2 replicas");

  // Every replica available, but one only just Ready: a container that exits at start is Ready
  // for a moment.
  pods("new", 2, kT0 + 5s);
  workload.pods[1].readySince = kT0 + 15s;
  const ControllerRolloutPlan fresh = run(kT0 + 20s);
  EXPECT_EQ(fresh.record.phase, RolloutPhase::Canary);
  EXPECT_EQ(fresh.waiting,
            "the new replicas are available; waiting until each has been Ready for 10 s");
  const ControllerRolloutPlan done = run(kT0 + 25s);
  EXPECT_EQ(done.record.phase, RolloutPhase::Complete);
  EXPECT_EQ(done.record.revision, "new");
  ASSERT_EQ(reasons(done), std::vector<std::string>{"RolloutComplete"});
  EXPECT_EQ(done.events[0].message,
            "controller revision new passed every gate: its replicas available");
}

TEST_F(ControllerRollout, ACrashLoopingNewPodRollsBackAtOnce) {
  change();
  workload.settled = true;
  pods("new", 2, kT0 + 5s, false);
  workload.pods[0].crashLoop = "csi-driver: back-off 10s restarting failed container";
  const ControllerRolloutPlan failed = run(kT0 + 15s);
  EXPECT_EQ(failed.record.phase, RolloutPhase::RollingBack);
  EXPECT_EQ(failed.record.failedGate, "Available");
  EXPECT_EQ(failed.record.failedTemplate, "template-new");
  EXPECT_EQ(failed.record.message, "the new controller pod controller-new-0 crash-loops: "
                                   "csi-driver: back-off 10s restarting failed container");
  EXPECT_EQ(failed.revertTo, std::optional<std::string>("old"));
  EXPECT_EQ(reasons(failed), std::vector<std::string>{"RolloutFailed"});
  EXPECT_TRUE(failed.events[0].warning);

  // The workload carries the previous template again; its controller brings the old pods back.
  workload.settled = false;
  EXPECT_EQ(run(kT0 + 20s).record.phase, RolloutPhase::RollingBack);
  workload.settled = true;
  pods("old", 2, kT0 + 25s);
  const ControllerRolloutPlan back = run(kT0 + 40s);
  EXPECT_EQ(back.record.phase, RolloutPhase::RolledBack);
  EXPECT_EQ(back.revertTo, std::optional<std::string>("old"));
  EXPECT_EQ(reasons(back), std::vector<std::string>{"RolledBack"});

  // The failed template is not tried again: the workload keeps the previous one.
  const ControllerRolloutPlan later = run(kT0 + 1h);
  EXPECT_EQ(later.record.phase, RolloutPhase::RolledBack);
  EXPECT_EQ(later.revertTo, std::optional<std::string>("old"));
  EXPECT_TRUE(later.events.empty());

  // A fixed template starts over, from the revision that passed.
  digest = "template-fixed";
  workload.settled = false;
  workload.updated = 0;
  const ControllerRolloutPlan fixed = run(kT0 + 2h);
  EXPECT_EQ(fixed.record.phase, RolloutPhase::Canary);
  EXPECT_EQ(fixed.record.from, "old");
  EXPECT_FALSE(fixed.revertTo);
}

TEST_F(ControllerRollout, AStatefulSetsBrokenPodsAreDeletedOnceThePreviousTemplateIsBack) {
  workload.orderedPods = true;
  change();
  workload.settled = true;
  pods("new", 2, kT0 + 5s, false);
  workload.pods[1].crashLoop = "csi-driver: exit 2";
  const ControllerRolloutPlan failed = run(kT0 + 15s);
  EXPECT_EQ(failed.record.phase, RolloutPhase::RollingBack);
  EXPECT_TRUE(failed.deletePods.empty()) << "the StatefulSet does not carry the old template yet";
  workload.settled = false;
  EXPECT_TRUE(run(kT0 + 16s).deletePods.empty());
  // It does: the broken pods would block its controller; they go.
  workload.settled = true;
  workload.updated = 0;
  const ControllerRolloutPlan back = run(kT0 + 20s);
  ASSERT_EQ(back.deletePods.size(), 2U);
  EXPECT_EQ(back.deletePods[0].pod, "controller-new-0");
  EXPECT_EQ(back.deletePods[0].why, "rolling the controller back to revision old");
  pods("old", 2, kT0 + 25s);
  const ControllerRolloutPlan done = run(kT0 + 40s);
  EXPECT_EQ(done.record.phase, RolloutPhase::RolledBack);
  EXPECT_TRUE(done.deletePods.empty());
}

TEST_F(ControllerRollout, ADeploymentsPodsAreLeftToItsController) {
  change();
  workload.settled = true;
  pods("new", 2, kT0 + 5s, false);
  workload.pods[0].crashLoop = "csi-driver: exit 2";
  run(kT0 + 15s);
  workload.updated = 0;
  EXPECT_TRUE(run(kT0 + 20s).deletePods.empty());
}

TEST_F(ControllerRollout, ReplicasNotAvailableWithinTheProgressDeadlineFail) {
  change();
  workload.settled = true;
  pods("new", 2, kT0 + 5s, false);
  EXPECT_EQ(run(kT0 + 599s).record.phase, RolloutPhase::Canary);
  const ControllerRolloutPlan failed = run(kT0 + 600s);
  EXPECT_EQ(failed.record.phase, RolloutPhase::RollingBack);
  EXPECT_EQ(failed.record.message, "the new replicas were not all available within 600 s: 2 "
                                   "updated, 0 available of 2 replicas");
}

TEST_F(ControllerRollout, HoldLeavesTheFailedTemplateInPlace) {
  policy.rollBack = false;
  change();
  workload.settled = true;
  pods("new", 2, kT0 + 5s, false);
  workload.pods[1].crashLoop = "csi-driver: exit 2";
  const ControllerRolloutPlan held = run(kT0 + 15s);
  EXPECT_EQ(held.record.phase, RolloutPhase::Held);
  EXPECT_FALSE(held.revertTo);
  EXPECT_FALSE(run(kT0 + 1h).revertTo);
}

TEST_F(ControllerRollout, WithNoKnownEarlierRevisionAFailureHolds) {
  record = RolloutRecord{};
  record.phase = RolloutPhase::Complete;
  record.template_ = "template-old"; // recorded before any pod ran
  change();
  workload.settled = true;
  pods("new", 2, kT0 + 5s, false);
  workload.pods[0].crashLoop = "csi-driver: exit 2";
  const ControllerRolloutPlan held = run(kT0 + 15s);
  EXPECT_EQ(held.record.phase, RolloutPhase::Held);
  EXPECT_EQ(held.record.message,
            "the new controller pod controller-new-0 crash-loops: "
            "csi-driver: exit 2; no earlier revision is known to roll back to");
}

TEST_F(ControllerRollout, TheSmokeVolumeProvisionsThroughTheNewController) {
  policy.smokeVolume = true;
  change();
  workload.settled = true;
  pods("new", 2, kT0 + 5s);
  EXPECT_FALSE(run(kT0 + 15s).smoke) << "not before the new replicas have stayed Ready";
  const ControllerRolloutPlan asked = run(kT0 + 20s);
  EXPECT_EQ(asked.record.phase, RolloutPhase::Canary);
  EXPECT_TRUE(asked.smoke);
  EXPECT_EQ(asked.waiting, "waiting for a claim of the smoke volume's class to be provisioned "
                           "through the new controller");

  smokeStarted = kT0 + 21s;
  smoke = {SmokeResult::State::Running, "Provision", "ProvisioningFailed: rpc error: busy"};
  EXPECT_TRUE(run(kT0 + 30s).smoke);

  smoke = {SmokeResult::State::Passed, "", "Provision: ok (pvc-1)"};
  const ControllerRolloutPlan passed = run(kT0 + 40s);
  EXPECT_EQ(passed.record.phase, RolloutPhase::Complete);
  EXPECT_TRUE(passed.removeSmoke);
  ASSERT_EQ(reasons(passed), std::vector<std::string>{"RolloutComplete"});
  EXPECT_EQ(passed.events[0].message,
            "controller revision new passed every gate: its replicas available, a claim "
            "provisioned through it (Provision: ok (pvc-1))");
}

TEST_F(ControllerRollout, AClaimNotProvisionedWithinTheGateTimeoutFails) {
  policy.smokeVolume = true;
  change();
  workload.settled = true;
  pods("new", 2, kT0 + 5s);
  smokeStarted = kT0 + 10s;
  smoke = {SmokeResult::State::Running, "Provision", "ProvisioningFailed: rpc error: busy"};
  EXPECT_EQ(run(kT0 + 309s).record.phase, RolloutPhase::Canary);
  const ControllerRolloutPlan failed = run(kT0 + 310s);
  EXPECT_EQ(failed.record.phase, RolloutPhase::RollingBack);
  EXPECT_EQ(failed.record.failedGate, "SmokeVolume");
  EXPECT_EQ(failed.record.message, "Provision: the claim was not provisioned within 300 s: "
                                   "ProvisioningFailed: rpc error: busy");
  EXPECT_TRUE(failed.removeSmoke);
  EXPECT_FALSE(failed.smoke);
}

TEST_F(ControllerRollout, ANewerTemplateDuringARolloutStartsOverFromTheLastPassedRevision) {
  change();
  workload.settled = true;
  pods("new", 2, kT0 + 5s, false);
  run(kT0 + 10s);
  digest = "template-newer";
  const ControllerRolloutPlan again = run(kT0 + 20s);
  EXPECT_EQ(again.record.phase, RolloutPhase::Canary);
  EXPECT_EQ(again.record.from, "old");
  EXPECT_EQ(again.record.template_, "template-newer");
  EXPECT_EQ(reasons(again), std::vector<std::string>{"RolloutStarted"});
}

TEST_F(ControllerRollout, APodOfTheOldRevisionThatCrashLoopsDoesNotFailTheNewOne) {
  workload.pods[0].crashLoop = "csi-driver: exit 1"; // created before the rollout
  change();
  workload.settled = true;
  const ControllerRolloutPlan plan = run(kT0 + 5s);
  EXPECT_EQ(plan.record.phase, RolloutPhase::Canary);
}

} // namespace
} // namespace csiop::driverdeployment
