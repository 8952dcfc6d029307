#include <gtest/gtest.h>

#include <csiop/driverdeployment/status.hpp>

namespace csiop::driverdeployment {
namespace {

Observed rolledOut() {
  Observed o;
  o.generation = 4;
  o.nodes = Observed::Workload{true, 3, 3, 3};
  o.hasController = true;
  o.controller = Observed::Workload{true, 2, 2, 2};
  o.registered = 3;
  return o;
}

const api::Condition& cond(const api::DriverDeploymentStatus& s, const char* type) {
  const auto* c = findCondition(*s.conditions, type);
  EXPECT_NE(c, nullptr) << type;
  return *c;
}

TEST(Status, ReadyWhenRolledOutAndRegisteredEverywhere) {
  const auto s = computeStatus(rolledOut(), std::nullopt, "T1");
  EXPECT_EQ(s.observedGeneration, 4);
  EXPECT_EQ(cond(s, "Ready").status, "True");
  EXPECT_EQ(cond(s, "Ready").message, "driver registered on 3/3 nodes, controller ready");
  EXPECT_EQ(cond(s, "Ready").observedGeneration, 4);
  EXPECT_EQ(cond(s, "Progressing").status, "False");
  EXPECT_EQ(cond(s, "Degraded").status, "False");
  EXPECT_EQ(cond(s, "DriverNameConflict").status, "False");
  EXPECT_EQ(s.nodes->desired, 3);
  EXPECT_EQ(s.nodes->registered, 3);
  EXPECT_EQ(s.controller->ready, 2);
}

TEST(Status, NotReadyUntilEveryNodeRegistered) {
  auto o = rolledOut();
  o.registered = 2;
  const auto s = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(s, "Ready").status, "False");
  EXPECT_EQ(cond(s, "Ready").reason, "RegistrationPending");
  EXPECT_EQ(cond(s, "Ready").message, "driver registered on 2/3 nodes");
  EXPECT_EQ(cond(s, "Progressing").status, "False"); // the rollout itself is done
}

TEST(Status, NodesWhereTheDriverIsNotRegisteredAreNamedWithTheirReason) {
  auto o = rolledOut();
  o.registered = 1;
  o.unregistered = {{"b", "NotRegistered", "plugin pod p-b has been Ready since T0, ..."},
                    {"c", "RegistrarRestarting", "the registrar of plugin pod p-c restarted"}};
  o.nodeUpdate = Observed::NodeUpdate{2, 1, {{"a", "VolumesInUse", "pod x uses a volume"}}};
  const auto s = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(s, "Ready").reason, "RegistrationPending");
  EXPECT_EQ(cond(s, "Ready").message,
            "driver registered on 1/3 nodes: node b: NotRegistered: plugin pod p-b has been "
            "Ready since T0, ...; and 1 more");
  EXPECT_EQ(cond(s, "Degraded").status, "True");
  EXPECT_EQ(cond(s, "Degraded").reason, "RegistrationFailing");
  EXPECT_EQ(cond(s, "Degraded").message,
            "node b: NotRegistered: plugin pod p-b has been Ready since T0, ...; node c: "
            "RegistrarRestarting: the registrar of plugin pod p-c restarted");
  ASSERT_TRUE(s.nodes->waiting);
  ASSERT_EQ(s.nodes->waiting->size(), 3u); // the rollout's waits and the registrations, by node
  EXPECT_EQ((*s.nodes->waiting)[0].reason, "VolumesInUse");
  EXPECT_EQ((*s.nodes->waiting)[1].node, "b");
  EXPECT_EQ((*s.nodes->waiting)[2].reason, "RegistrarRestarting");
  // A pod that does not run says so first.
  o.podProblems = {"pod csi/p-c: container node-driver-registrar: CrashLoopBackOff: back-off"};
  EXPECT_EQ(cond(computeStatus(o, std::nullopt, "T1"), "Degraded").reason, "PodsFailing");
}

