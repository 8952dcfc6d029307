// The embedded Kubernetes objects of a DriverDeployment checked against Kubernetes' own schema
// (api/schema/kubernetes.json): the messages, the field paths as the user wrote them, unknown
// fields under each --validate, and the schema subset's own rules. e2e.kube_schema compares the
// file with what the pinned API server serves and has the API server refuse the same values.
#include <gtest/gtest.h>

#include <csiop/api/codec.hpp>
#include <csiop/api/embedded_fields.hpp>
#include <csiop/api/kube_schema.hpp>
#include <csiop/api/load.hpp>

namespace csiop::api {
namespace {

const char* kHead = R"(
apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec:
  driverName: demo.csi.example.com
)";

Loaded load(const std::string& spec, UnknownFields unknown = UnknownFields::Strict) {
  return loadDriverDeployments(std::string(kHead) + spec, unknown);
}

std::vector<std::string> errorsOf(const std::string& spec) {
  return load(spec).errors;
}

std::string at(const std::string& message) {
  return "DriverDeployment \"demo\": " + message;
}

TEST(KubeSchema, HoldsEveryDefinitionTheEmbeddedFieldsName) {
  const KubeSchema& schema = embeddedKubeSchema();
  EXPECT_FALSE(schema.kubernetesVersion().empty());
  for (const auto& root : embeddedDefinitionRoots()) {
    EXPECT_TRUE(schema.has(root)) << root;
  }
}

// A field the codec keeps as raw JSON is either checked against a Kubernetes definition here, or
// is the object's metadata (the API server's own) or a node plugin's updateStrategy (the
// operator's extension, in the CRD's schema): a new one cannot slip through unchecked.
void jsonLeaves(const Json& tree, const std::string& parent,
                std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& [key, sub] : tree.items()) {
    if (sub.is_object() && sub.contains("[]")) {
      jsonLeaves(sub["[]"], parent + (parent.empty() ? "" : ".") + key + "[]", out);
    } else if (sub.is_object()) {
      jsonLeaves(sub, parent + (parent.empty() ? "" : ".") + key, out);
    } else if (sub == "json") {
      out.emplace_back(parent, key);
    }
  }
}

TEST(KubeSchema, EveryRawJsonFieldHasAKubernetesDefinition) {
  std::vector<std::pair<std::string, std::string>> leaves;
  jsonLeaves(fieldTree(), "", leaves);
  ASSERT_GT(leaves.size(), 100U);
  for (const auto& [parent, leaf] : leaves) {
    const std::string definition = embeddedDefinition(parent, leaf);
    if ((parent.empty() && leaf == "metadata") || leaf == "updateStrategy") {
      EXPECT_EQ(definition, "");
    } else {
      EXPECT_NE(definition, "") << parent << "." << leaf;
    }
  }
  EXPECT_EQ(embeddedDefinition("spec.node", "securityContext"),
            "io.k8s.api.core.v1.PodSecurityContext");
  EXPECT_EQ(embeddedDefinition("spec.node.driver", "securityContext"),
            "io.k8s.api.core.v1.SecurityContext");
  EXPECT_EQ(embeddedDefinition("spec.services[]", "ports"), "io.k8s.api.core.v1.ServiceSpec/ports");
  EXPECT_EQ(embeddedDefinition("spec.driver", "ports"), "io.k8s.api.core.v1.Container/ports");
}

struct Bad {
  std::string name;
  std::string spec;
  std::vector<std::string> errors;
};

void PrintTo(const Bad& bad, std::ostream* os) {
  *os << bad.name;
}

class EmbeddedValue : public testing::TestWithParam<Bad> {};

TEST_P(EmbeddedValue, IsRefusedAtTheFieldTheUserWrote) {
  std::vector<std::string> expected;
  for (const auto& e : GetParam().errors) {
    expected.push_back(at(e));
  }
  EXPECT_EQ(errorsOf(GetParam().spec), expected);
}

