#include <gtest/gtest.h>

#include <csiop/driverdeployment/verified_rollout.hpp>

namespace csiop::driverdeployment {
namespace {

using namespace std::chrono_literals;

const WallTime kT0 = WallTime{} + std::chrono::hours(24 * 365 * 56);

class VerifiedRollout : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char* node : {"a", "b", "c", "d", "e"}) {
      pods.push_back(pod(node, "old"));
      registration[node] = {true, WallTime{}};
    }
    policy.canaryNodes = 1;
    policy.batchSize = 2;
    policy.soak = 60s;
    policy.gateTimeout = 300s;
    policy.progressDeadline = 600s;
  }

  static PluginPod pod(const std::string& node, const std::string& revision, bool ready = true,
                       WallTime created = kT0 - 1h) {
    return PluginPod{"plugin-" + node + "-" + revision,
                     "uid-" + node + "-" + revision,
                     node,
                     revision,
                     false,
                     ready,
                     created,
                     ready ? created + 5s : WallTime{},
                     ""};
  }

  // The DaemonSet controller's part: the pods deleted by the last plan come back at `revision`,
  // created at `at`, Ready `readyAfter` later (or not Ready), and the kubelet registers the driver
  // again on their nodes.
  void recreate(const VerifiedRolloutPlan& plan, const std::string& revision, WallTime at,
                bool ready = true) {
    for (const Replacement& r : plan.replace) {
      std::erase_if(pods, [&](const PluginPod& p) { return p.uid == r.uid; });
      PluginPod fresh = pod(r.node, revision, ready, at);
      pods.push_back(fresh);
      if (ready) {
        registration[r.node] = {true, fresh.readySince + 1s};
      } else {
        registration[r.node] = {false, WallTime{}};
      }
    }
  }

  VerifiedRolloutPlan run(WallTime now) {
    VerifiedRolloutInput in;
    in.now = now;
    in.policy = policy;
    in.previous = record;
    in.currentRevision = current;
    in.templateDigest = digest;
    in.revisionSettled = settled;
    in.pods = pods;
    in.canaryPool = pool;
    in.unsafe = unsafe;
    in.registration = registration;
    in.smoke = smoke;
    in.images = images;
    VerifiedRolloutPlan plan = planVerifiedRollout(in);
    record = plan.record;
    return plan;
  }

  static std::vector<std::string> nodesOf(const VerifiedRolloutPlan& plan) {
    std::vector<std::string> out;
    for (const Replacement& r : plan.replace) {
      out.push_back(r.node);
    }
    return out;
  }

  static std::vector<std::string> reasons(const VerifiedRolloutPlan& plan) {
    std::vector<std::string> out;
    for (const RolloutEvent& e : plan.events) {
      out.push_back(e.reason);
    }
    return out;
  }

  // Every pod at `revision`, a revision rolled out before the test.
  void settle(const std::string& revision) {
    current = revision;
    for (PluginPod& p : pods) {
      p.revision = revision;
    }
    record = {};
    record.phase = RolloutPhase::Complete;
    record.revision = revision;
  }

  // From a fresh start at kT0 to the canary on "a" passing its gates at kT0 + 10 s.
  VerifiedRolloutPlan passCanary() {
    current = "new";
    digest = "t2";
    replaceCanary();
    return run(kT0 + 10s);
  }

  // With pre-pulls, every node at "old", then the DaemonSet at revision "new" (template "t2").
  void startWithPrePulls() {
    policy.prePull = true;
    settle("old");
    current = "new";
    digest = "t2";
  }

  // The rollout starts at kT0; the canary's new pod is created at kT0 + 2 s.
  void replaceCanary(bool ready = true) { recreate(run(kT0), current, kT0 + 2s, ready); }

  RolloutPolicy policy;
  RolloutRecord record;
  std::string current = "old";
  std::string digest = "t1";
  bool settled = false; // the DaemonSet controller has seen the latest spec
  std::vector<PluginPod> pods;
  std::set<std::string> pool;
  std::map<std::string, std::string> unsafe;
  std::map<std::string, NodeRegistration> registration;
  std::map<std::string, SmokeResult> smoke;
  std::map<std::string, PrePullResult> images;
};

