// spec.startupTaint: its key, and the tolerations the node plugins get for it.
#include <gtest/gtest.h>

#include <string>

#include <csiop/api/defaults.hpp>

#include "validation_cases.hpp"

namespace csiop::api {
namespace {

const std::string kManaged = "spec.startupTaint.key: Invalid value: ";

INSTANTIATE_TEST_SUITE_P(
    StartupTaint, Rule,
    ::testing::Values(
        Case{
            "AKeyOfItsOwnDomain", "spec: {startupTaint: {key: example.com/storage-not-ready}}", {}},
        Case{"ANodeReadinessControllerKey",
             "spec: {startupTaint: {key: readiness.k8s.io/hostpath-registered}}",
             {}},
        Case{"AKeyWithoutPrefix", "spec: {startupTaint: {key: storage-not-ready}}", {}},
        Case{"KeyRequired",
             "spec: {startupTaint: {key: ''}}",
             {"spec.startupTaint.key: Required value"}},
        Case{
            "AQualifiedName",
            "spec: {startupTaint: {key: 'not a key'}}",
            {R"(spec.startupTaint.key: Invalid value: "not a key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'))"}},
        Case{
            "NotTheNodeLifecycleControllers",
            "spec: {startupTaint: {key: node.kubernetes.io/not-ready}}",
            {kManaged +
             R"("node.kubernetes.io/not-ready": a taint Kubernetes manages (node.kubernetes.io/): the operator would remove it; use a key of your own domain or readiness.k8s.io/)"}},
        Case{
            "NotTheCloudProviders",
            "spec: {startupTaint: {key: node.cloudprovider.kubernetes.io/uninitialized}}",
            {kManaged +
             R"("node.cloudprovider.kubernetes.io/uninitialized": a taint Kubernetes manages (node.cloudprovider.kubernetes.io/): the operator would remove it; use a key of your own domain or readiness.k8s.io/)"}},
        Case{
            "NotK8sIo",
            "spec: {startupTaint: {key: k8s.io/x}}",
            {kManaged +
             R"("k8s.io/x": a taint Kubernetes manages (k8s.io/): the operator would remove it; use a key of your own domain or readiness.k8s.io/)"}}),
    [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.name); });

// The base DriverDeployment of the validation cases with `patchYaml` merged, resolved.
Effective resolveWith(const std::string& patchYaml) {
  return resolve(decode(mergePatch(parseYaml(kBase)[0], parseYaml(patchYaml)[0])).object);
}

TEST(StartupTaintDefaults, TheNodePluginsTolerateTheTaintTheyLift) {
  const Effective byDefault = resolveWith(R"(
spec:
  startupTaint: {key: example.com/storage-not-ready}
  windowsNode: {}
)");
  EXPECT_EQ(byDefault.startupTaint, "example.com/storage-not-ready");
  EXPECT_EQ(byDefault.node.tolerations, Json::array({{{"operator", "Exists"}}}))
      << "the default tolerates every taint already";

  const Effective own = resolveWith(R"(
spec:
  startupTaint: {key: example.com/storage-not-ready}
  node: {tolerations: [{key: example.com/storage-not-ready, operator: Exists, effect: NoExecute}]}
  windowsNode: {tolerations: []}
)");
  const Json added = {{"key", "example.com/storage-not-ready"}, {"operator", "Exists"}};
  EXPECT_EQ(own.node.tolerations.size(), 2u) << own.node.tolerations.dump();
  EXPECT_EQ(own.node.tolerations.back(), added) << "one effect only does not tolerate it all";
  ASSERT_TRUE(own.windowsNode);
  EXPECT_EQ(own.windowsNode->tolerations, Json::array({added}));
}

TEST(StartupTaintDefaults, WhatToleratesEveryTaintOfAKey) {
  EXPECT_TRUE(toleratesEveryTaintOf(Json::parse(R"([{"operator": "Exists"}])"), "k"));
  EXPECT_TRUE(toleratesEveryTaintOf(Json::parse(R"([{"key": "k", "operator": "Exists"}])"), "k"));
  EXPECT_FALSE(toleratesEveryTaintOf(Json::parse(R"([{"key": "j", "operator": "Exists"}])"), "k"));
  EXPECT_FALSE(toleratesEveryTaintOf(
      Json::parse(R"([{"key": "k", "operator": "Equal", "value": "x"}])"), "k"));
  EXPECT_FALSE(toleratesEveryTaintOf(
      Json::parse(R"([{"operator": "Exists", "effect": "NoSchedule"}])"), "k"));
  EXPECT_FALSE(toleratesEveryTaintOf(Json::array(), "k"));
}

} // namespace
} // namespace csiop::api