INSTANTIATE_TEST_SUITE_P(
    Issue, EmbeddedValue,
    testing::Values(
        Bad{"HostPathPathNumber",
            "  driver: {image: d, volumes: [{name: data, hostPath: {path: 123}}]}\n",
            {"spec.driver.volumes[0].hostPath.path: Invalid value: 123: "
             "spec.driver.volumes[0].hostPath.path in body must be of type string: \"integer\""}},
        Bad{"CapabilitiesAddString",
            "  driver: {image: d}\n"
            "  node: {driver: {securityContext: {privileged: true, capabilities: {add: "
            "SYS_ADMIN}}}}\n",
            {"spec.node.driver.securityContext.capabilities.add: Invalid value: \"SYS_ADMIN\": "
             "spec.node.driver.securityContext.capabilities.add in body must be of type array: "
             "\"string\""}},
        Bad{"PreStopCommandString",
            "  driver: {image: d, lifecycle: {preStop: {exec: {command: 'rm -f "
            "/csi/csi.sock'}}}}\n",
            {"spec.driver.lifecycle.preStop.exec.command: Invalid value: \"rm -f /csi/csi.sock\": "
             "spec.driver.lifecycle.preStop.exec.command in body must be of type array: "
             "\"string\""}},
        Bad{"MisspelledSecurityField",
            "  driver: {image: d, securityContext: {privileged: true, allowPrivilegeEscalaton: "
            "true}}\n",
            {"unknown field \"spec.driver.securityContext.allowPrivilegeEscalaton\""}},
        Bad{"PullPolicyOfAnExtraContainer",
            "  driver: {image: d}\n"
            "  node: {extraContainers: [{name: x, image: x, imagePullPolicy: Sometimes}]}\n",
            {"spec.node.extraContainers[0].imagePullPolicy: Unsupported value: \"Sometimes\": "
             "supported values: \"Always\", \"IfNotPresent\", \"Never\""}},
        Bad{"MisspelledMountPath",
            "  driver: {image: d, volumes: [{name: data, emptyDir: {}}],\n"
            "           volumeMounts: [{name: data, mountPth: /data}]}\n",
            {"unknown field \"spec.driver.volumeMounts[0].mountPth\"",
             "spec.driver.volumeMounts[0].mountPath: Required value"}},
        Bad{"TolerationSecondsString",
            "  driver: {image: d}\n"
            "  node: {tolerations: [{operator: Exists, tolerationSeconds: '30'}]}\n",
            {"spec.node.tolerations[0].tolerationSeconds: Invalid value: \"30\": "
             "spec.node.tolerations[0].tolerationSeconds in body must be of type integer: "
             "\"string\""}},
        Bad{"QuantityMalformed",
            "  driver: {image: d, resources: {limits: {memory: 1Gz}}}\n",
            {"spec.driver.resources.limits[memory]: Invalid value: \"1Gz\": quantities must match "
             "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"}},
        Bad{"ProbeTimingBeyond32Bits",
            "  driver: {image: d, readinessProbe: {tcpSocket: {port: 9808}, periodSeconds: "
            "3000000000}}\n",
            {"spec.driver.readinessProbe.periodSeconds: Invalid value: 3000000000: must fit in "
             "32 bits"}},
        Bad{"ProbePortMissing",
            "  driver: {image: d, readinessProbe: {httpGet: {path: /healthz}}}\n",
            {"spec.driver.readinessProbe.httpGet.port: Required value"}},
        Bad{"StatefulSetStrategyOfADeployment",
            "  driver: {image: d}\n"
            "  controller: {kind: StatefulSet, strategy: {type: RollingUpdate, rollingUpdate: "
            "{maxSurge: 1}}}\n",
            {"unknown field \"spec.controller.strategy.rollingUpdate.maxSurge\""}},
        Bad{"CompanionConfigMapValueNumber",
            "  driver: {image: d}\n"
            "  objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: 1}}]\n",
            {"spec.objects[0].data[a]: Invalid value: 1: spec.objects[0].data[a] in body must be "
             "of type string: \"integer\""}},
        Bad{"StorageClassTopologyValuesString",
            "  driver: {image: d}\n"
            "  storageClasses: [{name: s, allowedTopologies: [{matchLabelExpressions: "
            "[{key: k, values: v}]}]}]\n",
            {"spec.storageClasses[0].allowedTopologies[0].matchLabelExpressions[0].values: "
             "Invalid value: \"v\": spec.storageClasses[0].allowedTopologies[0]."
             "matchLabelExpressions[0].values in body must be of type array: \"string\""}}),
    [](const auto& param) { return param.param.name; });