TEST_F(VerifiedRollout, AFirstDeploymentIsCompleteWithoutReplacingAnything) {
  const VerifiedRolloutPlan plan = run(kT0);
  EXPECT_EQ(plan.record.phase, RolloutPhase::Complete);
  EXPECT_EQ(plan.record.revision, "old");
  EXPECT_EQ(plan.record.updated, 5);
  EXPECT_TRUE(plan.replace.empty());
  EXPECT_TRUE(plan.events.empty());
}

TEST_F(VerifiedRollout, ANewRevisionReplacesOnlyTheCanaryFirst) {
  settle("old");
  current = "new";
  digest = "t2";
  const VerifiedRolloutPlan plan = run(kT0);
  EXPECT_EQ(plan.record.phase, RolloutPhase::Canary);
  EXPECT_EQ(plan.record.from, "old");
  EXPECT_EQ(plan.record.revision, "new");
  EXPECT_EQ(plan.record.template_, "t2");
  EXPECT_EQ(plan.record.canaries, std::vector<std::string>{"a"});
  EXPECT_EQ(nodesOf(plan), std::vector<std::string>{"a"});
  EXPECT_EQ(reasons(plan), std::vector<std::string>{"RolloutStarted"});
  EXPECT_TRUE(plan.removeSmoke);
  EXPECT_FALSE(plan.revertTo);
}

TEST_F(VerifiedRollout, CanariesComeFromThePoolAndNeverFromAnUnsafeNode) {
  settle("old");
  current = "new";
  pool = {"c", "d", "e"};
  unsafe["c"] = "2 pods use volumes of the driver (apps/x, apps/y)";
  policy.canaryNodes = 2;
  const VerifiedRolloutPlan plan = run(kT0);
  EXPECT_EQ(plan.record.canaries, (std::vector<std::string>{"d", "e"}));
  EXPECT_EQ(nodesOf(plan), (std::vector<std::string>{"d", "e"}));
}

TEST_F(VerifiedRollout, WithNoCanaryNodeAvailableEveryNodeWaitsWithItsReason) {
  settle("old");
  current = "new";
  pool = {"b"};
  unsafe["b"] = "1 pod uses volumes of the driver (apps/x)";
  const VerifiedRolloutPlan plan = run(kT0);
  EXPECT_EQ(plan.record.phase, RolloutPhase::Canary);
  EXPECT_TRUE(plan.record.canaries.empty());
  EXPECT_TRUE(plan.replace.empty());
  ASSERT_EQ(plan.waiting.size(), 5U);
  EXPECT_EQ(plan.waiting[1].node, "b");
  EXPECT_EQ(plan.waiting[1].reason, "VolumesInUse");
  EXPECT_EQ(plan.waiting[0].reason, "NotACanaryNode");

  unsafe.clear(); // the volume's pod went away
  const VerifiedRolloutPlan later = run(kT0 + 30s);
  EXPECT_EQ(later.record.canaries, std::vector<std::string>{"b"});
  EXPECT_EQ(nodesOf(later), std::vector<std::string>{"b"});
}

