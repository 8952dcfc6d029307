// Kubernetes' schema of the types a DriverDeployment embeds (api/schema/kubernetes.json), judged
// by the API server itself:
//  - the embedded file is exactly what the pinned API server serves, cut to what the embedded
//    fields reach (CSIOP_UPDATE_KUBE_SCHEMA=1 rewrites it);
//  - for each bad embedded value, `csi-operator render` refuses the DriverDeployment at the
//    field path the user wrote, and the API server refuses the same value in a DaemonSet
//    (server-side apply, dry run, fieldValidation Strict); the same objects without the bad
//    value pass both.
#include <fstream>

#include <gtest/gtest.h>

#include <csiop/api/embedded_fields.hpp>
#include <csiop/api/kube_schema.hpp>

#include "harness.hpp"

namespace csiop::e2e {
namespace {

TEST(KubeSchema, TheEmbeddedSchemaIsWhatThePinnedApiServerServes) {
  std::vector<api::Json> documents;
  for (const char* groupVersion : api::kKubeSchemaDocuments) {
    const auto r = kubectl({"get", "--raw", std::string("/openapi/v3/") + groupVersion});
    ASSERT_TRUE(r.ok()) << r;
    documents.push_back(api::Json::parse(r.out));
  }
  const std::string version =
      kubectlJson({"version"})["serverVersion"].value("gitVersion", std::string());
  const std::string served =
      api::kubeSchemaSubset(documents, api::embeddedDefinitionRoots(), version).dump(1) + "\n";
  const auto file = sourceDir() / "api/schema/kubernetes.json";
  if (std::getenv("CSIOP_UPDATE_KUBE_SCHEMA") != nullptr) {
    std::ofstream(file) << served;
    GTEST_SKIP() << "rewrote " << file;
  }
  // The binary's copy is the file's (embedded at build time).
  EXPECT_TRUE(served == api::embeddedKubeSchemaText())
      << "api/schema/kubernetes.json is not what the API server " << version
      << " serves: rewrite it with CSIOP_UPDATE_KUBE_SCHEMA=1 ./e2e_kube_schema_test (served "
      << served.size() << " bytes, embedded " << api::embeddedKubeSchemaText().size() << ")\n"
      << writeArtifact("kube-schema-served.json", served);
}

struct BadValue {
  std::string name;
  std::string inDriverDeployment; // JSON pointer of the embedded field
  std::string inDaemonSet;        // JSON pointer of the same field in a DaemonSet
  api::Json value;
  std::string reported; // the field path render names
};

api::Json driverDeployment() {
  return api::Json::parse(R"({
    "apiVersion": "csiop.dev/v1alpha1", "kind": "DriverDeployment",
    "metadata": {"name": "schema"},
    "spec": {"driverName": "schema.csi.example.com",
             "driver": {"image": "registry.example.com/driver:v1"},
             "node": {"driver": {}}}})");
}

api::Json daemonSet() {
  return api::Json::parse(R"({
    "apiVersion": "apps/v1", "kind": "DaemonSet",
    "metadata": {"name": "schema-probe", "namespace": "default"},
    "spec": {"selector": {"matchLabels": {"app": "schema-probe"}},
             "template": {"metadata": {"labels": {"app": "schema-probe"}},
                          "spec": {"containers": [{"name": "c", "image": "registry.example.com/c:v1"}]}}}})");
}

// Sets `value` at `pointer`, creating the objects on the way.
void put(api::Json& doc, const std::string& pointer, const api::Json& value) {
  doc[api::Json::json_pointer(pointer)] = value;
}