TEST(KubeSchema, UnknownEmbeddedFieldsFollowValidate) {
  const std::string spec =
      "  driver: {image: d, securityContext: {privileged: true, allowPrivilegeEscalaton: true}}\n";
  const std::string field = "spec.driver.securityContext.allowPrivilegeEscalaton";

  const Loaded strict = load(spec, UnknownFields::Strict);
  EXPECT_EQ(strict.errors, std::vector<std::string>{at("unknown field \"" + field + "\"")});

  const Loaded warn = load(spec, UnknownFields::Warn);
  ASSERT_TRUE(warn.ok()) << warn.errors.front();
  ASSERT_FALSE(warn.warnings.empty());
  EXPECT_EQ(warn.warnings.front(), at("unknown field \"" + field + "\" (ignored)"));
  // Pruned, as the API server prunes it from the DaemonSet.
  EXPECT_EQ(*warn.objects.front().spec.driver.securityContext, Json({{"privileged", true}}));

  const Loaded ignore = load(spec, UnknownFields::Ignore);
  ASSERT_TRUE(ignore.ok());
  for (const auto& w : ignore.warnings) {
    EXPECT_EQ(w.find("unknown field"), std::string::npos) << w;
  }
  EXPECT_EQ(*ignore.objects.front().spec.driver.securityContext, Json({{"privileged", true}}));
}

TEST(KubeSchema, TheSchemaInUseIsTheServersOnceReadAndTheBuiltInOneOtherwise) {
  EXPECT_EQ(embeddedKubeSchemaVersion(), embeddedKubeSchema().kubernetesVersion());
  EXPECT_EQ(embeddedKubeSchemaVersion().rfind("v1.", 0), 0u);
  EXPECT_EQ(kubeSchemaInUse().get(), &embeddedKubeSchema());
  const std::string spec = "  driver: {image: d, securityContext: {privileged: true, "
                           "appArmorProfile: {type: RuntimeDefault}}}\n";
  EXPECT_TRUE(load(spec).ok());
  // An older server's schema, whose SecurityContext has no appArmorProfile yet.
  Json subset = Json::parse(embeddedKubeSchemaText());
  subset["kubernetesVersion"] = "v1.29.0";
  subset["definitions"]["io.k8s.api.core.v1.SecurityContext"]["properties"].erase(
      "appArmorProfile");
  useKubeSchema(std::make_shared<const KubeSchema>(KubeSchema::fromSubset(subset)));
  EXPECT_EQ(kubeSchemaInUse()->kubernetesVersion(), "v1.29.0");
  EXPECT_EQ(load(spec).errors,
            std::vector<std::string>{
                at("unknown field \"spec.driver.securityContext.appArmorProfile\"")});
  const Loaded pruned = load(spec, UnknownFields::Ignore);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(*pruned.objects.front().spec.driver.securityContext, Json({{"privileged", true}}))
      << "not sent to a server that does not have it";
  useKubeSchema(nullptr);
  EXPECT_EQ(kubeSchemaInUse().get(), &embeddedKubeSchema());
  EXPECT_TRUE(load(spec).ok());
}

TEST(KubeSchema, AFieldIsReportedOnceInKubernetesWords) {
  // The operator's own rule about containers' names would report the missing name too.
  const auto errors =
      errorsOf("  driver: {image: d}\n  node: {initContainers: [{image: busybox}]}\n");
  EXPECT_EQ(errors,
            std::vector<std::string>{at("spec.node.initContainers[0].name: Required value")});
}

TEST(KubeSchema, DuplicateListKeysAreRefusedAsServerSideApplyRefusesThem) {
  EXPECT_EQ(errorsOf("  driver: {image: d, env: [{name: A, value: '1'}, {name: A, value: '2'}]}\n"),
            std::vector<std::string>{at("spec.driver.env[1]: Duplicate value: {\"name\":\"A\"}")});
}

TEST(KubeSchema, APodTemplatePatchMayLeaveOutRequiredFieldsAndCarryDirectives) {
  const Loaded ok = load("  driver: {image: d}\n"
                         "  node:\n"
                         "    podTemplatePatch:\n"
                         "      spec:\n"
                         "        containers: [{name: csi-driver, $patch: delete}]\n"
                         "        volumes: [{$patch: replace}]\n");
  EXPECT_TRUE(ok.ok()) << ok.errors.front();
  EXPECT_EQ(errorsOf("  driver: {image: d}\n"
                     "  node: {podTemplatePatch: {spec: {hostNetwrok: true}}}\n"),
            std::vector<std::string>{
                at("unknown field \"spec.node.podTemplatePatch.spec.hostNetwrok\"")});
}