TEST_F(VerifiedRollout, ACanaryReadyAndRegisteredAgainPassesThenTheRestSoaks) {
  settle("old");
  const VerifiedRolloutPlan passed = passCanary();
  EXPECT_EQ(passed.record.phase, RolloutPhase::Soak);
  EXPECT_EQ(reasons(passed), std::vector<std::string>{"CanaryPassed"});
  EXPECT_EQ(passed.record.updated, 1);
  EXPECT_TRUE(passed.replace.empty());

  EXPECT_TRUE(run(kT0 + 69s).replace.empty()); // the soak lasts 60 s from kT0 + 10 s
  const VerifiedRolloutPlan batch = run(kT0 + 70s);
  EXPECT_EQ(batch.record.phase, RolloutPhase::Batch);
  EXPECT_EQ(batch.record.batch, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(nodesOf(batch), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(reasons(batch), std::vector<std::string>{"BatchStarted"});
}

TEST_F(VerifiedRollout, TheCanaryWaitsForEachGateInOrder) {
  settle("old");
  current = "new";
  replaceCanary(false);
  VerifiedRolloutPlan plan = run(kT0 + 5s);
  EXPECT_EQ(plan.record.phase, RolloutPhase::Canary);
  ASSERT_EQ(plan.waiting.size(), 1U);
  EXPECT_EQ(plan.waiting[0].reason, "CanaryPodReady");

  PluginPod& canary = pods.back();
  canary.ready = true;
  canary.readySince = kT0 + 8s;
  plan = run(kT0 + 9s); // Ready, but the CSINode does not list the driver
  ASSERT_EQ(plan.waiting.size(), 1U);
  EXPECT_EQ(plan.waiting[0].reason, "CanaryRegistered");

  registration["a"] = {true, kT0 + 11s};
  policy.smokeVolume = true;
  plan = run(kT0 + 12s);
  ASSERT_EQ(plan.waiting.size(), 1U);
  EXPECT_EQ(plan.waiting[0].reason, "CanarySmokeVolume");
  EXPECT_EQ(plan.smokeOn, std::vector<std::string>{"a"});

  smoke["a"] = {SmokeResult::State::Running, "Mount", ""};
  plan = run(kT0 + 20s);
  EXPECT_EQ(plan.smokeOn, std::vector<std::string>{"a"});
  EXPECT_EQ(plan.record.phase, RolloutPhase::Canary);

  smoke["a"] = {SmokeResult::State::Passed, "", "Mount: ok; Write: ok; Read: ok; Cleanup: ok"};
  plan = run(kT0 + 25s);
  EXPECT_EQ(plan.record.phase, RolloutPhase::Soak);
  EXPECT_TRUE(plan.removeSmoke);
  EXPECT_TRUE(plan.smokeOn.empty());
  ASSERT_EQ(reasons(plan), std::vector<std::string>{"CanaryPassed"});
  EXPECT_EQ(plan.events[0].message,
            "node plugin revision new passed every gate on a; the smoke volume on a: Mount: ok; "
            "Write: ok; Read: ok; Cleanup: ok");
}

TEST_F(VerifiedRollout, AListingFromBeforeTheNewPodCountsOnlyAfterItSettles) {
  settle("old");
  current = "new";
  replaceCanary();
  registration["a"] = {true, kT0 - 1h}; // the kubelet kept the old registration
  EXPECT_EQ(run(kT0 + 10s).record.phase, RolloutPhase::Canary);
  EXPECT_EQ(run(kT0 + 22s).record.phase, RolloutPhase::Soak); // Ready at +7 s, settled at +22 s
}

TEST_F(VerifiedRollout, ACrashLoopingCanaryRollsBackTheCanaryOnly) {
  settle("old");
  current = "new";
  digest = "t2";
  replaceCanary(false);
  pods.back().crashLoop = "hostpath: back-off 10s restarting failed container";

  const VerifiedRolloutPlan failed = run(kT0 + 20s);
  EXPECT_EQ(failed.record.phase, RolloutPhase::RollingBack);
  EXPECT_EQ(failed.record.failedGate, "PodReady");
  EXPECT_EQ(failed.record.failedNode, "a");
  EXPECT_EQ(failed.record.failedTemplate, "t2");
  EXPECT_NE(failed.record.message.find("crash-loops"), std::string::npos);
  EXPECT_EQ(failed.revertTo, std::optional<std::string>("old"));
  EXPECT_TRUE(failed.replace.empty()); // not before the DaemonSet carries the old template again
  EXPECT_EQ(reasons(failed), std::vector<std::string>{"RolloutFailed"});
  EXPECT_TRUE(failed.events[0].warning);
  EXPECT_TRUE(keepPreviousTemplate(failed.record, "t2"));

  current = "old"; // the reconciler applied the previous template
  const VerifiedRolloutPlan back = run(kT0 + 21s);
  EXPECT_EQ(nodesOf(back), std::vector<std::string>{"a"});
  recreate(back, "old", kT0 + 22s);
  const VerifiedRolloutPlan done = run(kT0 + 30s);
  EXPECT_EQ(done.record.phase, RolloutPhase::RolledBack);
  EXPECT_EQ(reasons(done), std::vector<std::string>{"RolledBack"});
  EXPECT_EQ(done.record.updated, 0);
  for (const PluginPod& p : pods) {
    if (p.node != "a") {
      EXPECT_EQ(p.uid, "uid-" + p.node + "-old") << "node " << p.node << " was touched";
    }
  }

  // The failed template is not tried again while it stays the desired one...
  const VerifiedRolloutPlan still = run(kT0 + 1h);
  EXPECT_EQ(still.record.phase, RolloutPhase::RolledBack);
  EXPECT_EQ(still.revertTo, std::optional<std::string>("old"));
  EXPECT_TRUE(still.replace.empty());
  // ...and a changed one rolls out again, canary first.
  digest = "t3";
  EXPECT_FALSE(keepPreviousTemplate(still.record, "t3"));
  current = "newer";
  const VerifiedRolloutPlan again = run(kT0 + 2h);
  EXPECT_EQ(again.record.phase, RolloutPhase::Canary);
  EXPECT_EQ(again.record.revision, "newer");
  EXPECT_TRUE(again.record.failedTemplate.empty());
  EXPECT_EQ(nodesOf(again), std::vector<std::string>{"a"});
}

// An admin who puts the previous value back in the spec after a rollback: the DaemonSet makes no
// new revision (its template is the one running everywhere), and once its controller has seen
// the spec, the rollout is complete and the failure no longer shown.
TEST_F(VerifiedRollout, ThePreviousTemplatePutBackCompletesOnceTheDaemonSetHasSeenIt) {
  settle("old");
  current = "new";
  digest = "t2";
  replaceCanary(false);
  pods.back().crashLoop = "hostpath: back-off";
  run(kT0 + 20s);
  current = "old";
  recreate(run(kT0 + 21s), "old", kT0 + 22s);
  ASSERT_EQ(run(kT0 + 30s).record.phase, RolloutPhase::RolledBack);

  digest = "t1"; // the previous value, back in the spec
  const VerifiedRolloutPlan unseen = run(kT0 + 40s);
  EXPECT_EQ(unseen.record.phase, RolloutPhase::RolledBack) << "its controller has not seen it";
  settled = true;
  const VerifiedRolloutPlan done = run(kT0 + 41s);
  EXPECT_EQ(done.record.phase, RolloutPhase::Complete);
  EXPECT_EQ(done.record.revision, "old");
  EXPECT_EQ(done.record.template_, "t1");
  EXPECT_TRUE(done.replace.empty());
  EXPECT_FALSE(done.revertTo);
}

TEST_F(VerifiedRollout, ACanaryNotReadyInTimeFailsItsGate) {
  settle("old");
  current = "new";
  replaceCanary(false);
  EXPECT_EQ(run(kT0 + 301s).record.phase, RolloutPhase::Canary);
  const VerifiedRolloutPlan failed = run(kT0 + 302s);
  EXPECT_EQ(failed.record.phase, RolloutPhase::RollingBack);
  EXPECT_EQ(failed.record.failedGate, "PodReady");
}

TEST_F(VerifiedRollout, AnUnregisteredCanaryHoldsWhenThePolicySaysHold) {
  settle("old");
  current = "new";
  policy.rollBack = false;
  replaceCanary();
  registration["a"] = {false, WallTime{}}; // never registers
  const VerifiedRolloutPlan failed = run(kT0 + 400s);
  EXPECT_EQ(failed.record.phase, RolloutPhase::Held);
  EXPECT_EQ(failed.record.failedGate, "Registered");
  EXPECT_FALSE(failed.revertTo);
  EXPECT_FALSE(keepPreviousTemplate(failed.record, digest));
  EXPECT_NE(failed.events[0].message.find("holding"), std::string::npos);
  const VerifiedRolloutPlan held = run(kT0 + 1h);
  EXPECT_EQ(held.record.phase, RolloutPhase::Held);
  EXPECT_TRUE(held.replace.empty());
}

TEST_F(VerifiedRollout, AFailedSmokeVolumeNamesItsStage) {
  settle("old");
  current = "new";
  policy.smokeVolume = true;
  replaceCanary();
  EXPECT_EQ(run(kT0 + 10s).smokeOn, std::vector<std::string>{"a"});
  smoke["a"] = {SmokeResult::State::Failed, "Mount",
                "MountVolume.SetUp failed for volume \"pvc-1\": rpc error"};
  const VerifiedRolloutPlan failed = run(kT0 + 40s);
  EXPECT_EQ(failed.record.failedGate, "SmokeVolume");
  EXPECT_EQ(failed.record.message,
            "Mount: MountVolume.SetUp failed for volume \"pvc-1\": rpc error");
  EXPECT_TRUE(failed.removeSmoke);
  EXPECT_TRUE(failed.smokeOn.empty());
}

TEST_F(VerifiedRollout, BatchesFollowEachOtherAfterTheSoakUntilComplete) {
  settle("old");
  passCanary();
  VerifiedRolloutPlan plan = run(kT0 + 70s);
  recreate(plan, "new", kT0 + 71s);
  plan = run(kT0 + 80s);
  EXPECT_EQ(plan.record.phase, RolloutPhase::Soak);
  EXPECT_EQ(plan.record.updated, 3);
  plan = run(kT0 + 140s);
  EXPECT_EQ(plan.record.batch, (std::vector<std::string>{"d", "e"}));
  recreate(plan, "new", kT0 + 141s);
  plan = run(kT0 + 150s);
  EXPECT_EQ(plan.record.phase, RolloutPhase::Complete);
  EXPECT_EQ(plan.record.updated, 5);
  EXPECT_EQ(reasons(plan), std::vector<std::string>{"RolloutComplete"});
}

TEST_F(VerifiedRollout, ABatchPastItsDeadlineRollsBackEveryUpdatedNode) {
  settle("old");
  passCanary();
  VerifiedRolloutPlan plan = run(kT0 + 70s);
  recreate(plan, "new", kT0 + 71s, false);
  EXPECT_EQ(run(kT0 + 669s).record.phase, RolloutPhase::Batch);
  plan = run(kT0 + 671s);
  EXPECT_EQ(plan.record.phase, RolloutPhase::RollingBack);
  EXPECT_EQ(plan.record.failedGate, "Batch");
  EXPECT_EQ(plan.record.failedNode, "b");
  current = "old";
  plan = run(kT0 + 672s);
  // At most a batch at a time; the failed revision's pods that are not Ready go back first.
  EXPECT_EQ(nodesOf(plan), (std::vector<std::string>{"b", "c"}));
}

TEST_F(VerifiedRollout, WithPrePullsANodesPluginGoesOnlyOnceItsImagesArePulled) {
  startWithPrePulls();
  VerifiedRolloutPlan plan = run(kT0);
  EXPECT_TRUE(plan.replace.empty()) << "the canary's images are not pulled yet";
  EXPECT_EQ(plan.prePullOn, std::vector<std::string>{"a"});
  ASSERT_EQ(plan.waiting.size(), 1u);
  EXPECT_EQ(plan.waiting[0].reason, "PullingImages");
  // A pull the kubelet retries: still pending, with its error, and no deadline of the gate's.
  images["a"] = {PrePullResult::State::Pending, "image x: ImagePullBackOff"};
  plan = run(kT0 + 1000s);
  EXPECT_EQ(plan.record.phase, RolloutPhase::Canary);
  EXPECT_EQ(plan.waiting[0].message,
            "pulling the new images on the node before its plugin is replaced: image x: "
            "ImagePullBackOff");
  images["a"] = {PrePullResult::State::Pulled, ""};
  plan = run(kT0 + 1001s);
  EXPECT_EQ(nodesOf(plan), std::vector<std::string>{"a"});
  EXPECT_TRUE(plan.prePullOn.empty());
  recreate(plan, "new", kT0 + 1002s);
  plan = run(kT0 + 1010s); // the canary passes: the soak
  plan = run(kT0 + 1070s); // the first batch waits for its pulls
  EXPECT_EQ(plan.record.batch, (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(plan.replace.empty());
  EXPECT_EQ(plan.prePullOn, (std::vector<std::string>{"b", "c"}));
  images["b"] = {PrePullResult::State::Pulled, ""};
  plan = run(kT0 + 1071s);
  EXPECT_EQ(nodesOf(plan), std::vector<std::string>{"b"});
  EXPECT_EQ(plan.prePullOn, std::vector<std::string>{"c"});
}

TEST_F(VerifiedRollout, AnImageThatCannotBePulledFailsTheCanaryWithoutTouchingIt) {
  startWithPrePulls();
  run(kT0);
  images["a"] = {PrePullResult::State::Failed, "image x: ErrImageNeverPull"};
  VerifiedRolloutPlan plan = run(kT0 + 5s);
  EXPECT_EQ(plan.record.phase, RolloutPhase::RollingBack);
  EXPECT_EQ(plan.record.failedGate, "ImagesPulled");
  EXPECT_EQ(plan.record.failedNode, "a");
  EXPECT_EQ(plan.record.message, "image x: ErrImageNeverPull");
  EXPECT_TRUE(plan.replace.empty());
  EXPECT_EQ(plan.revertTo, "old");
  // The DaemonSet carries the previous template again: nothing to replace, rolled back.
  current = "old";
  plan = run(kT0 + 6s);
  EXPECT_EQ(plan.record.phase, RolloutPhase::RolledBack);
  EXPECT_TRUE(plan.replace.empty());
}

TEST_F(VerifiedRollout, APullNotDoneWithinTheGateTimeoutFailsWithItsLastError) {
  startWithPrePulls();
  run(kT0);
  // The pre-pull pod was made at kT0 + 1s; the kubelet retries a registry it cannot reach.
  images["a"] = {PrePullResult::State::Pending, "image x: ErrImagePull: connection refused",
                 kT0 + 1s};
  EXPECT_EQ(run(kT0 + 300s).record.phase, RolloutPhase::Canary);
  const VerifiedRolloutPlan plan = run(kT0 + 301s);
  EXPECT_EQ(plan.record.phase, RolloutPhase::RollingBack);
  EXPECT_EQ(plan.record.failedGate, "ImagesPulled");
  EXPECT_EQ(plan.record.message,
            "the new images were not pulled within 300 s: image x: ErrImagePull: connection "
            "refused");
  EXPECT_TRUE(plan.replace.empty());
}

TEST_F(VerifiedRollout, ARollbackNeverWaitsForAPull) {
  startWithPrePulls();
  run(kT0);
  images["a"] = {PrePullResult::State::Pulled, ""};
  replaceCanary(false);
  pods.back().crashLoop = "driver: back-off";
  images.clear(); // nothing pulled for the previous revision
  VerifiedRolloutPlan plan = run(kT0 + 10s);
  EXPECT_EQ(plan.record.phase, RolloutPhase::RollingBack);
  current = "old";
  plan = run(kT0 + 11s);
  EXPECT_EQ(nodesOf(plan), std::vector<std::string>{"a"});
  EXPECT_TRUE(plan.prePullOn.empty());
}

TEST_F(VerifiedRollout, ANewerRevisionDuringTheCanaryStartsOver) {
  settle("old");
  current = "new";
  replaceCanary(false);
  current = "newer";
  const VerifiedRolloutPlan plan = run(kT0 + 5s);
  EXPECT_EQ(plan.record.revision, "newer");
  EXPECT_EQ(plan.record.from, "old");
  EXPECT_EQ(plan.record.since, kT0 + 5s);
  EXPECT_EQ(nodesOf(plan), std::vector<std::string>{"a"});
}

TEST_F(VerifiedRollout, PhasesHaveNamesBothWays) {
  for (RolloutPhase p : {RolloutPhase::None, RolloutPhase::Canary, RolloutPhase::Soak,
                         RolloutPhase::Batch, RolloutPhase::Complete, RolloutPhase::RollingBack,
                         RolloutPhase::RolledBack, RolloutPhase::Held}) {
    EXPECT_EQ(parsePhase(phaseName(p)), p);
  }
  EXPECT_FALSE(parsePhase("Paused"));
}

} // namespace
} // namespace csiop::driverdeployment