TEST(Status, TheWaitingNodesStayWithinTheSchemasLimit) {
  auto o = rolledOut();
  o.registered = 0;
  o.nodes = Observed::Workload{true, 30, 30, 30};
  for (int i = 0; i < 30; ++i) {
    o.unregistered.push_back({"n" + std::to_string(100 + i), "NoCSINode", "m"});
  }
  const auto s = computeStatus(o, std::nullopt, "T1");
  ASSERT_TRUE(s.nodes->waiting);
  EXPECT_EQ(s.nodes->waiting->size(), 20u);
  EXPECT_EQ(s.nodes->waiting->front().node, "n100");
}

TEST(Status, ProgressingDuringRollout) {
  auto o = rolledOut();
  o.nodes = Observed::Workload{true, 3, 1, 2};
  const auto s = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(s, "Progressing").status, "True");
  EXPECT_EQ(cond(s, "Ready").reason, "NodePluginRollingOut");
  EXPECT_EQ(cond(s, "Ready").message, "node plugin 2/3 ready, 1/3 updated");
  o.nodes = Observed::Workload{false, 3, 3, 3}; // the controller has not seen the new spec
  EXPECT_EQ(cond(computeStatus(o, std::nullopt, "T1"), "Progressing").status, "True");
}

TEST(Status, NodeOnlyDriverHasNoControllerStatus) {
  auto o = rolledOut();
  o.hasController = false;
  o.controller.reset();
  const auto s = computeStatus(o, std::nullopt, "T1");
  EXPECT_FALSE(s.controller.has_value());
  EXPECT_EQ(cond(s, "Ready").status, "True");
}

TEST(Status, DegradedOnApplyErrors) {
  auto o = rolledOut();
  o.applyErrors = {"DaemonSet csi/x-node: forbidden"};
  const auto s = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(s, "Degraded").status, "True");
  EXPECT_EQ(cond(s, "Degraded").message, "DaemonSet csi/x-node: forbidden");
  EXPECT_EQ(cond(s, "Ready").reason, "ApplyFailed");
}

// A missing CRD or PriorityClass is Degraded, named; Ready keeps saying what the pods say.
TEST(Status, MissingPrerequisitesAreDegradedAndLeaveReadyToThePods) {
  auto o = rolledOut();
  o.missingPrerequisites = {"snapshot.storage.k8s.io/v1/volumesnapshotclasses is not served",
                            "PriorityClass storage does not exist"};
  const auto s = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(s, "Degraded").status, "True");
  EXPECT_EQ(cond(s, "Degraded").reason, "PrerequisitesMissing");
  EXPECT_EQ(cond(s, "Degraded").message,
            "snapshot.storage.k8s.io/v1/volumesnapshotclasses is not served; PriorityClass "
            "storage does not exist");
  EXPECT_EQ(cond(s, "Ready").status, "True");
  o.applyErrors = {"Service csi/m: forbidden"};
  EXPECT_EQ(cond(computeStatus(o, std::nullopt, "T1"), "Degraded").reason, "ApplyFailed");
}

TEST(Status, ConflictDeploysNothing) {
  Observed o;
  o.generation = 1;
  o.conflictWith = "DriverDeployment \"first\"";
  const auto s = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(s, "DriverNameConflict").status, "True");
  EXPECT_EQ(cond(s, "DriverNameConflict").message,
            "the driver name is already used by DriverDeployment \"first\"; nothing is deployed "
            "for this DriverDeployment");
  EXPECT_EQ(cond(s, "Ready").status, "False");
  EXPECT_FALSE(s.nodes.has_value());
}

TEST(Status, TransitionTimeChangesOnlyWithTheStatus) {
  const auto first = computeStatus(rolledOut(), std::nullopt, "T1");
  const auto same = computeStatus(rolledOut(), first, "T2");
  EXPECT_EQ(cond(same, "Ready").lastTransitionTime, "T1");
  // Identical observation, identical status: the caller writes nothing.
  EXPECT_EQ(api::Json(same.conditions->size()), api::Json(first.conditions->size()));
  auto o = rolledOut();
  o.registered = 1;
  const auto changed = computeStatus(o, same, "T3");
  EXPECT_EQ(cond(changed, "Ready").lastTransitionTime, "T3");
  EXPECT_EQ(cond(changed, "Degraded").lastTransitionTime, "T1");
}

