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
  // One the kubelet will never pull fails at once.
  const PrePullResult refused = readPrePull(withStatuses("Pending", {startError, creating, never}));
  EXPECT_EQ(refused.state, S::Failed);
  EXPECT_EQ(refused.message, "image registrar:v2: ErrImageNeverPull: absent");
}

} // namespace
} // namespace csiop::driverdeployment
