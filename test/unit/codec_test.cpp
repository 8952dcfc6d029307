#include <gtest/gtest.h>

#include <csiop/api/codec.hpp>
#include <csiop/api/yaml.hpp>

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
