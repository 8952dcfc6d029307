#include <gtest/gtest.h>

#include <csiop/api/codec.hpp>

#include <csiop/api/yaml.hpp>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>

namespace csiop::api {
namespace {

TEST(Codec, DecodesAndEncodesLosslessly) {
  const Json in = parseYaml(R"(
apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: x, uid: abc, generation: 3, labels: {a: b}}
spec:
  driverName: x.example.com
  csiDriver: {attachRequired: false, volumeLifecycleModes: [], tokenRequests: [{audience: a, expirationSeconds: 3600}]}
  driver: {image: img, env: [{name: A, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]}
  node: {nodeSelector: {}, tolerations: []}
status: {observedGeneration: 2, conditions: [{type: Ready, status: "True", lastTransitionTime: "2026-01-01T00:00:00Z", reason: R, message: M}]}
)")[0];
  const Decoded d = decode(in);
  EXPECT_TRUE(d.errors.empty());
  EXPECT_TRUE(d.unknownFields.empty());
  EXPECT_EQ(d.object.name(), "x");
  EXPECT_EQ(d.object.uid(), "abc");
  EXPECT_EQ(d.object.generation(), 3);
  EXPECT_EQ(encode(d.object), in);
}

TEST(Codec, PrunesAndReportsUnknownFields) {
  const Decoded d = decode(Json::parse(R"({"apiVersion": "csiop.dev/v1alpha1",
    "kind": "DriverDeployment", "spec": {"driverName": "a", "drivr": {}, "node": {"kubletDir": "/x"}}})"));
  EXPECT_EQ(d.unknownFields, (std::vector<std::string>{"spec.drivr", "spec.node.kubletDir"}));
  EXPECT_FALSE(encode(d.object)["spec"].contains("drivr"));
}

TEST(Codec, ReportsTypeErrorsWithPaths) {
  const Decoded d = decode(Json::parse(R"({"spec": {"driverName": 5,
    "controller": {"replicas": "two", "provisioner": {"enabled": "yes"}},
    "storageClasses": [{"name": "a"}, {"name": ["b"]}]}})"));
  std::vector<std::string> messages;
  for (const auto& e : d.errors) {
    messages.push_back(e.message());
  }
  EXPECT_EQ(
      messages,
      (std::vector<std::string>{
          R"(spec.driverName: Invalid value: 5: spec.driverName in body must be of type string: "integer")",
          R"(spec.controller.replicas: Invalid value: "two": spec.controller.replicas in body must be of type integer: "string")",
          R"(spec.controller.provisioner.enabled: Invalid value: "yes": spec.controller.provisioner.enabled in body must be of type boolean: "string")",
          R"(spec.storageClasses[1].name: Invalid value: ["b"]: spec.storageClasses[1].name in body must be of type string: "array")",
      }));
}

TEST(Codec, TreatsNullAsAbsent) {
  const Decoded d = decode(Json::parse(R"({"spec": {"driverName": "a", "controller": null}})"));
  EXPECT_TRUE(d.errors.empty());
  EXPECT_FALSE(d.object.spec.controller.has_value());
}

TEST(Codec, RejectsOutOfRangeIntegers) {
  const Decoded d = decode(Json::parse(R"({"spec": {"controller": {"replicas": 4294967296}}})"));
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_EQ(d.errors[0].field, "spec.controller.replicas");
}

} // namespace
} // namespace csiop::api

namespace csiop::api {
namespace {

// Every leaf path of the codec's field tree (lists of structs as "[]").
void leafPaths(const Json& tree, const std::string& at, std::set<std::string>& out) {
  if (tree.is_object() && tree.contains("[]")) {
    leafPaths(tree["[]"], at + "[]", out);
  } else if (tree.is_object()) {
    for (const auto& [k, v] : tree.items()) {
      leafPaths(v, at.empty() ? k : at + "." + k, out);
    }
  } else {
    out.insert(at);
  }
}

void presentPaths(const Json& doc, const Json& tree, const std::string& at,
                  std::set<std::string>& out) {
  if (!tree.is_object()) {
    out.insert(at);
    return;
  }
  if (tree.contains("[]")) {
    for (const auto& item : doc) {
      presentPaths(item, tree["[]"], at + "[]", out);
    }
    return;
  }
  for (const auto& [k, v] : tree.items()) {
    if (doc.contains(k)) {
      presentPaths(doc[k], v, at.empty() ? k : at + "." + k, out);
    }
  }
}

TEST(Codec, AllFieldsFileSetsEveryFieldAndRoundTrips) {
  std::ifstream in(std::string(CSIOP_SOURCE_DIR) + "/test/unit/api/testdata/all-fields.yaml");
  const Json doc = parseYaml(std::string(std::istreambuf_iterator<char>(in), {})).at(0);
  // Struct types that appear at several places count once: every sidecar is a
  // Sidecar, every driver override a DriverContainer, and so on.
  const auto byType = [](const std::set<std::string>& paths) {
    const std::vector<std::pair<std::regex, std::string>> rules = {
        {std::regex("(provisioner|attacher|resizer|snapshotter|healthMonitor)"), "<sidecar>"},
        {std::regex("^spec\\.(node|controller|windowsNode)\\.driver"), "spec.driver"},
        {std::regex("^spec\\.(node|controller|windowsNode)\\.livenessProbe"), "<probe>"},
        {std::regex("^spec\\.windowsNode\\.registrar"), "spec.node.registrar"},
        {std::regex("^status\\.rollout\\.windowsNode"), "status.rollout.node"},
        {std::regex("^spec\\.controller(\\.<sidecar>)?\\.leaderElection"), "<leaderElection>"},
    };
    std::set<std::string> out;
    for (std::string p : paths) {
      for (const auto& [re, to] : rules) {
        p = std::regex_replace(p, re, to);
      }
      out.insert(p);
    }
    return out;
  };
  std::set<std::string> leaves;
  std::set<std::string> set;
  leafPaths(fieldTree(), "", leaves);
  presentPaths(doc, fieldTree(), "", set);
  const std::set<std::string> all = byType(leaves);
  const std::set<std::string> present = byType(set);
  std::vector<std::string> missing;
  std::set_difference(all.begin(), all.end(), present.begin(), present.end(),
                      std::back_inserter(missing));
  EXPECT_TRUE(missing.empty()) << "all-fields.yaml lacks " << ::testing::PrintToString(missing);

  const Decoded d = decode(doc);
  EXPECT_TRUE(d.errors.empty()) << joinMessages(d.errors);
  EXPECT_TRUE(d.unknownFields.empty());
  // JSON objects are unordered (string maps come back sorted).
  const nlohmann::json expected = nlohmann::json::parse(doc.dump());
  EXPECT_EQ(nlohmann::json::parse(encode(d.object).dump()), expected);
  EXPECT_EQ(nlohmann::json::parse(parseYaml(toYaml(encode(d.object))).at(0).dump()), expected);
}

} // namespace
} // namespace csiop::api