TEST(Status, RecordsCSIDriverRecreation) {
  auto o = rolledOut();
  o.csiDriverRecreated = "attachRequired changed from true to false";
  const auto s = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(s, "CSIDriverRecreated").status, "True");
  EXPECT_EQ(cond(s, "CSIDriverRecreated").reason, "ImmutableFieldChanged");
}

TEST(Status, PausedIsSaidAndResumingTurnsItFalse) {
  auto o = rolledOut();
  o.paused = true;
  std::vector<api::Condition> conditions;
  setLifecycleConditions(o, conditions, "T1");
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].type, "Paused");
  EXPECT_EQ(conditions[0].status, "True");
  EXPECT_EQ(conditions[0].reason, "Paused");
  EXPECT_EQ(conditions[0].message,
            "spec.paused is true: nothing is applied, pruned or deleted until it is false");
  o.deleting = true;
  setLifecycleConditions(o, conditions, "T2");
  EXPECT_EQ(conditions[0].reason, "DeletionPaused");
  EXPECT_EQ(conditions[0].lastTransitionTime, "T1"); // still True
  EXPECT_NE(conditions[0].message.find("its objects are kept until spec.paused is false"),
            std::string::npos);

  api::DriverDeploymentStatus previous;
  previous.conditions = conditions;
  const auto s = computeStatus(rolledOut(), previous, "T3");
  EXPECT_EQ(cond(s, "Paused").status, "False");
  EXPECT_EQ(cond(s, "Paused").reason, "Resumed");
  EXPECT_EQ(cond(s, "Paused").lastTransitionTime, "T3");
  EXPECT_EQ(cond(s, "Ready").status, "True");
}

TEST(Status, NeverPausedHasNoPausedCondition) {
  const auto s = computeStatus(rolledOut(), std::nullopt, "T1");
  EXPECT_EQ(findCondition(*s.conditions, "Paused"), nullptr);
  EXPECT_EQ(findCondition(*s.conditions, "DeletionBlocked"), nullptr);
  EXPECT_FALSE(s.unmanaged.has_value());
}

// The API server's warnings of the children's last writes: APIWarnings True with each, then
// False once no write draws one (never there for a DriverDeployment never warned about); Ready
// and Degraded are not touched: the objects were taken.
TEST(Status, TheApiServersWarningsAreSaidUntilTheyGo) {
  EXPECT_EQ(
      findCondition(*computeStatus(rolledOut(), std::nullopt, "T1").conditions, "APIWarnings"),
      nullptr);
  auto o = rolledOut();
  o.apiWarnings = {R"(DaemonSet csi/d-node: unknown field "spec.template.spec.x")",
                   "DaemonSet csi/d-node: deprecated"};
  const auto warned = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(warned, "APIWarnings").status, "True");
  EXPECT_EQ(cond(warned, "APIWarnings").reason, "Warned");
  EXPECT_EQ(cond(warned, "APIWarnings").message,
            R"(DaemonSet csi/d-node: unknown field "spec.template.spec.x"; DaemonSet csi/d-node: )"
            "deprecated");
  EXPECT_EQ(cond(warned, "Ready").status, "True");
  EXPECT_EQ(cond(warned, "Degraded").status, "False");
  const auto gone = computeStatus(rolledOut(), warned, "T2");
  EXPECT_EQ(cond(gone, "APIWarnings").status, "False");
  EXPECT_EQ(cond(gone, "APIWarnings").reason, "NoWarnings");
}

TEST(Status, ABlockedDeletionSaysWhatWaitsAndHowItEnds) {
  auto o = rolledOut();
  o.deleting = true;
  o.deletionBlocked = "1 PersistentVolume (pv-a)";
  const auto s = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(s, "DeletionBlocked").status, "True");
  EXPECT_EQ(cond(s, "DeletionBlocked").reason, "VolumesInUse");
  EXPECT_EQ(cond(s, "DeletionBlocked").message,
            "the deletion waits: 1 PersistentVolume (pv-a) still use the driver; it completes by "
            "itself when they are gone (or annotate csiop.dev/force-delete=true to delete anyway)");
  EXPECT_EQ(cond(s, "Ready").status, "True"); // the driver keeps serving meanwhile
}

