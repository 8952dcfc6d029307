#include <csiop/api/rfc3339.hpp>
#include <csiop/driverdeployment/pre_pull.hpp>

#include <gtest/gtest.h>

namespace csiop::driverdeployment {
namespace {

using api::Json;

Json podTemplate() {
  Json t;
  t["spec"]["initContainers"] = {{{"name", "init"}, {"image", "busybox:1"}}};
  t["spec"]["containers"] = {
      {{"name", "driver"}, {"image", "driver:v2"}, {"imagePullPolicy", "Always"}},
      {{"name", "registrar"}, {"image", "registrar:v2"}, {"imagePullPolicy", "Never"}},
      {{"name", "again"}, {"image", "driver:v2"}}};
  t["spec"]["imagePullSecrets"] = {{{"name", "regcred"}}};
  t["spec"]["nodeSelector"] = {{"kubernetes.io/os", "linux"}, {"pool", "a"}};
  return t;
}

PrePullTarget target() {
  return {"demo", "uid-1", "csi-demo", "node-1", "r2", podTemplate(), 120};
}

TEST(PrePull, EachImageOnceWithAPullPolicyThatNeverPullsTwice) {
  EXPECT_EQ(prePullImages(podTemplate()), (std::vector<PrePullImage>{{"busybox:1", "IfNotPresent"},
                                                                     {"driver:v2", "IfNotPresent"},
                                                                     {"registrar:v2", "Never"}}));
}

TEST(PrePull, ThePodPullsOnTheNodeAndRunsNothing) {
  const Json pod = prePullPod(target());
  EXPECT_EQ(pod["metadata"]["name"], prePullName("demo", "node-1", "r2"));
  EXPECT_EQ(pod["metadata"]["name"].get<std::string>().size(), 4 + 6 + 10u);
  EXPECT_EQ(pod["metadata"]["labels"]["csiop.dev/pre-pull"], "demo");
  EXPECT_EQ(pod["metadata"]["annotations"]["csiop.dev/pre-pull-node"], "node-1");
  EXPECT_EQ(pod["metadata"]["annotations"]["csiop.dev/pre-pull-revision"], "r2");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  const Json& spec = pod["spec"];
  ASSERT_EQ(spec["containers"].size(), 3u);
  for (const Json& c : spec["containers"]) {
    EXPECT_EQ(c["command"], Json({"/csi-operator-pre-pull-only"}));
    EXPECT_EQ(c["securityContext"]["capabilities"]["drop"], Json({"ALL"}));
    EXPECT_TRUE(c["securityContext"]["runAsNonRoot"].get<bool>());
  }
  EXPECT_EQ(spec["restartPolicy"], "Never");
  EXPECT_EQ(spec["activeDeadlineSeconds"], 120);
  EXPECT_EQ(spec["imagePullSecrets"], Json({{{"name", "regcred"}}}));
  EXPECT_EQ(spec["nodeSelector"], Json({{"kubernetes.io/os", "linux"}}));
  EXPECT_EQ(spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchFields"][0]["values"],
            Json({"node-1"}));
  EXPECT_EQ(spec["tolerations"], Json({{{"operator", "Exists"}}}));
  EXPECT_FALSE(spec["automountServiceAccountToken"].get<bool>());
  // Another node or revision is another pod.
  EXPECT_NE(prePullName("demo", "node-2", "r2"), prePullName("demo", "node-1", "r2"));
  EXPECT_NE(prePullName("demo", "node-1", "r3"), prePullName("demo", "node-1", "r2"));
}

Json withStatuses(const std::string& phase, const std::vector<Json>& states) {
  Json pod = prePullPod(target());
  Json statuses = Json::array();
  for (std::size_t i = 0; i < states.size(); ++i) {
    statuses.push_back({{"name", "image-" + std::to_string(i)},
                        {"image", pod["spec"]["containers"][i]["image"]},
                        {"state", states[i]}});
  }
  pod["status"] = {{"phase", phase}, {"containerStatuses", statuses}};
  return pod;
}

TEST(PrePull, ReadsPulledFailedAndPending) {
  const Json startError = {{"terminated", {{"reason", "StartError"}, {"exitCode", 128}}}};
  const Json creating = {{"waiting", {{"reason", "ContainerCreating"}}}};
  const Json backOff = {{"waiting", {{"reason", "ImagePullBackOff"}, {"message", "not found"}}}};
  const Json never = {{"waiting", {{"reason", "ErrImageNeverPull"}, {"message", "absent"}}}};
  using S = PrePullResult::State;
  EXPECT_EQ(readPrePull(prePullPod(target())).state, S::Pending);
  EXPECT_EQ(readPrePull(withStatuses("Failed", {startError, startError, startError})).state,
            S::Pulled);
  // kwok and some runtimes report the containers running.
  EXPECT_EQ(readPrePull(withStatuses("Running", {{{"running", Json::object()}},
                                                 {{"running", Json::object()}},
                                                 {{"running", Json::object()}}}))
                .state,
            S::Pulled);
  EXPECT_EQ(readPrePull(withStatuses("Pending", {startError, creating, startError})).state,
            S::Pending);
  // A pull the kubelet retries is pending, with its error, until the pod's deadline.
  const PrePullResult retrying =
      readPrePull(withStatuses("Pending", {startError, backOff, startError}));
  EXPECT_EQ(retrying.state, S::Pending);
  EXPECT_EQ(retrying.message, "image driver:v2: ImagePullBackOff: not found");
  Json ended = withStatuses("Failed", {startError, backOff, startError});
  ended["status"]["message"] = "Pod was active on the node longer than the specified deadline";
  EXPECT_EQ(readPrePull(ended).state, S::Failed);
  EXPECT_EQ(readPrePull(ended).message, "image driver:v2: ImagePullBackOff: not found");
  // A pod whose deadline ended a pull: the kubelet marks the waiting container terminated,
  // though it never ran; its image is not on the node.
  const Json unknown = {{"terminated",
                         {{"reason", "ContainerStatusUnknown"},
                          {"exitCode", 137},
                          {"message", "The container could not be located when the pod was "
                                      "terminated"}}}};
  Json deadline = withStatuses("Failed", {startError, unknown, startError});
  deadline["status"]["message"] = "Pod was active on the node longer than the specified deadline";
  deadline["metadata"]["creationTimestamp"] = "2026-11-29T04:38:10Z";
  EXPECT_EQ(readPrePull(deadline).state, S::Failed);
  EXPECT_EQ(readPrePull(deadline).started, api::parseRfc3339OrEpoch("2026-11-29T04:38:10Z"));
  EXPECT_EQ(readPrePull(deadline).message,
            "the images were not all pulled: Pod was active on the node longer than the "
            "specified deadline");
  // One the kubelet will never pull fails at once.
  const PrePullResult refused = readPrePull(withStatuses("Pending", {startError, creating, never}));
  EXPECT_EQ(refused.state, S::Failed);
  EXPECT_EQ(refused.message, "image registrar:v2: ErrImageNeverPull: absent");
}

TEST(PrePull, WhenVolumesUnusedReplacesANodeOnlyOnceItsImagesArePulled) {
  const std::vector<Replacement> planned = {{"plugin-a", "uid-a", "a", "why"},
                                            {"plugin-b", "uid-b", "b", "why"},
                                            {"plugin-c", "uid-c", "c", "why"},
                                            {"plugin-d", "uid-d", "d", "why"}};
  PrePulls seen;
  seen.results["a"] = {PrePullResult::State::Pulled, ""};
  seen.results["b"] = {PrePullResult::State::Pending, "image driver:v2: ImagePullBackOff: slow"};
  seen.results["c"] = {PrePullResult::State::Failed, "image driver:v2: ErrImageNeverPull: absent"};
  const PrePullGate gate = gateOnPrePulls(planned, seen);
  ASSERT_EQ(gate.now.size(), 1U);
  EXPECT_EQ(gate.now[0].node, "a");
  EXPECT_EQ(gate.pull, (std::set<std::string>{"b", "c", "d"}));
  ASSERT_EQ(gate.waiting.size(), 3U);
  EXPECT_EQ(gate.waiting[0].reason, "PullingImages");
  EXPECT_EQ(gate.waiting[0].message, "pulling the new images on the node before its plugin is "
                                     "replaced: image driver:v2: ImagePullBackOff: slow");
  EXPECT_EQ(gate.waiting[1].reason, "ImagePullFailed");
  EXPECT_EQ(gate.waiting[1].message, "the new images are not on the node, so its plugin stays: "
                                     "image driver:v2: ErrImageNeverPull: absent");
  EXPECT_EQ(gate.waiting[2].node, "d"); // no pre-pull yet: one is made
  EXPECT_EQ(gate.waiting[2].message,
            "pulling the new images on the node before its plugin is replaced");
}

} // namespace
} // namespace csiop::driverdeployment
