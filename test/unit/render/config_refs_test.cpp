// The ConfigMaps and Secrets a workload references, found in its rendered pod template.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>

#include <csiop/api/defaults.hpp>
#include <csiop/api/load.hpp>
#include <csiop/api/yaml.hpp>
#include <csiop/render/config_refs.hpp>
#include <csiop/render/render.hpp>

namespace csiop::render {
namespace {

std::vector<std::string> names(const std::vector<ConfigReference>& refs) {
  std::vector<std::string> out;
  for (const auto& r : refs) {
    out.push_back(r.str() + (r.optional ? " (optional)" : ""));
  }
  return out;
}

Json daemonSet(const Json& podSpec) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "DaemonSet"},
          {"metadata", {{"name", "x-node"}, {"namespace", "csi-x"}}},
          {"spec", {{"template", {{"spec", podSpec}}}}}};
}

TEST(ConfigRefs, EnvEnvFromAndVolumesOfEveryContainerSortedOnce) {
  const Json pod = Json::parse(R"({
    "initContainers": [{"name": "init", "envFrom": [{"secretRef": {"name": "init-creds"}}]}],
    "containers": [
      {"name": "a",
       "env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "a"}}},
               {"name": "B", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "b", "optional": true}}},
               {"name": "C", "value": "plain"},
               {"name": "D", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
       "envFrom": [{"configMapRef": {"name": "settings"}}]},
      {"name": "b", "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "e"}}}]}],
    "volumes": [
      {"name": "v1", "configMap": {"name": "files", "optional": true}},
      {"name": "v2", "secret": {"secretName": "tls"}},
      {"name": "v3", "projected": {"sources": [{"configMap": {"name": "bundle"}},
                                                {"secret": {"name": "token"}},
                                                {"serviceAccountToken": {"path": "t"}}]}},
      {"name": "v4", "hostPath": {"path": "/dev"}}]})");
  EXPECT_EQ(names(configReferences(daemonSet(pod))),
            (std::vector<std::string>{"ConfigMap csi-x/bundle", "ConfigMap csi-x/files (optional)",
                                      "ConfigMap csi-x/settings", "Secret csi-x/creds",
                                      "Secret csi-x/init-creds", "Secret csi-x/tls",
                                      "Secret csi-x/token"}));
}

TEST(ConfigRefs, OnlyWorkloadsAndNothingWhenNothingIsReferenced) {
  EXPECT_TRUE(
      configReferences(daemonSet(Json::parse(R"({"containers": [{"name": "a"}]})"))).empty());
  Json sc = {{"kind", "StorageClass"}, {"metadata", {{"name", "x"}}}};
  EXPECT_TRUE(configReferences(sc).empty());
  EXPECT_TRUE(configReferences(daemonSet(Json::parse(R"({"containers": "garbage"})"))).empty());
}

// A DriverDeployment whose StorageClass names fixed provisioner and node-stage secrets (and a
// templated controller-expand one), with `spec` lines added.
api::DriverDeployment withClassSecrets(const std::string& spec) {
  const auto loaded = api::loadDriverDeployment(api::parseYaml(R"(
apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: x}
spec:
  driverName: x.csi.example.com
  driver: {image: example.com/d:1}
  storageClasses:
  - name: a
    parameters:
      csi.storage.k8s.io/provisioner-secret-name: prov
      csi.storage.k8s.io/provisioner-secret-namespace: kube-system
      csi.storage.k8s.io/node-stage-secret-name: stage
      csi.storage.k8s.io/node-stage-secret-namespace: kube-system
      csi.storage.k8s.io/controller-expand-secret-name: ${pvc.name}
      csi.storage.k8s.io/controller-expand-secret-namespace: kube-system
)" + spec)[0],
                                                api::UnknownFields::Strict);
  EXPECT_TRUE(loaded.ok());
  return loaded.objects.front();
}

TEST(ConfigRefs, FixedStorageClassSecretsGoToTheirReader) {
  const api::Effective e = api::resolve(withClassSecrets("  controller: {}\n"));
  EXPECT_EQ(names(storageClassSecrets(e, true)),
            (std::vector<std::string>{"Secret kube-system/prov"})); // the template is skipped
  EXPECT_EQ(names(storageClassSecrets(e, false)),
            (std::vector<std::string>{"Secret kube-system/stage"}));
}

// Which workload reads which secrets is decided from the rendered objects (their component
// label) and the placement, not from any wording: the node plugin's pods the kubelet's, the
// controller's the sidecars', and the node plugin both when the controller sidecars run in it.
TEST(ConfigRefs, EachWorkloadHashesTheStorageClassSecretsItsPodsRead) {
  const auto secretsByWorkload = [](const std::string& placement) {
    const api::DriverDeployment dd = withClassSecrets("  windowsNode: {enabled: true}\n"
                                                      "  controller: {placement: " +
                                                      placement + "}\n");
    const api::Effective e = api::resolve(dd);
    std::map<std::string, std::vector<std::string>> out;
    for (const Json& o : render(dd)) {
      if (o["kind"] == "DaemonSet" || o["kind"] == "Deployment" || o["kind"] == "StatefulSet") {
        out[o["metadata"]["name"]] = names(storageClassSecretsOf(e, o));
      }
    }
    return out;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(secretsByWorkload("Workload"),
            (std::map<std::string, Names>{{"x-controller", {"Secret kube-system/prov"}},
                                          {"x-node", {"Secret kube-system/stage"}},
                                          {"x-node-windows", {"Secret kube-system/stage"}}}));
  EXPECT_EQ(secretsByWorkload("NodePlugin"),
            (std::map<std::string, Names>{
                {"x-node", {"Secret kube-system/prov", "Secret kube-system/stage"}},
                {"x-node-windows", {"Secret kube-system/stage"}}}));
  EXPECT_TRUE(storageClassSecretsOf(api::Effective{}, Json{{"kind", "StorageClass"}}).empty());
}

TEST(ConfigRefs, TheHashAnnotationIsOnThePodTemplate) {
  Json ds = daemonSet(Json::parse(R"({"containers": [{"name": "a"}]})"));
  EXPECT_EQ(configHash(ds), "");
  setConfigHash(ds, "abc");
  EXPECT_EQ(ds["spec"]["template"]["metadata"]["annotations"]["csiop.dev/config-hash"], "abc");
  EXPECT_EQ(configHash(ds), "abc");
}

TEST(ConfigRefs, RenderedExamplesReferenceWhatTheirPodsUse) {
  // examples/nfs.yaml's StorageClass names a provisioner secret; its pods reference nothing.
  std::ifstream in(std::string(CSIOP_SOURCE_DIR) + "/examples/nfs.yaml");
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  const auto loaded =
      api::loadDriverDeployment(api::parseYaml(text)[0], api::UnknownFields::Strict);
  ASSERT_TRUE(loaded.ok());
  for (const Json& o : render(loaded.objects.front())) {
    EXPECT_TRUE(configReferences(o).empty()) << o["kind"];
  }
}

} // namespace
} // namespace csiop::render
