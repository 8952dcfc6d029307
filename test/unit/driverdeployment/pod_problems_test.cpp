#include <gtest/gtest.h>

#include <csiop/driverdeployment/pod_problems.hpp>
#include <csiop/driverdeployment/status.hpp>

#include "cached_pods.hpp"

namespace csiop::driverdeployment {
namespace {

using Json = nlohmann::ordered_json;

Json pod(const std::string& name, Json status) {
  return Json{{"metadata", {{"namespace", "csi"}, {"name", name}}}, {"status", std::move(status)}};
}

// podProblems of these pods, as the pod cache keeps them.
std::vector<std::string> problemsOf(const std::vector<Json>& pods) {
  const std::vector<CachedPod> cached = test::decoded(pods);
  return podProblems(test::podPointers(cached));
}

Json waiting(const std::string& container, const std::string& reason, const std::string& message) {
  return Json{{"name", container},
              {"ready", false},
              {"state", {{"waiting", {{"reason", reason}, {"message", message}}}}}};
}

TEST(PodProblems, NamesContainersStuckWaiting) {
  const Json p = pod(
      "x-node-abc",
      {{"containerStatuses", Json::array({waiting("csi-driver", "ImagePullBackOff",
                                                  "Back-off pulling image \"example.com/nope:1\""),
                                          Json{{"name", "node-driver-registrar"},
                                               {"state", {{"running", Json::object()}}}}})}});
  EXPECT_EQ(problemsOf({p}),
            std::vector<std::string>{"pod csi/x-node-abc: container csi-driver: ImagePullBackOff: "
                                     "Back-off pulling image \"example.com/nope:1\""});
}

TEST(PodProblems, StartingContainersAreNoProblem) {
  const Json p =
      pod("x",
          {{"containerStatuses", Json::array({waiting("csi-driver", "ContainerCreating", ""),
                                              waiting("liveness-probe", "PodInitializing", "")})}});
  EXPECT_TRUE(problemsOf({p}).empty());
}

TEST(PodProblems, InitContainersCrashLoopsAndUnschedulablePods) {
  const Json crash =
      pod("a", {{"initContainerStatuses", Json::array({waiting("init", "CrashLoopBackOff", "")})}});
  const Json unschedulable =
      pod("b", {{"conditions", Json::array({{{"type", "PodScheduled"},
                                             {"status", "False"},
                                             {"reason", "Unschedulable"},
                                             {"message", "0/3 nodes are available"}}})}});
  EXPECT_EQ(problemsOf({crash, unschedulable}),
            (std::vector<std::string>{"pod csi/a: container init: CrashLoopBackOff",
                                      "pod csi/b: unschedulable: 0/3 nodes are available"}));
}

TEST(PodProblems, PodsBeingDeletedAndMalformedPodsAreSkipped) {
  Json deleting =
      pod("old", {{"containerStatuses", Json::array({waiting("c", "ErrImagePull", "gone")})}});
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  const Json noStatus = Json{{"metadata", {{"name", "n"}}}, {"status", "weird"}};
  const Json notObject = Json::array();
  const Json badStates =
      pod("s", {{"containerStatuses",
                 Json::array({1, Json{{"state", "x"}}, Json{{"state", {{"waiting", "x"}}}}})}});
  EXPECT_TRUE(problemsOf({deleting, noStatus, notObject, badStates}).empty());
  EXPECT_TRUE(podProblems({nullptr}).empty());
}

TEST(PodProblems, LongMessagesAreClipped) {
  const Json p =
      pod("x", {{"containerStatuses",
                 Json::array({waiting("c", "RunContainerError", std::string(1000, 'm'))})}});
  const auto problems = problemsOf({p});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_LT(problems[0].size(), 320u);
  EXPECT_TRUE(problems[0].ends_with("..."));
}

TEST(PodProblems, SummaryKeepsTheFirstFew) {
  EXPECT_EQ(summarizeProblems({}), "");
  EXPECT_EQ(summarizeProblems({"a", "b"}), "a; b");
  EXPECT_EQ(summarizeProblems({"a", "b", "c", "d", "e"}), "a; b; c; and 2 more");
}

TEST(PodProblems, StatusSaysWhyTheRolloutIsStuck) {
  Observed o;
  o.generation = 2;
  o.nodes = Observed::Workload{true, 1, 1, 0};
  o.registered = 0;
  o.podProblems = {"pod csi/x-node-abc: container csi-driver: ErrImagePull: not found"};
  const auto s = computeStatus(o, std::nullopt, "T1");
  const auto* ready = findCondition(*s.conditions, "Ready");
  const auto* degraded = findCondition(*s.conditions, "Degraded");
  ASSERT_NE(ready, nullptr);
  ASSERT_NE(degraded, nullptr);
  EXPECT_EQ(ready->status, "False");
  EXPECT_EQ(ready->reason, "NodePluginRollingOut");
  EXPECT_EQ(ready->message, "node plugin 0/1 ready, 1/1 updated; driver registered on 0/1 nodes: "
                            "pod csi/x-node-abc: container csi-driver: ErrImagePull: not found");
  EXPECT_EQ(degraded->status, "True");
  EXPECT_EQ(degraded->reason, "PodsFailing");
  o.podProblems.clear();
  EXPECT_EQ(findCondition(*computeStatus(o, std::nullopt, "T1").conditions, "Degraded")->status,
            "False");
}

TEST(PodProblems, TheCachedPodTellsTheSameStory) {
  Json full = pod(
      "x-node-abc",
      {{"phase", "Pending"},
       {"startTime", "2026-11-25T10:00:00Z"},
       {"conditions", Json::array({{{"type", "PodScheduled"},
                                    {"status", "False"},
                                    {"reason", "Unschedulable"},
                                    {"message", "0/3 nodes are available"},
                                    {"lastProbeTime", nullptr},
                                    {"lastTransitionTime", "2026-11-25T10:00:00Z"}}})},
       {"initContainerStatuses", Json::array({waiting("init", "CrashLoopBackOff", "back-off 5m")})},
       {"containerStatuses",
        Json::array({waiting("csi-driver", "ImagePullBackOff", "Back-off pulling"),
                     Json{{"name", "registrar"},
                          {"ready", true},
                          {"image", "registry.k8s.io/x:1"},
                          {"imageID", "sha256:abc"},
                          {"state", {{"running", {{"startedAt", "t"}}}}}}})}});
  full["metadata"]["uid"] = "u1";
  full["metadata"]["labels"] = {{"controller-revision-hash", "h1"},
                                {"csiop.dev/driverdeployment", "x"},
                                {"app.kubernetes.io/name", "x"},
                                {"pod-template-generation", "1"}};
  full["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "apps/v1"},
                                                      {"kind", "DaemonSet"},
                                                      {"name", "x-node"},
                                                      {"uid", "ds"},
                                                      {"controller", true}},
                                                     {{"apiVersion", "v1"},
                                                      {"kind", "ConfigMap"},
                                                      {"name", "not-the-controller"},
                                                      {"uid", "cm"}}});
  full["metadata"]["managedFields"] = Json::array({{{"manager", "kubelet"}}});
  full["spec"] = {{"nodeName", "n1"}, {"containers", Json::array({{{"name", "csi-driver"}}})}};
  const CachedPod cached = decodePod(full);
  EXPECT_EQ(podProblems({&cached}),
            (std::vector<std::string>{
                "pod csi/x-node-abc: unschedulable: 0/3 nodes are available",
                "pod csi/x-node-abc: container init: CrashLoopBackOff: back-off 5m",
                "pod csi/x-node-abc: container csi-driver: ImagePullBackOff: Back-off pulling"}));
  EXPECT_EQ(cached.nodeName, "n1");
  EXPECT_EQ(cached.controllerUid, "ds") << "the controller's, not the ConfigMap's";
  EXPECT_TRUE(cached.drainLeaves);
  EXPECT_EQ(cached.owner, "x");
  EXPECT_EQ(cached.revisionHash, "h1");
  EXPECT_EQ(cached.phase, "Pending");
  EXPECT_FALSE(cached.ready);
  // Only the containers that wait are kept, with why.
  ASSERT_EQ(cached.waiting.size(), 2u);
  EXPECT_EQ(cached.waiting[0],
            (CachedPod::WaitingContainer{"init", "CrashLoopBackOff", "back-off 5m", true}));
  EXPECT_EQ(cached.waiting[1].name, "csi-driver");
  EXPECT_TRUE(cached.volumes.empty());
}

TEST(PodProblems, AHealthyPodIsReadyWithNothingWaiting) {
  const Json full =
      pod("x-node-abc",
          {{"phase", "Running"},
           {"conditions",
            Json::array({{{"type", "PodScheduled"}, {"status", "True"}},
                         {{"type", "Initialized"}, {"status", "True"}},
                         {{"type", "ContainersReady"}, {"status", "True"}},
                         {{"type", "Ready"}, {"status", "True"}, {"lastTransitionTime", "t"}}})},
           {"containerStatuses", Json::array({Json{{"name", "csi-driver"},
                                                   {"ready", true},
                                                   {"state", {{"running", Json::object()}}}}})}});
  const CachedPod cached = decodePod(full);
  EXPECT_TRUE(cached.ready);
  EXPECT_EQ(cached.phase, "Running");
  EXPECT_TRUE(cached.waiting.empty());
  EXPECT_FALSE(cached.unschedulable);
  EXPECT_FALSE(cached.deleting);
  EXPECT_TRUE(podProblems({&cached}).empty());
}

} // namespace
} // namespace csiop::driverdeployment
