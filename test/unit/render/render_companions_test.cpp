// The companion objects as rendered: what the fields say, in the driver's namespace, owned and
// labelled like every other child; secret access as namespaced Roles; what a driver needs but
// the operator does not create.
#include <gtest/gtest.h>

#include <csiop/api/defaults.hpp>
#include <csiop/render/check.hpp>
#include <csiop/render/prerequisites.hpp>

#include "../common/render_test_util.hpp"

namespace csiop {
namespace {

using api::Json;
using testutil::find;
using testutil::ofKind;
using testutil::renderYaml;

const char* kDriver = R"(
apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo, uid: 0b7c6a2e-1f1d-4e63-9a57-2b1c0d1e2f30}
spec:
  driverName: demo.csi.example.com
  namespace: storage
  driver: {image: example.com/driver:v1}
  controller:
    replicas: 2
    snapshotter: {enabled: true}
    podDisruptionBudget: {maxUnavailable: 1}
  configMaps:
  - {name: driver-config, data: {config.json: '{}'}, labels: {team: storage}, annotations: {note: x}}
  services:
  - name: controller-metrics
    component: Controller
    ports: [{name: http, port: 8080, targetPort: 8080}]
  - {name: node-metrics, component: Node, clusterIP: None, ports: [{port: 9100}]}
  volumeSnapshotClasses:
  - name: snapshots
    isDefault: true
    parameters:
      csi.storage.k8s.io/snapshotter-secret-name: snap-secret
      csi.storage.k8s.io/snapshotter-secret-namespace: storage
  secretAccess:
  - {namespace: ceph, names: [csi-rbd-secret, csi-cephfs-secret]}
  - {namespace: shared, serviceAccounts: [Node]}
  objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: dashboard, labels: {app: dashboard}, annotations: {a: b}}
    spec:
      replicas: 1
      selector: {matchLabels: {app: dashboard}}
      template:
        metadata: {labels: {app: dashboard}}
        spec: {containers: [{name: dashboard, image: example.com/dashboard:v1}]}
  requiredAPIs: [secrets-store.csi.x-k8s.io/v1/secretproviderclasses]
)";

void expectOwned(const Json& o, const std::string& component) {
  const Json& meta = o["metadata"];
  EXPECT_EQ(meta["labels"][api::kOwnerLabel], "demo") << o.dump();
  EXPECT_EQ(meta["labels"]["app.kubernetes.io/component"], component) << o.dump();
  ASSERT_EQ(meta["ownerReferences"].size(), 1U) << o.dump();
  EXPECT_EQ(meta["ownerReferences"][0]["kind"], "DriverDeployment");
  EXPECT_EQ(meta["ownerReferences"][0]["controller"], true);
}

TEST(RenderCompanions, ConfigMapsCarryTheirDataInTheDriversNamespace) {
  const auto objs = renderYaml(kDriver);
  const Json* cm = find(objs, "ConfigMap", "driver-config", "storage");
  ASSERT_NE(cm, nullptr);
  expectOwned(*cm, "config");
  EXPECT_EQ((*cm)["metadata"]["labels"]["team"], "storage");
  EXPECT_EQ((*cm)["metadata"]["annotations"], (Json{{"note", "x"}}));
  EXPECT_EQ((*cm)["data"], (Json{{"config.json", "{}"}}));
  EXPECT_FALSE(cm->contains("binaryData"));
}

TEST(RenderCompanions, ServicesSelectTheirComponentsPods) {
  const auto objs = renderYaml(kDriver);
  const Json* controller = find(objs, "Service", "controller-metrics", "storage");
  const Json* node = find(objs, "Service", "node-metrics", "storage");
  ASSERT_NE(controller, nullptr);
  ASSERT_NE(node, nullptr);
  expectOwned(*controller, "service");
  const Json* deployment = find(objs, "Deployment", "demo-controller", "storage");
  const Json* daemonSet = find(objs, "DaemonSet", "demo-node", "storage");
  ASSERT_NE(deployment, nullptr);
  ASSERT_NE(daemonSet, nullptr);
  EXPECT_EQ((*controller)["spec"]["selector"], (*deployment)["spec"]["selector"]["matchLabels"]);
  EXPECT_EQ((*node)["spec"]["selector"], (*daemonSet)["spec"]["selector"]["matchLabels"]);
  EXPECT_EQ((*controller)["spec"]["type"], "ClusterIP");
  EXPECT_FALSE((*controller)["spec"].contains("clusterIP"));
  EXPECT_EQ((*node)["spec"]["clusterIP"], "None");
  EXPECT_EQ((*controller)["spec"]["ports"],
            Json::parse(R"([{"name":"http","port":8080,"targetPort":8080}])"));
}

