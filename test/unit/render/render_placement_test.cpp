// spec.controller.placement NodePlugin: the controller sidecars in the node plugin's pods.
#include <gtest/gtest.h>

#include <set>

#include <csiop/api/defaults.hpp>

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

std::vector<Json> renderInNodePlugin(const std::string& controllerExtra = "",
                                     const std::string& specExtra = "") {
  return testutil::renderPlaced("NodePlugin", controllerExtra, specExtra);
}

TEST(RenderPlacement, SidecarsJoinTheNodePluginAndNoControllerWorkloadIsRendered) {
  const auto objs = renderInNodePlugin("    resizer: {enabled: true}\n");
  const Json* ds = find(objs, "DaemonSet", "demo-node", "csi-demo");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(containerNames(*ds),
            (std::vector<std::string>{"csi-driver", "node-driver-registrar", "liveness-probe",
                                      "csi-provisioner", "csi-attacher", "csi-resizer"}));
  EXPECT_TRUE(ofKind(objs, "Deployment").empty());
  EXPECT_TRUE(ofKind(objs, "StatefulSet").empty());
  // One ServiceAccount: the node plugin's, whose token the sidecars need.
  const auto accounts = ofKind(objs, "ServiceAccount");
  ASSERT_EQ(accounts.size(), 1u);
  EXPECT_EQ((*accounts[0])["metadata"]["name"], "demo-node");
  const Json& pod = (*ds)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "demo-node");
  EXPECT_EQ(pod["automountServiceAccountToken"], true);
}

TEST(RenderPlacement, SidecarsDialTheNodeDriversSocketWithLeaderElection) {
  const auto objs = renderInNodePlugin();
  const Json* ds = find(objs, "DaemonSet", "demo-node", "csi-demo");
  ASSERT_NE(ds, nullptr);
  for (const char* name : {"csi-provisioner", "csi-attacher"}) {
    SCOPED_TRACE(name);
    const Json* c = container(*ds, name);
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(hasArg(*c, "--csi-address=/csi/csi.sock"));
    // One node plugin pod per node: only the leader's sidecars act.
    EXPECT_TRUE(hasArg(*c, "--leader-election"));
    EXPECT_EQ((*c)["volumeMounts"], Json::parse(R"([{"name":"socket-dir","mountPath":"/csi"}])"));
    // The node's driver is privileged (the node plugin default); its sidecars are not.
    EXPECT_EQ((*c)["securityContext"], api::defaults::sidecarSecurityContext());
  }
  // The socket directory is the node plugin's, on the host, the one the kubelet dials.
  bool hostSocket = false;
  for (const auto& v : (*ds)["spec"]["template"]["spec"]["volumes"]) {
    hostSocket =
        hostSocket || (v["name"] == "socket-dir" &&
                       v["hostPath"]["path"] == "/var/lib/kubelet/plugins/demo.csi.example.com");
  }
  EXPECT_TRUE(hostSocket);
}

TEST(RenderPlacement, TheSidecarsRbacIsBoundToTheNodePluginsServiceAccount) {
  const auto objs = renderInNodePlugin("    rbacRules: [{apiGroups: [''], resources: [configmaps], "
                                       "verbs: [get]}]\n");
  std::set<std::string> bound;
  for (const char* kind : {"ClusterRoleBinding", "RoleBinding"}) {
    for (const Json* b : ofKind(objs, kind)) {
      for (const auto& s : (*b)["subjects"]) {
        EXPECT_EQ(s["name"], "demo-node") << (*b)["metadata"]["name"];
        EXPECT_EQ(s["namespace"], "csi-demo");
      }
      bound.insert((*b)["metadata"]["name"].get<std::string>());
    }
  }
  EXPECT_TRUE(bound.contains("csiop:demo:sidecar:external-provisioner"));
  EXPECT_TRUE(bound.contains("csiop:demo:sidecar:external-attacher"));
  EXPECT_TRUE(bound.contains("csiop:demo:controller-driver"));
  // Leader election's leases, in the driver's namespace.
  EXPECT_NE(find(objs, "Role", "csiop:demo:external-provisioner", "csi-demo"), nullptr);
}

TEST(RenderPlacement, StorageCapacityIsOwnedByTheDaemonSet) {
  const auto objs =
      renderInNodePlugin("", "  csiDriver: {storageCapacity: true, attachRequired: false}\n");
  const Json* ds = find(objs, "DaemonSet", "demo-node", "csi-demo");
  ASSERT_NE(ds, nullptr);
  const Json* p = container(*ds, "csi-provisioner");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(hasArg(*p, "--enable-capacity"));
  EXPECT_TRUE(hasArg(*p, "--capacity-ownerref-level=1")); // pod -> DaemonSet
  const Json* role = find(objs, "Role", "csiop:demo:external-provisioner", "csi-demo");
  ASSERT_NE(role, nullptr);
  for (const auto& r : (*role)["rules"]) {
    EXPECT_NE(r["resources"][0], "replicasets") << "no ReplicaSet between pod and DaemonSet";
  }
}

TEST(RenderPlacement, WorkloadPlacementIsTheDefault) {
  const auto objs = render::render(load(dd("  controller: {}\n")));
  EXPECT_EQ(ofKind(objs, "Deployment").size(), 1u);
  EXPECT_EQ(ofKind(objs, "ServiceAccount").size(), 2u);
  const Json* ds = find(objs, "DaemonSet", "demo-node", "csi-demo");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(container(*ds, "csi-provisioner"), nullptr);
}

} // namespace
} // namespace csiop