TEST(KubeSchema, ObjectsOfKindsWithoutASchemaHereAreLeftToTheApiServer) {
  const Loaded ok = loadDriverDeployments(
      std::string(kHead) + "  driver: {image: d}\n"
                           "  objects: [{apiVersion: monitoring.coreos.com/v1, kind: "
                           "ServiceMonitor, metadata: {name: m}, spec: {anything: 1}}]\n",
      UnknownFields::Strict, [](const DriverDeployment&) { return ErrorList{}; });
  // Refused only for its kind (no Check allows it here), not for its fields.
  for (const auto& e : ok.errors) {
    EXPECT_EQ(e.find("anything"), std::string::npos) << e;
  }
}

TEST(KubeSchema, AHostileDocumentIsBoundedAndEveryUnknownFieldPruned) {
  std::string fields;
  for (int i = 0; i < 500; ++i) {
    fields += "f" + std::to_string(i) + ": 1, ";
  }
  std::string env;
  for (int i = 0; i < 200; ++i) {
    env += "{name: E" + std::to_string(i) + ", value: " + std::to_string(i) + "}, ";
  }
  const Loaded ignore =
      load("  driver: {image: d, securityContext: {" + fields + "privileged: true}}\n",
           UnknownFields::Ignore);
  ASSERT_TRUE(ignore.ok());
  EXPECT_EQ(*ignore.objects.front().spec.driver.securityContext, Json({{"privileged", true}}));

  const Loaded wrong = load("  driver: {image: d, env: [" + env + "]}\n");
  ASSERT_EQ(wrong.errors.size(), 51U);
  EXPECT_EQ(wrong.errors.back(), at("and 150 more problems in embedded Kubernetes objects"));
}

TEST(KubeSchemaSubset, NormalizesReferencesAndUnionsAndRefusesWhatItCannotRead) {
  const Json doc = Json::parse(R"({"components": {"schemas": {
    "A": {"type": "object", "description": "d", "required": ["b"],
          "properties": {"b": {"allOf": [{"$ref": "#/components/schemas/B"}], "default": {}},
                         "n": {"oneOf": [{"type": "integer"}, {"type": "string"}]}}},
    "B": {"type": "string", "enum": ["x", "y"]},
    "Unused": {"type": "string"}}}})");
  const Json subset = kubeSchemaSubset({doc}, {"A"}, "v0.0.0");
  EXPECT_EQ(subset, Json::parse(R"({"kubernetesVersion": "v0.0.0", "definitions": {
    "A": {"type": "object", "required": ["b"],
          "properties": {"b": {"$ref": "B"}, "n": {"type": "int-or-string"}}},
    "B": {"type": "string", "enum": ["x", "y"]}}})"));
  EXPECT_THROW(kubeSchemaSubset({doc}, {"Missing"}, "v0"), std::invalid_argument);

  const KubeSchema schema = KubeSchema::fromSubset(subset);
  SchemaFindings found;
  schema.check(Json::parse(R"({"b": "z", "n": 1.5, "c": 1})"), "A", "a", Json::json_pointer(),
               false, found);
  ASSERT_EQ(found.errors.size(), 2U);
  EXPECT_EQ(found.errors[0].message(),
            "a.b: Unsupported value: \"z\": supported values: \"x\", \"y\"");
  EXPECT_EQ(found.errors[1].message(),
            "a.n: Invalid value: 1.5: a.n in body must be of type integer or string: \"number\"");
  EXPECT_EQ(found.unknownFields, std::vector<std::string>{"a.c"});
  EXPECT_THROW(KubeSchema::fromSubset(Json::object()), std::invalid_argument);
  EXPECT_THROW(KubeSchema::fromSubset(Json::parse(
                   R"({"kubernetesVersion": "v", "definitions": {"A": {"$ref": "Missing"}}})")),
               std::invalid_argument);
}

} // namespace
} // namespace csiop::api