TEST(RenderCompanions, TheControllersBudgetSelectsItsPods) {
  const auto objs = renderYaml(kDriver);
  const Json* pdb = find(objs, "PodDisruptionBudget", "demo-controller", "storage");
  ASSERT_NE(pdb, nullptr);
  EXPECT_EQ((*pdb)["apiVersion"], "policy/v1");
  expectOwned(*pdb, "controller-plugin");
  const Json* deployment = find(objs, "Deployment", "demo-controller", "storage");
  EXPECT_EQ((*pdb)["spec"]["selector"]["matchLabels"],
            (*deployment)["spec"]["selector"]["matchLabels"]);
  EXPECT_EQ((*pdb)["spec"]["maxUnavailable"], 1);
  EXPECT_FALSE((*pdb)["spec"].contains("minAvailable"));
}

TEST(RenderCompanions, SnapshotClassesNameTheDriver) {
  const auto objs = renderYaml(kDriver);
  const Json* c = find(objs, "VolumeSnapshotClass", "snapshots");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["apiVersion"], "snapshot.storage.k8s.io/v1");
  expectOwned(*c, "snapshot-class");
  EXPECT_EQ((*c)["driver"], "demo.csi.example.com");
  EXPECT_EQ((*c)["deletionPolicy"], "Delete");
  EXPECT_EQ((*c)["metadata"]["annotations"]["snapshot.storage.kubernetes.io/is-default-class"],
            "true");
}

TEST(RenderCompanions, ObjectsGoIntoTheDriversNamespaceOwned) {
  const auto objs = renderYaml(kDriver);
  const Json* d = find(objs, "Deployment", "dashboard", "storage");
  ASSERT_NE(d, nullptr);
  expectOwned(*d, "object");
  EXPECT_EQ((*d)["metadata"]["labels"]["app"], "dashboard");
  EXPECT_EQ((*d)["metadata"]["annotations"], (Json{{"a", "b"}}));
  EXPECT_EQ((*d)["spec"],
            Json::parse(R"({"replicas":1,"selector":{"matchLabels":{"app":"dashboard"}},
                            "template":{"metadata":{"labels":{"app":"dashboard"}},
                                        "spec":{"containers":[{"name":"dashboard",
                                                "image":"example.com/dashboard:v1"}]}}})"));
  // After every object of the operator's own.
  EXPECT_EQ(objs.back()["metadata"]["name"], "dashboard");
}

TEST(RenderCompanions, ObjectsCannotTakeTheOperatorsOwnLabels) {
  const auto objs = renderYaml(R"(
apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec:
  driverName: demo.csi.example.com
  driver: {image: d}
  objects:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, labels: {csiop.dev/driverdeployment: other}}}
)");
  const Json* cm = find(objs, "ConfigMap", "c", "csi-demo");
  ASSERT_NE(cm, nullptr);
  EXPECT_EQ((*cm)["metadata"]["labels"][api::kOwnerLabel], "demo");
}

std::set<std::string> secretRoles(const std::vector<Json>& objs) {
  std::set<std::string> out;
  for (const Json* role : ofKind(objs, "Role")) {
    for (const Json& rule : (*role)["rules"]) {
      if (rule["resources"] == Json::array({"secrets"})) {
        out.insert((*role)["metadata"]["namespace"].get<std::string>() + " " +
                   (*role)["metadata"]["name"].get<std::string>() + " " + rule["verbs"].dump() +
                   " " + rule.value("resourceNames", Json()).dump());
      }
    }
  }
  return out;
}

