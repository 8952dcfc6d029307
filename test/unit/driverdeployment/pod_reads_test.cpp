// When a DriverDeployment's decisions read its workloads' pods (pod_reads.hpp).
#include <csiop/driverdeployment/pod_reads.hpp>

#include <gtest/gtest.h>

namespace csiop::driverdeployment {
namespace {

using namespace std::chrono_literals;

const api::WallTime kStart = api::parseRfc3339OrEpoch("2026-11-30T10:00:00Z");

WorkloadPods nodePlugin(std::int32_t desired, std::int32_t existing, std::int32_t updated,
                        std::int32_t ready) {
  return {desired, existing, updated, ready, true, 1, true, false};
}

WorkloadPods controller(std::int32_t replicas, std::int32_t existing, std::int32_t ready) {
  return {replicas, existing, replicas, ready, true, 1, false, false};
}

PodReadInput settled(std::int32_t nodes) {
  PodReadInput in;
  in.workloads = {nodePlugin(nodes, nodes, nodes, nodes), controller(2, 2, 2)};
  in.registered = nodes;
  return in;
}

TEST(PodReadDecision, ASettledDriverReadsNoPod) {
  PodReadClock clock;
  const PodRead read = podReadDecision(settled(50), clock, kStart);
  EXPECT_FALSE(read.read);
  EXPECT_FALSE(read.recheckAt);
}

TEST(PodReadDecision, AStartingOrRollingDriverReadsNoPodWhileItsCountsMove) {
  PodReadClock clock;
  PodReadInput in = settled(50);
  for (std::int32_t ready = 0; ready < 50; ready += 10) {
    in.workloads[0] = nodePlugin(50, 50, 50, ready);
    const PodRead read = podReadDecision(in, clock, kStart + ready * 1s);
    EXPECT_FALSE(read.read) << ready;
    EXPECT_EQ(read.recheckAt, kStart + ready * 1s + kPodReadAfter) << "looked at again";
  }
}

TEST(PodReadDecision, APodNotReadyWhileNothingMovesIsExplainedByThePods) {
  PodReadClock clock;
  PodReadInput in = settled(3);
  in.workloads[0] = nodePlugin(3, 3, 3, 2);
  const PodRead first = podReadDecision(in, clock, kStart);
  EXPECT_FALSE(first.read);
  ASSERT_TRUE(first.recheckAt);
  // A pass queued by something else meanwhile (its requeue may replace this one's): the same
  // deadline again.
  const PodRead meanwhile = podReadDecision(in, clock, kStart + 5s);
  EXPECT_FALSE(meanwhile.read);
  EXPECT_EQ(meanwhile.recheckAt, first.recheckAt);
  const PodRead due = podReadDecision(in, clock, *first.recheckAt);
  EXPECT_TRUE(due.read);
  EXPECT_TRUE(due.stall) << "its own pods, listed";
  EXPECT_EQ(due.why, "1 of 3 pods not ready and no change for 15 s");
  // The pod gets ready: nothing to explain.
  in.workloads[0] = nodePlugin(3, 3, 3, 3);
  EXPECT_FALSE(podReadDecision(in, clock, kStart + 60s).read);
}

TEST(PodReadDecision, AControllerReplicaNotReadyIsAStallToo) {
  PodReadClock clock;
  PodReadInput in = settled(3);
  in.workloads[1] = controller(2, 2, 1);
  EXPECT_FALSE(podReadDecision(in, clock, kStart).read);
  EXPECT_TRUE(podReadDecision(in, clock, kStart + kPodReadAfter).read);
}

TEST(PodReadDecision, AReadyNodePluginWhoseNodeDoesNotRegisterIsExplainedByThePods) {
  PodReadClock clock;
  PodReadInput in = settled(3);
  in.registered = 1;
  EXPECT_FALSE(podReadDecision(in, clock, kStart).read);
  const PodRead due = podReadDecision(in, clock, kStart + kPodReadAfter);
  EXPECT_TRUE(due.read);
  EXPECT_EQ(due.why, "2 of 3 nodes with a ready node plugin have not registered the driver and "
                     "no change for 15 s");
}

TEST(PodReadDecision, PodsTheWorkloadCouldNotCreateAreNoPodsToRead) {
  // A DaemonSet short of pods it could not create says so in its FailedCreate Events.
  PodReadClock clock;
  PodReadInput in = settled(3);
  in.workloads[0] = nodePlugin(3, 1, 1, 1);
  in.registered = 1;
  EXPECT_FALSE(podReadDecision(in, clock, kStart).read);
  EXPECT_FALSE(podReadDecision(in, clock, kStart + 10min).read);
}

TEST(PodReadDecision, TheOperatorsOwnRolloutReadsThePodsAtOnceWhileItsWorkloadsMove) {
  PodReadClock clock;
  PodReadInput in = settled(3);
  in.operatorRollout = "a WhenVolumesUnused rollout";
  in.workloads[0].operatorRolled = true;
  EXPECT_FALSE(podReadDecision(in, clock, kStart).read) << "settled";
  in.workloads[0] = nodePlugin(3, 3, 1, 3); // a new template: 2 pods to replace
  in.workloads[0].operatorRolled = true;
  const PodRead rolling = podReadDecision(in, clock, kStart + 1s);
  EXPECT_TRUE(rolling.read);
  EXPECT_FALSE(rolling.stall) << "watched: the rollout goes on as they change";
  EXPECT_EQ(rolling.why, "a WhenVolumesUnused rollout: a workload not settled");
  in.workloads[0].updated = 3;
  in.workloads[0].observedCurrent = false; // the DaemonSet controller has not seen the apply
  EXPECT_TRUE(podReadDecision(in, clock, kStart + 2s).read);
  // The controller it does not roll: a stall as any other.
  in = settled(3);
  in.operatorRollout = "a WhenVolumesUnused rollout";
  in.workloads[0].operatorRolled = true;
  in.workloads[1] = controller(2, 1, 1);
  EXPECT_FALSE(podReadDecision(in, clock, kStart + 3s).read);
}

TEST(PodReadDecision, AVerifiedRolloutUnderWayReadsThePodsThoughNothingMoves) {
  PodReadClock clock;
  PodReadInput in = settled(3);
  in.operatorRollout = "a verified rollout";
  in.rolloutUnderway = true; // soaking: the counts stay, the deadline comes
  const PodRead read = podReadDecision(in, clock, kStart);
  EXPECT_TRUE(read.read);
  EXPECT_EQ(read.why, "a verified rollout under way");
  in.rolloutUnderway = false;
  EXPECT_FALSE(podReadDecision(in, clock, kStart + 1s).read);
}

TEST(PodReadDecision, EveryPassReadsThePodsForASinglePodNodePlugin) {
  PodReadClock clock;
  PodReadInput in = settled(1);
  in.everyPass = "the single-pod node plugin";
  const PodRead read = podReadDecision(in, clock, kStart);
  EXPECT_TRUE(read.read);
  EXPECT_EQ(read.why, "the single-pod node plugin");
}

} // namespace
} // namespace csiop::driverdeployment
