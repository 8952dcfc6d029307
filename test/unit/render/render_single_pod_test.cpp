// spec.controller.placement SinglePod: one pod in the cluster runs the driver, the registrar and
// the controller sidecars (as upstream deploys the kubernetes-csi hostpath driver).
#include <gtest/gtest.h>

#include <csiop/render/render.hpp>

#include "../common/render_test_util.hpp"

namespace csiop {
namespace {

using api::Json;
using testutil::container;
using testutil::containerNames;
using testutil::dd;
using testutil::find;
using testutil::hasArg;
using testutil::load;
using testutil::ofKind;

std::vector<Json> renderSinglePod(const std::string& controllerExtra = "",
                                  const std::string& specExtra = "") {
  return testutil::renderPlaced("SinglePod", controllerExtra, specExtra);
}

TEST(RenderSinglePod, TheNodePluginIsAStatefulSetOfOnePodWithTheSidecars) {
  const auto objs = renderSinglePod("    resizer: {enabled: true}\n");
  EXPECT_TRUE(ofKind(objs, "DaemonSet").empty());
  EXPECT_TRUE(ofKind(objs, "Deployment").empty());
  const auto sets = ofKind(objs, "StatefulSet");
  ASSERT_EQ(sets.size(), 1u);
  const Json& sts = *sets[0];
  EXPECT_EQ(sts["metadata"]["name"], "demo-node");
  EXPECT_EQ(sts["metadata"]["namespace"], "csi-demo");
  EXPECT_TRUE(render::isNodePlugin(sts));
  EXPECT_EQ(sts["spec"]["replicas"], 1);
  EXPECT_EQ(sts["spec"]["serviceName"], "demo-node");
  // The server's default (RollingUpdate: with one replica, the old pod goes before the new one
  // comes, so two driver processes never share the node's socket and state).
  EXPECT_FALSE(sts["spec"].contains("updateStrategy"));
  EXPECT_EQ(containerNames(sts),
            (std::vector<std::string>{"csi-driver", "node-driver-registrar", "liveness-probe",
                                      "csi-provisioner", "csi-attacher", "csi-resizer"}));
  const Json& pod = sts["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "demo-node");
  EXPECT_EQ(pod["automountServiceAccountToken"], true);
  // The kubelet's directories, as any node plugin has them.
  bool registration = false;
  for (const auto& v : pod["volumes"]) {
    registration = registration || v["name"] == "registration-dir";
  }
  EXPECT_TRUE(registration) << pod["volumes"].dump();
}

TEST(RenderSinglePod, OnePodElectsNoLeaderAndToleratesNoTaintByDefault) {
  const auto objs = renderSinglePod();
  const Json* sts = find(objs, "StatefulSet", "demo-node", "csi-demo");
  ASSERT_NE(sts, nullptr);
  for (const char* name : {"csi-provisioner", "csi-attacher"}) {
    SCOPED_TRACE(name);
    const Json* c = container(*sts, name);
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(hasArg(*c, "--csi-address=/csi/csi.sock"));
    EXPECT_FALSE(hasArg(*c, "--leader-election"));
  }
  // Not every node's pod: where the scheduler may put any pod (no cordoned node).
  EXPECT_FALSE((*sts)["spec"]["template"]["spec"].contains("tolerations"));
  // No Lease rules without leader election.
  EXPECT_EQ(find(objs, "Role", "csiop:demo:external-provisioner", "csi-demo"), nullptr);
}

TEST(RenderSinglePod, TheNodePluginsPlacementFieldsPlaceThePod) {
  const auto objs =
      renderSinglePod("", "  node:\n    nodeSelector: {kubernetes.io/hostname: node-a}\n"
                          "    tolerations: [{key: storage, operator: Exists}]\n");
  const Json* sts = find(objs, "StatefulSet", "demo-node", "csi-demo");
  ASSERT_NE(sts, nullptr);
  const Json& pod = (*sts)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["nodeSelector"], Json::parse(R"({"kubernetes.io/hostname":"node-a"})"));
  EXPECT_EQ(pod["tolerations"], Json::parse(R"([{"key":"storage","operator":"Exists"}])"));
}

TEST(RenderSinglePod, StorageCapacityIsOwnedByTheStatefulSet) {
  const auto objs =
      renderSinglePod("", "  csiDriver: {storageCapacity: true, attachRequired: false}\n");
  const Json* sts = find(objs, "StatefulSet", "demo-node", "csi-demo");
  ASSERT_NE(sts, nullptr);
  const Json* p = container(*sts, "csi-provisioner");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(hasArg(*p, "--capacity-ownerref-level=1")); // pod -> StatefulSet
}

TEST(RenderSinglePod, LeaderElectionAskedForIsRendered) {
  const auto objs = renderSinglePod("    leaderElection: {enabled: true}\n");
  const Json* sts = find(objs, "StatefulSet", "demo-node", "csi-demo");
  ASSERT_NE(sts, nullptr);
  const Json* c = container(*sts, "csi-provisioner");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(hasArg(*c, "--leader-election"));
}

} // namespace
} // namespace csiop