TEST(RenderCompanions, SecretAccessIsGetOnNamedSecretsInOneNamespace) {
  const auto objs = renderYaml(kDriver);
  EXPECT_EQ(secretRoles(objs),
            (std::set<std::string>{
                R"(ceph csiop:demo:secrets ["get"] ["csi-cephfs-secret","csi-rbd-secret"])",
                R"(shared csiop:demo:node-secrets ["get"] null)",
                R"(storage csiop:demo:secrets ["get"] ["snap-secret"])"}));
  for (const Json* binding : ofKind(objs, "RoleBinding")) {
    const std::string name = (*binding)["metadata"]["name"];
    if (name == "csiop:demo:node-secrets") {
      EXPECT_EQ((*binding)["subjects"][0]["name"], "demo-node");
    } else if (name == "csiop:demo:secrets") {
      EXPECT_EQ((*binding)["subjects"][0]["name"], "demo-controller");
    }
  }
  // Nothing cluster-wide.
  for (const Json* role : ofKind(objs, "ClusterRole")) {
    for (const Json& rule : (*role)["rules"]) {
      EXPECT_NE(rule["resources"], Json::array({"secrets"})) << (*role)["metadata"]["name"];
    }
  }
}

TEST(RenderCompanions, SnapshotSecretsNeedAnEnabledSnapshotter) {
  std::string yaml = kDriver;
  yaml.replace(yaml.find("snapshotter: {enabled: true}"), 28, "snapshotter: {enabled: false}");
  const auto roles = secretRoles(renderYaml(yaml));
  EXPECT_FALSE(roles.contains(R"(storage csiop:demo:secrets ["get"] ["snap-secret"])"));
}

TEST(RenderCompanions, PrerequisitesAreTheSnapshotAPIsAndTheRequiredOnes) {
  const api::Effective e = api::resolve(testutil::load(kDriver));
  std::vector<std::string> apis;
  for (const auto& a : render::requiredApis(e)) {
    apis.push_back(a.str() + " (" + a.neededBy + ")");
  }
  EXPECT_EQ(apis, (std::vector<std::string>{
                      "snapshot.storage.k8s.io/v1/volumesnapshotclasses (the snapshotter)",
                      "snapshot.storage.k8s.io/v1/volumesnapshotcontents (the snapshotter)",
                      "secrets-store.csi.x-k8s.io/v1/secretproviderclasses (spec.requiredAPIs)"}));
  EXPECT_TRUE(render::requiredPriorityClasses(e).empty()); // the system classes exist anywhere
}

TEST(RenderCompanions, PriorityClassesOtherThanTheSystemOnesArePrerequisites) {
  const api::Effective e = api::resolve(testutil::load(R"(
apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec:
  driverName: demo.csi.example.com
  driver: {image: d}
  node: {priorityClassName: storage-critical}
  controller: {priorityClassName: ""}
)"));
  const auto classes = render::requiredPriorityClasses(e);
  ASSERT_EQ(classes.size(), 1U);
  EXPECT_EQ(classes[0].name, "storage-critical");
  EXPECT_EQ(classes[0].neededBy, "the node plugin");
}

TEST(RenderCompanions, AnObjectMayNotTakeTheNameOfTheOperatorsOwn) {
  const api::Loaded l = api::loadDriverDeployments(
      R"(
apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec:
  driverName: demo.csi.example.com
  driver: {image: d}
  objects:
  - {apiVersion: v1, kind: ServiceAccount, metadata: {name: demo-node}}
  - {apiVersion: v1, kind: ServiceAccount, metadata: {name: demo-agent}}
)",
      api::UnknownFields::Strict, render::admissionCheck(api::builtinObjectKinds()));
  EXPECT_EQ(l.errors,
            (std::vector<std::string>{
                "DriverDeployment \"demo\": spec.objects[0].metadata.name: Forbidden: "
                "ServiceAccount demo-node is an object the operator renders for this driver"}));
}

} // namespace
} // namespace csiop
