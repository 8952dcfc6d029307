// Validation of spec.rollout: its own fields, the fields only a verified rollout reads, and the
// node plugins' updateStrategy types a verified rollout replaces.
#include <gtest/gtest.h>

#include <string>

#include "validation_cases.hpp"

namespace csiop::api {
namespace {

const std::string kOnlyVerified = ": Forbidden: may only be set with type Verified";
const std::string kNodeCount =
    "must be a number of nodes (at least 1) or a percentage (1% to 100%)";
const std::string kStrategyType = "Forbidden: may not be RollingUpdate or OnDelete with "
                                  "spec.rollout.type Verified: the operator replaces the node "
                                  "plugin pods itself";
const std::string kRollingUpdate = "Forbidden: may not be set with spec.rollout.type Verified: "
                                   "the operator replaces the node plugin pods itself";

TEST(RolloutValidation, AVerifiedRolloutWithEveryFieldIsValid) {
  const auto v = validateWith(R"(
spec:
  node: {updateStrategy: {type: WhenVolumesUnused, whenVolumesUnused: {maxUnavailable: 2}}}
  rollout:
    type: Verified
    canary: {nodes: 3, nodeSelector: {csiop.dev/canary: 'true', topology.kubernetes.io/zone: a}}
    batchSize: 10%
    soakSeconds: 0
    gateTimeoutSeconds: 1
    progressDeadlineSeconds: 1
    onFailure: Hold
    paused: false
)");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
  EXPECT_TRUE(v.warnings.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Rollout, Rule,
    ::testing::Values(
        Case{"EmptyIsValid", "spec: {rollout: {}}", {}},
        Case{"UnverifiedAloneIsValid", "spec: {rollout: {type: Unverified}}", {}},
        Case{
            "TypeEnum",
            "spec: {rollout: {type: verified, batchSize: 2}}",
            {R"(spec.rollout.type: Unsupported value: "verified": supported values: "Unverified", "Verified")"}},
        Case{
            "OnFailureEnum",
            "spec: {rollout: {type: Verified, onFailure: Stop}}",
            {R"(spec.rollout.onFailure: Unsupported value: "Stop": supported values: "Hold", "Rollback")"}},
        Case{"CanaryNodesAtLeastOne",
             "spec: {rollout: {type: Verified, canary: {nodes: 0}}}",
             {"spec.rollout.canary.nodes: Invalid value: 0: must be greater than or equal to 1"}},
        Case{
            "CanaryNodeSelectorLabels",
            "spec: {rollout: {type: Verified, canary: {nodeSelector: {'bad key': a, zone: -c}}}}",
            {R"(spec.rollout.canary.nodeSelector: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'))",
             R"(spec.rollout.canary.nodeSelector[zone]: Invalid value: "-c": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'))"}},
        Case{"BatchSizeOneNode", "spec: {rollout: {type: Verified, batchSize: 1}}", {}},
        Case{"BatchSizeOnePercent", "spec: {rollout: {type: Verified, batchSize: '1%'}}", {}},
        Case{"BatchSizeAll", "spec: {rollout: {type: Verified, batchSize: '100%'}}", {}},
        Case{"BatchSizeZero",
             "spec: {rollout: {type: Verified, batchSize: 0}}",
             {"spec.rollout.batchSize: Invalid value: 0: " + kNodeCount}},
        Case{"BatchSizeNegative",
             "spec: {rollout: {type: Verified, batchSize: -2}}",
             {"spec.rollout.batchSize: Invalid value: -2: " + kNodeCount}},
        Case{"BatchSizeZeroPercent",
             "spec: {rollout: {type: Verified, batchSize: '0%'}}",
             {R"(spec.rollout.batchSize: Invalid value: "0%": )" + kNodeCount}},
        Case{"BatchSizeOverAHundredPercent",
             "spec: {rollout: {type: Verified, batchSize: '101%'}}",
             {R"(spec.rollout.batchSize: Invalid value: "101%": )" + kNodeCount}},
        Case{"BatchSizeHugePercentage",
             "spec: {rollout: {type: Verified, batchSize: '99999999999999999999%'}}",
             {R"(spec.rollout.batchSize: Invalid value: "99999999999999999999%": )" + kNodeCount}},
        Case{"BatchSizeText",
             "spec: {rollout: {type: Verified, batchSize: quarter}}",
             {R"(spec.rollout.batchSize: Invalid value: "quarter": )" + kNodeCount}},
        Case{"BatchSizeNotANumber",
             "spec: {rollout: {type: Verified, batchSize: 2.5}}",
             {"spec.rollout.batchSize: Invalid value: 2.5: " + kNodeCount}},
        // The same rule as WhenVolumesUnused's maxUnavailable (Validator::nodeCount).
        Case{
            "WhenVolumesUnusedMaxUnavailableZeroPercent",
            "spec: {node: {updateStrategy: {type: WhenVolumesUnused, whenVolumesUnused: "
            "{maxUnavailable: '0%'}}}}",
            {R"(spec.node.updateStrategy.whenVolumesUnused.maxUnavailable: Invalid value: "0%": )" +
             kNodeCount}},
        Case{
            "WhenVolumesUnusedMaxUnavailableOverAHundredPercent",
            "spec: {node: {updateStrategy: {type: WhenVolumesUnused, whenVolumesUnused: "
            "{maxUnavailable: '250%'}}}}",
            {R"(spec.node.updateStrategy.whenVolumesUnused.maxUnavailable: Invalid value: "250%": )" +
             kNodeCount}},
        Case{"SmokeVolumeClaim",
             "spec: {rollout: {type: Verified, smokeVolume: {storageClassName: fast, size: 5Gi}}}",
             {}},
        Case{"SmokeVolumeEphemeral",
             "spec: {csiDriver: {volumeLifecycleModes: [Persistent, Ephemeral]}, rollout: {type: "
             "Verified, smokeVolume: {ephemeral: {volumeAttributes: {size: 1Mi}, fsType: ext4}}}}",
             {}},
        Case{"SmokeVolumeNeedsOneKind",
             "spec: {rollout: {type: Verified, smokeVolume: {}}}",
             {"spec.rollout.smokeVolume: Required value: exactly one of storageClassName and "
              "ephemeral"}},
        Case{"SmokeVolumeNotBoth",
             "spec: {csiDriver: {volumeLifecycleModes: [Ephemeral]}, rollout: {type: Verified, "
             "smokeVolume: {storageClassName: fast, ephemeral: {}}}}",
             {"spec.rollout.smokeVolume: Required value: exactly one of storageClassName and "
              "ephemeral"}},
        Case{
            "SmokeVolumeClassName",
            "spec: {rollout: {type: Verified, smokeVolume: {storageClassName: Fast_SSD}}}",
            {R"(spec.rollout.smokeVolume.storageClassName: Invalid value: "Fast_SSD": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'))"}},
        Case{
            "SmokeVolumeSizeQuantity",
            "spec: {rollout: {type: Verified, smokeVolume: {storageClassName: fast, size: lots}}}",
            {R"(spec.rollout.smokeVolume.size: Invalid value: "lots": must be a quantity such as "1Gi")"}},
        Case{"SmokeVolumeSizeOnlyWithAClaim",
             "spec: {csiDriver: {volumeLifecycleModes: [Ephemeral]}, rollout: {type: Verified, "
             "smokeVolume: {size: 1Gi, ephemeral: {}}}}",
             {"spec.rollout.smokeVolume.size: Forbidden: may only be set with storageClassName"}},
        Case{"SmokeVolumeEphemeralNeedsTheMode",
             "spec: {rollout: {type: Verified, smokeVolume: {ephemeral: {}}}}",
             {"spec.rollout.smokeVolume.ephemeral: Forbidden: needs "
              "spec.csiDriver.volumeLifecycleModes to list Ephemeral: the kubelet mounts inline "
              "volumes only of a driver that serves them"}},
        Case{"SmokeVolumeOnlyVerified",
             "spec: {rollout: {smokeVolume: {storageClassName: fast}}}",
             {"spec.rollout.smokeVolume" + kOnlyVerified}},
        Case{"SoakSecondsMayBeZero", "spec: {rollout: {type: Verified, soakSeconds: 0}}", {}},
        Case{"SoakSecondsNotNegative",
             "spec: {rollout: {type: Verified, soakSeconds: -1}}",
             {"spec.rollout.soakSeconds: Invalid value: -1: must be greater than or equal to 0"}},
        Case{"GateTimeoutAtLeastOne",
             "spec: {rollout: {type: Verified, gateTimeoutSeconds: 0}}",
             {"spec.rollout.gateTimeoutSeconds: Invalid value: 0: must be greater than or equal "
              "to 1"}},
        Case{"ProgressDeadlineAtLeastOne",
             "spec: {rollout: {type: Verified, progressDeadlineSeconds: 0}}",
             {"spec.rollout.progressDeadlineSeconds: Invalid value: 0: must be greater than or "
              "equal to 1"}},
        Case{"SoakAtMostAWeek",
             "spec: {rollout: {type: Verified, soakSeconds: 604801}}",
             {"spec.rollout.soakSeconds: Invalid value: 604801: must be less than or equal to "
              "604800"}},
        Case{"GateTimeoutAtMostADay",
             "spec: {rollout: {type: Verified, gateTimeoutSeconds: 9223372036854775807}}",
             {"spec.rollout.gateTimeoutSeconds: Invalid value: 9223372036854775807: must be less "
              "than or equal to 86400"}},
        Case{"ProgressDeadlineAtMostADay",
             "spec: {rollout: {type: Verified, progressDeadlineSeconds: 86401}}",
             {"spec.rollout.progressDeadlineSeconds: Invalid value: 86401: must be less than or "
              "equal to 86400"}},
        Case{"UnverifiedByDefaultTakesNoPolicy",
             "spec: {rollout: {canary: {nodes: 2}, batchSize: 3, soakSeconds: 10, "
             "gateTimeoutSeconds: 10, progressDeadlineSeconds: 10, onFailure: Hold, paused: true}}",
             {"spec.rollout.canary" + kOnlyVerified, "spec.rollout.batchSize" + kOnlyVerified,
              "spec.rollout.soakSeconds" + kOnlyVerified,
              "spec.rollout.gateTimeoutSeconds" + kOnlyVerified,
              "spec.rollout.progressDeadlineSeconds" + kOnlyVerified,
              "spec.rollout.onFailure" + kOnlyVerified, "spec.rollout.paused" + kOnlyVerified}},
        Case{"UnverifiedTakesNotEvenPausedFalse",
             "spec: {rollout: {type: Unverified, paused: false}}",
             {"spec.rollout.paused" + kOnlyVerified}},
        Case{"UnverifiedReportsTheValueToo",
             "spec: {rollout: {type: Unverified, soakSeconds: -1}}",
             {"spec.rollout.soakSeconds: Invalid value: -1: must be greater than or equal to 0",
              "spec.rollout.soakSeconds" + kOnlyVerified}},
        Case{"VerifiedWithoutNodeStrategyIsValid",
             "spec: {rollout: {type: Verified}, node: {updateStrategy: {}}}",
             {}},
        Case{"VerifiedForbidsRollingUpdate",
             "spec: {rollout: {type: Verified}, node: {updateStrategy: {type: RollingUpdate}}}",
             {"spec.node.updateStrategy.type: " + kStrategyType}},
        Case{"VerifiedForbidsOnDelete",
             "spec: {rollout: {type: Verified}, node: {updateStrategy: {type: OnDelete}}}",
             {"spec.node.updateStrategy.type: " + kStrategyType}},
        Case{"VerifiedForbidsRollingUpdateParameters",
             "spec: {rollout: {type: Verified}, node: {updateStrategy: {rollingUpdate: "
             "{maxUnavailable: 2}}}}",
             {"spec.node.updateStrategy.rollingUpdate: " + kRollingUpdate}},
        Case{"UnverifiedKeepsTheDaemonSetStrategy",
             "spec: {rollout: {type: Unverified}, node: {updateStrategy: {type: OnDelete}}, "
             "windowsNode: {updateStrategy: {type: OnDelete}}}",
             {}},
        Case{"VerifiedForbidsWindowsRollingUpdate",
             "spec: {rollout: {type: Verified}, windowsNode: {updateStrategy: {type: "
             "RollingUpdate, rollingUpdate: {maxUnavailable: 1}}}}",
             {"spec.windowsNode.updateStrategy.type: " + kStrategyType,
              "spec.windowsNode.updateStrategy.rollingUpdate: " + kRollingUpdate}},
        Case{"VerifiedIgnoresADisabledWindowsNodePlugin",
             "spec: {rollout: {type: Verified}, windowsNode: {enabled: false, updateStrategy: "
             "{type: OnDelete}}}",
             {}}));

} // namespace
} // namespace csiop::api