std::vector<BadValue> badValues() {
  const std::string driver = "/spec/node/driver";
  const std::string container = "/spec/template/spec/containers/0";
  const std::string pod = "/spec/template/spec";
  return {
      {"hostPathPathNumber", driver + "/volumes", pod + "/volumes",
       api::Json::parse(R"([{"name": "data", "hostPath": {"path": 123}}])"),
       "spec.node.driver.volumes[0].hostPath.path"},
      {"capabilitiesAddString", driver + "/securityContext", container + "/securityContext",
       api::Json::parse(R"({"capabilities": {"add": "SYS_ADMIN"}})"),
       "spec.node.driver.securityContext.capabilities.add"},
      {"preStopCommandString", driver + "/lifecycle", container + "/lifecycle",
       api::Json::parse(R"({"preStop": {"exec": {"command": "rm -f /csi/csi.sock"}}})"),
       "spec.node.driver.lifecycle.preStop.exec.command"},
      {"misspelledSecurityField", driver + "/securityContext", container + "/securityContext",
       api::Json::parse(R"({"allowPrivilegeEscalaton": true})"),
       "spec.node.driver.securityContext.allowPrivilegeEscalaton"},
      {"pullPolicyNotOneOfThem", "/spec/node/extraContainers", pod + "/initContainers",
       api::Json::parse(
           R"([{"name": "x", "image": "registry.example.com/x:v1", "imagePullPolicy": "Sometimes"}])"),
       "spec.node.extraContainers[0].imagePullPolicy"},
      {"misspelledMountPath", driver + "/volumeMounts", container + "/volumeMounts",
       api::Json::parse(R"([{"name": "data", "mountPth": "/data"}])"),
       "spec.node.driver.volumeMounts[0].mountPth"},
      {"tolerationSecondsString", "/spec/node/tolerations", pod + "/tolerations",
       api::Json::parse(
           R"([{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": "30"}])"),
       "spec.node.tolerations[0].tolerationSeconds"},
      {"nodeSelectorTermsMissing", "/spec/node/affinity", pod + "/affinity",
       api::Json::parse(
           R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}})"),
       "spec.node.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms"},
      {"quantityNotOne", driver + "/resources", container + "/resources",
       api::Json::parse(R"({"limits": {"memory": "1Gz"}})"),
       "spec.node.driver.resources.limits[memory]"},
      {"envNameTwice", driver + "/env", container + "/env",
       api::Json::parse(R"([{"name": "A", "value": "1"}, {"name": "A", "value": "2"}])"),
       "spec.node.driver.env[1]"},
      {"podFsGroupString", "/spec/node/securityContext", pod + "/securityContext",
       api::Json::parse(R"({"fsGroup": "1000"})"), "spec.node.securityContext.fsGroup"},
      {"probePortMissing", driver + "/readinessProbe", container + "/readinessProbe",
       api::Json::parse(R"({"httpGet": {"path": "/healthz"}})"),
       "spec.node.driver.readinessProbe.httpGet.port"},
  };
}

void PrintTo(const BadValue& bad, std::ostream* os) {
  *os << bad.name;
}

RunResult serverSideDryRun(const api::Json& object) {
  return kubectl({"apply", "--server-side", "--dry-run=server", "--validate=strict",
                  "--field-manager=schema-test", "-f", "-"},
                 object.dump());
}

class BadEmbeddedValue : public testing::TestWithParam<BadValue> {};

TEST_P(BadEmbeddedValue, RenderAndTheApiServerBothRefuseIt) {
  const BadValue& bad = GetParam();
  // Both objects pass without the bad value: what is refused below is the value.
  const auto goodRender =
      csiOperator({"render", "--validate=strict", "-f", "-"}, driverDeployment().dump());
  ASSERT_TRUE(goodRender.ok()) << goodRender;
  const auto goodApply = serverSideDryRun(daemonSet());
  ASSERT_TRUE(goodApply.ok()) << goodApply;

  api::Json dd = driverDeployment();
  put(dd, bad.inDriverDeployment, bad.value);
  const auto rendered = csiOperator({"render", "--validate=strict", "-f", "-"}, dd.dump());
  EXPECT_FALSE(rendered.ok()) << rendered;
  // "<path>: <what>", or `unknown field "<path>"`.
  EXPECT_TRUE(rendered.err.find(bad.reported + ":") != std::string::npos ||
              rendered.err.find(bad.reported + "\"") != std::string::npos)
      << "render does not name " << bad.reported << "\n"
      << rendered;

  api::Json ds = daemonSet();
  put(ds, bad.inDaemonSet, bad.value);
  const auto applied = serverSideDryRun(ds);
  EXPECT_FALSE(applied.ok()) << "the API server takes what render refuses\n" << applied;
}

INSTANTIATE_TEST_SUITE_P(Issue, BadEmbeddedValue, testing::ValuesIn(badValues()),
                         [](const auto& param) { return param.param.name; });

} // namespace
} // namespace csiop::e2e
