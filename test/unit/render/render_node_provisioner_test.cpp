// Node-local provisioning: external-provisioner beside the driver on every node
// (--node-deployment), as the hostpath driver's distributed mode and every local-volume driver
// deploy it (examples/hostpath-distributed.yaml).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../common/render_test_util.hpp"

namespace csiop {
namespace {

using api::Json;
using testutil::container;
using testutil::find;
using testutil::ofKind;

std::vector<Json> distributed() {
  std::ifstream in(std::filesystem::path(CSIOP_SOURCE_DIR) / "examples/hostpath-distributed.yaml");
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  auto dd = testutil::load(text);
  dd.metadata["uid"] = "8c1f4a44-0d4e-4c8e-9b55-3f0a7f1c2d10";
  return render::render(dd);
}

TEST(RenderNodeProvisioner, RunsBesideTheDriverOnEveryNodeForItsNodeOnly) {
  const auto objs = distributed();
  const Json* ds = find(objs, "DaemonSet", "hostpath-local-node", "csi-hostpath-local");
  ASSERT_NE(ds, nullptr);
  EXPECT_TRUE(ofKind(objs, "Deployment").empty() && ofKind(objs, "StatefulSet").empty());
  const Json* p = container(*ds, "csi-provisioner");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ((*p)["image"], "registry.k8s.io/sig-storage/csi-provisioner:v6.3.0");
  EXPECT_EQ((*p)["args"], Json::parse(R"(["--csi-address=/csi/csi.sock", "--node-deployment=true",
      "--strict-topology=true", "--immediate-topology=false", "--enable-capacity",
      "--capacity-ownerref-level=1"])"));
  const auto env = (*p)["env"].dump();
  for (const char* var : {"NODE_NAME", "NAMESPACE", "POD_NAME"}) {
    EXPECT_NE(env.find(std::string("\"") + var + "\""), std::string::npos) << var << " " << env;
  }
  EXPECT_EQ((*p)["securityContext"]["allowPrivilegeEscalation"], false);
  EXPECT_FALSE(p->contains("ports")) << "no endpoint unless asked for";
  EXPECT_EQ((*ds)["spec"]["template"]["spec"]["automountServiceAccountToken"], true);
  const std::string args = (*p)["args"].dump();
  EXPECT_EQ(args.find("--leader-election"), std::string::npos);
}

TEST(RenderNodeProvisioner, TheNodePluginsAccountGetsTheProvisionersRulesAndCapacity) {
  const auto objs = distributed();
  const Json* role = find(objs, "ClusterRole", "csiop:external-provisioner");
  const Json* binding =
      find(objs, "ClusterRoleBinding", "csiop:hostpath-local:sidecar:external-provisioner");
  ASSERT_NE(role, nullptr);
  ASSERT_NE(binding, nullptr);
  EXPECT_EQ((*binding)["subjects"][0]["name"], "hostpath-local-node");
  EXPECT_NE((*role)["rules"].dump().find("persistentvolumes"), std::string::npos);
  const Json* capacity =
      find(objs, "Role", "csiop:hostpath-local:external-provisioner", "csi-hostpath-local");
  ASSERT_NE(capacity, nullptr);
  EXPECT_EQ((*capacity)["rules"], Json::parse(R"([
      {"apiGroups": ["storage.k8s.io"], "resources": ["csistoragecapacities"],
       "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
      {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])"));
  for (const Json* r : ofKind(objs, "Role")) {
    EXPECT_EQ((*r)["rules"].dump().find("leases"), std::string::npos) << "no leader election";
  }
}

TEST(RenderNodeProvisioner, ImmediateBindingDelaysAndEndpointAreFlags) {
  const auto objs = testutil::renderYaml(R"(
apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: local}
spec:
  driverName: local.csi.example.com
  driver: {image: d}
  csiDriver: {attachRequired: false}
  node:
    provisioner: {enabled: true, immediateBinding: false, baseDelay: 5s, maxDelay: 30s,
                  httpEndpoint: ":8090", args: [--v=3]}
  storageClasses:
  - name: local
    parameters:
      csi.storage.k8s.io/provisioner-secret-name: creds
      csi.storage.k8s.io/provisioner-secret-namespace: storage
)");
  const Json* ds = find(objs, "DaemonSet", "local-node", "csi-local");
  ASSERT_NE(ds, nullptr);
  const Json* p = container(*ds, "csi-provisioner");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ((*p)["args"], Json::parse(R"(["--csi-address=/csi/csi.sock", "--node-deployment=true",
      "--strict-topology=true", "--immediate-topology=false", "--http-endpoint=:8090",
      "--node-deployment-immediate-binding=false", "--node-deployment-base-delay=5s",
      "--node-deployment-max-delay=30s", "--v=3"])"));
  EXPECT_EQ(
      (*p)["env"],
      Json::parse(
          R"([{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}])"));
  EXPECT_EQ((*p)["ports"][0]["containerPort"], 8090);
  // The provisioner's secret is the node plugin's to read.
  const Json* secrets = find(objs, "RoleBinding", "csiop:local:node-secrets", "storage");
  ASSERT_NE(secrets, nullptr);
  EXPECT_EQ((*secrets)["subjects"][0]["name"], "local-node");
}

} // namespace
} // namespace csiop
