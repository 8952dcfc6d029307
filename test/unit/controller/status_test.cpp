#include <gtest/gtest.h>

#include <csiop/controller/status.hpp>

namespace csiop::controller {
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

} // namespace
} // namespace csiop::controller