TEST(Status, UnmanagedChildrenAreListedAndABadAnnotationIsDegraded) {
  auto o = rolledOut();
  api::UnmanagedObject u;
  u.kind = "DaemonSet";
  u.namespace_ = "csi-x";
  u.name = "x-node";
  o.unmanaged = {u};
  auto s = computeStatus(o, std::nullopt, "T1");
  ASSERT_TRUE(s.unmanaged.has_value());
  ASSERT_EQ(s.unmanaged->size(), 1u);
  EXPECT_EQ((*s.unmanaged)[0].name, "x-node");
  EXPECT_EQ(cond(s, "Degraded").status, "False"); // asked for: not a fault

  o.annotationProblems = {"annotation csiop.dev/unmanaged on DaemonSet csi-x/x-node is \"yes\""};
  s = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(s, "Degraded").status, "True");
  EXPECT_EQ(cond(s, "Degraded").reason, "InvalidAnnotation");
  EXPECT_EQ(cond(s, "Degraded").message, o.annotationProblems[0]);
  o.applyErrors = {"DaemonSet csi-x/x-node: forbidden"};
  EXPECT_EQ(cond(computeStatus(o, std::nullopt, "T1"), "Degraded").reason, "ApplyFailed");
}

TEST(Status, AMountSafeRolloutWaitingOnANodeIsProgressingButReady) {
  auto o = rolledOut();
  o.nodes = Observed::Workload{true, 3, 1, 3}; // 1 of 3 updated, all ready
  o.nodeUpdate =
      Observed::NodeUpdate{1,
                           2,
                           {{"n1", "VolumesInUse", "1 pod uses volumes of the driver (apps/web-0)"},
                            {"n2", "MaxUnavailable", "ready to update"}}};
  const auto s = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(s, "Ready").status, "True") << cond(s, "Ready").message;
  EXPECT_EQ(cond(s, "Progressing").status, "True");
  EXPECT_EQ(cond(s, "Progressing").reason, "NodePluginUpdateWaiting");
  EXPECT_EQ(cond(s, "Progressing").message,
            "node plugin updated on 1/3 nodes; waiting: n1 (VolumesInUse: 1 pod uses volumes of "
            "the driver (apps/web-0)); n2 (MaxUnavailable: ready to update)");
  EXPECT_EQ(s.nodes->updated, 1);
  ASSERT_TRUE(s.nodes->waiting.has_value());
  ASSERT_EQ(s.nodes->waiting->size(), 2u);
  EXPECT_EQ((*s.nodes->waiting)[0].node, "n1");

  // Done: nothing outdated, no waiting list.
  o.nodes = Observed::Workload{true, 3, 3, 3};
  o.nodeUpdate = Observed::NodeUpdate{3, 0, {}};
  const auto done = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(cond(done, "Progressing").status, "False");
  EXPECT_FALSE(done.nodes->waiting.has_value());
  // A plugin pod not ready still makes Ready false, as with any strategy.
  o.nodes = Observed::Workload{true, 3, 3, 2};
  EXPECT_EQ(cond(computeStatus(o, std::nullopt, "T1"), "Ready").status, "False");
}

TEST(Status, AtMostTwentyWaitingNodesAreListed) {
  auto o = rolledOut();
  o.nodeUpdate = Observed::NodeUpdate{0, 25, {}};
  for (int i = 0; i < 25; ++i) {
    o.nodeUpdate->waiting.push_back({"n" + std::to_string(i), "VolumesInUse", "x"});
  }
  const auto s = computeStatus(o, std::nullopt, "T1");
  EXPECT_EQ(s.nodes->waiting->size(), 20u);
  EXPECT_NE(cond(s, "Progressing").message.find("; and 22 more"), std::string::npos);
}

} // namespace
} // namespace csiop::driverdeployment
