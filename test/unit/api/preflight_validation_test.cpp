// Settings known to break a CSI plugin, refused (or warned about) with the reason.
#include <gtest/gtest.h>

#include "validation_cases.hpp"

namespace csiop::api {
namespace {

const std::string kSurge =
    "must be 0 for a node plugin: a surged pod runs beside the old one on its node, and the "
    "kubelet does not keep two plugins of one CSI driver side by side (each registers over the "
    "other); use maxUnavailable";

std::string probeTimeout(const std::string& given, int timeoutSeconds) {
  return "livenessprobe's --probe-timeout (" + given +
         ") and the driver's livenessProbe timeoutSeconds (" + std::to_string(timeoutSeconds) +
         "): --probe-timeout must not be longer, or a slow Probe call outlasts the kubelet's "
         "probe, the probes pile up and a healthy plugin is restarted";
}

INSTANTIATE_TEST_SUITE_P(
    Preflight, Rule,
    ::testing::Values(
        Case{"NodeMaxSurge",
             "spec: {node: {updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, "
             "maxUnavailable: 0}}}}",
             {"spec.node.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: " + kSurge}},
        Case{
            "NodeMaxSurgePercent",
            "spec: {node: {updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: "
            "'10%'}}}}",
            {"spec.node.updateStrategy.rollingUpdate.maxSurge: Invalid value: \"10%\": " + kSurge}},
        Case{"WindowsNodeMaxSurge",
             "spec: {windowsNode: {driver: {image: example.com/driver:v1-windows}, "
             "updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}}",
             {"spec.windowsNode.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: " +
              kSurge}},
        Case{"ProbeTimeoutAboveTheKubeletsTimeout",
             "spec: {node: {livenessProbe: {timeoutSeconds: 3, args: ['--v=2', "
             "'--probe-timeout=4s']}}}",
             {"spec.node.livenessProbe.args[1]: Invalid value: \"--probe-timeout=4s\": " +
              probeTimeout("4s", 3)}},
        Case{"ProbeTimeoutAboveTheDefaultTimeout",
             "spec: {controller: {livenessProbe: {args: ['--probe-timeout', '5s']}}}",
             {"spec.controller.livenessProbe.args[0]: Invalid value: \"--probe-timeout\": " +
              probeTimeout("5s", 3)}},
        Case{"WindowsProbeTimeoutAboveTimeout",
             "spec: {windowsNode: {driver: {image: example.com/driver:v1-windows}, "
             "livenessProbe: {timeoutSeconds: 2, args: ['--probe-timeout=2500ms']}}}",
             {"spec.windowsNode.livenessProbe.args[0]: Invalid value: "
              "\"--probe-timeout=2500ms\": " +
              probeTimeout("2500ms", 2)}},
        Case{"ProbeTimeoutNotADuration",
             "spec: {node: {livenessProbe: {args: ['--probe-timeout=soon']}}}",
             {"spec.node.livenessProbe.args[0]: Invalid value: \"--probe-timeout=soon\": "
              "--probe-timeout must be a duration, e.g. 2s"}}),
    [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.name); });
// (Rule and its test: validation_test.cpp)

TEST(Preflight, SafeSettingsPass) {
  const auto v = validateWith(R"(
spec:
  node:
    updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: '10%'}}
    livenessProbe: {timeoutSeconds: 5, args: ['--probe-timeout=4s']}
  controller:
    strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}
    livenessProbe: {timeoutSeconds: 2}
)");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
  EXPECT_TRUE(v.warnings.empty());
  // A disabled livenessprobe has no timeout to compare.
  EXPECT_TRUE(
      validateWith("spec: {node: {livenessProbe: {enabled: false, timeoutSeconds: 1}}}").ok());
}

TEST(Preflight, AProbeTimeoutEqualToTheKubeletsIsWarnedAbout) {
  // aws-ebs-csi-driver's controller and csi-driver-smb's Windows node ship it so.
  auto v = validateWith("spec: {controller: {livenessProbe: {timeoutSeconds: 60, "
                        "args: ['--probe-timeout=60s']}}}");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
  EXPECT_EQ(v.warnings,
            std::vector<std::string>{
                "spec.controller.livenessProbe.args[0]: livenessprobe's --probe-timeout (60s) and "
                "the driver's livenessProbe timeoutSeconds (60) are equal: a slow Probe call may "
                "outlast the kubelet's probe; make --probe-timeout the shorter"});
  // livenessprobe's default of 1s against a probe timeout of 1s.
  v = validateWith("spec: {node: {livenessProbe: {timeoutSeconds: 1}}}");
  EXPECT_TRUE(v.ok());
  ASSERT_EQ(v.warnings.size(), 1U);
  EXPECT_NE(v.warnings[0].find("spec.node.livenessProbe.timeoutSeconds: livenessprobe's "
                               "--probe-timeout (1s (livenessprobe's default)) and"),
            std::string::npos)
      << v.warnings[0];
}

TEST(Preflight, ANodePluginWithoutAPriorityClassIsWarnedAbout) {
  const auto v = validateWith(R"(spec: {node: {priorityClassName: ""}})");
  EXPECT_TRUE(v.ok());
  ASSERT_EQ(v.warnings.size(), 1U);
  EXPECT_NE(v.warnings[0].find("spec.node.priorityClassName is empty: the node plugin's pods run "
                               "at the priority of ordinary pods and cannot preempt one"),
            std::string::npos)
      << v.warnings[0];
}

} // namespace
} // namespace csiop::api
