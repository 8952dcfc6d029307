#include <gtest/gtest.h>

#include <csiop/driverdeployment/pod_creation.hpp>

namespace csiop::driverdeployment {
namespace {

using Json = nlohmann::ordered_json;

Json daemonSet(int desired, int current) {
  return {{"kind", "DaemonSet"},
          {"metadata", {{"namespace", "csi"}, {"name", "x-node"}, {"uid", "ds-1"}}},
          {"status", {{"desiredNumberScheduled", desired}, {"currentNumberScheduled", current}}}};
}

Json failedCreate(const std::string& message, const std::string& last,
                  const std::string& uid = "ds-1") {
  return {{"kind", "Event"},
          {"metadata", {{"namespace", "csi"}, {"name", "x-node.1"}}},
          {"involvedObject",
           {{"kind", "DaemonSet"}, {"namespace", "csi"}, {"name", "x-node"}, {"uid", uid}}},
          {"message", message},
          {"lastTimestamp", last}};
}

TEST(PodCreation, AWorkloadShortOfPodsSaysItsLatestRefusalWithoutThePodsName) {
  const Json older = failedCreate("Error creating: pods \"x-node-aaaaa\" is forbidden: old reason",
                                  "2026-11-29T10:00:00Z");
  const Json newer = failedCreate(
      "Error creating: pods \"x-node-7f2kq\" is forbidden: exceeded quota: pods, requested: "
      "pods=1, used: pods=0, limited: pods=0",
      "2026-11-29T10:05:00Z");
  const auto line = podCreationFailure(daemonSet(2, 0), {&older, &newer});
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "DaemonSet csi/x-node cannot create its pods: Error creating: pods is "
                   "forbidden: exceeded quota: pods, requested: pods=1, used: pods=0, limited: "
                   "pods=0");
  // The next try names another pod: the same line.
  const Json again = failedCreate(
      "Error creating: pods \"x-node-zz9zz\" is forbidden: exceeded quota: pods, requested: "
      "pods=1, used: pods=0, limited: pods=0",
      "2026-11-29T10:06:00Z");
  EXPECT_EQ(podCreationFailure(daemonSet(2, 0), {&older, &again}), line);
  // An Event that aggregates others: the same line.
  const Json combined = failedCreate(
      "(combined from similar events): Error creating: pods \"x-node-q1w2e\" is forbidden: "
      "exceeded quota: pods, requested: pods=1, used: pods=0, limited: pods=0",
      "2026-11-29T10:07:00Z");
  EXPECT_EQ(podCreationFailure(daemonSet(2, 0), {&older, &combined}), line);
}

TEST(PodCreation, AWorkloadWithEveryPodOrWithoutARefusalSaysNothing) {
  const Json event = failedCreate("Error creating: quota", "2026-11-29T10:00:00Z");
  EXPECT_FALSE(podCreationFailure(daemonSet(2, 2), {&event})) << "the refusal no longer holds";
  EXPECT_FALSE(podCreationFailure(daemonSet(2, 1), {})) << "short, but nothing says why";
  const Json earlier = failedCreate("Error creating: quota", "2026-11-29T10:00:00Z", "ds-0");
  EXPECT_FALSE(podCreationFailure(daemonSet(2, 0), {&earlier}))
      << "an Event of an earlier DaemonSet of the same name";
}

TEST(PodCreation, AStatefulSetCountsItsReplicasAndADeploymentItsReplicaFailure) {
  Json statefulSet = {{"kind", "StatefulSet"},
                      {"metadata", {{"namespace", "csi"}, {"name", "x-controller"}}},
                      {"spec", {{"replicas", 1}}},
                      {"status", {{"replicas", 0}}}};
  const Json event = failedCreate(
      "create Pod x-controller-0 in StatefulSet x-controller failed error: pods "
      "\"x-controller-0\" is forbidden: error looking up service account csi/x-controller: "
      "serviceaccount \"x-controller\" not found",
      "2026-11-29T10:00:00Z", "");
  EXPECT_EQ(podCreationFailure(statefulSet, {&event}),
            "StatefulSet csi/x-controller cannot create its pods: create Pod x-controller-0 in "
            "StatefulSet x-controller failed error: pods is forbidden: error looking up service "
            "account csi/x-controller: serviceaccount \"x-controller\" not found");
  statefulSet["status"]["replicas"] = 1;
  EXPECT_FALSE(podCreationFailure(statefulSet, {&event}));

  Json deployment = {{"kind", "Deployment"},
                     {"metadata", {{"namespace", "csi"}, {"name", "x-controller"}}},
                     {"spec", {{"replicas", 2}}},
                     {"status",
                      {{"conditions",
                        {{{"type", "Available"}, {"status", "False"}},
                         {{"type", "ReplicaFailure"},
                          {"status", "True"},
                          {"reason", "FailedCreate"},
                          {"message", "pods \"x-controller-5d9c-abcde\" is forbidden: violates "
                                      "PodSecurity \"restricted:latest\": privileged"}}}}}}};
  EXPECT_EQ(podCreationFailure(deployment, {}),
            "Deployment csi/x-controller cannot create its pods: pods is forbidden: violates "
            "PodSecurity \"restricted:latest\": privileged");
  deployment["status"]["conditions"][1]["status"] = "False";
  EXPECT_FALSE(podCreationFailure(deployment, {}));
}

TEST(PodCreation, TheKeysOfEventsAndWorkloadsMeet) {
  const Json event = failedCreate("m", "2026-11-29T10:00:00Z");
  EXPECT_EQ(involvedObjectKey(event), workloadKey("DaemonSet", "csi", "x-node"));
  EXPECT_EQ(involvedObjectKey(event), "DaemonSet/csi/x-node");
}

} // namespace
} // namespace csiop::driverdeployment
