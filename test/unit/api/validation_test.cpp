// One case per validation rule: a change to a valid DriverDeployment and the
// exact message(s) the change must produce.
#include <gtest/gtest.h>

#include <csiop/api/codec.hpp>
#include <csiop/api/validation.hpp>
#include <csiop/api/yaml.hpp>

#include "validation_cases.hpp"

namespace csiop::api {
namespace {

TEST(Validation, BaseIsValid) {
  const auto v = validateWith("");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
  EXPECT_TRUE(v.warnings.empty());
}

TEST_P(Rule, ReportsExactlyItsErrors) {
  const Case& c = GetParam();
  EXPECT_EQ(messages(validateWith(c.patch)), c.expected);
}

const char* kLabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

std::string label(const std::string& field, const std::string& value) {
  return field + ": Invalid value: \"" + value + "\": " + kLabelMsg;
}

INSTANTIATE_TEST_SUITE_P(
    Api, Rule,
    ::testing::
        Values(
            Case{
                "WrongApiVersion",
                "apiVersion: csiop.dev/v1",
                {R"(apiVersion: Unsupported value: "csiop.dev/v1": supported values: "csiop.dev/v1alpha1")"}},
            Case{"WrongKind",
                 "kind: Driver",
                 {R"(kind: Unsupported value: "Driver": supported values: "DriverDeployment")"}},
            Case{"NameRequired",
                 "metadata: {name: null}",
                 {"metadata.name: Required value: name is required"}},
            Case{"NameIsDns1123Label",
                 "metadata: {name: Demo_1}",
                 {label("metadata.name", "Demo_1")}},
            Case{"NameAtMost40",
                 "metadata: {name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}",
                 {R"(metadata.name: Too long: may not be more than 40 bytes)"}},
            Case{"DriverNameRequired",
                 "spec: {driverName: null}",
                 {"spec.driverName: Required value"}},
            Case{"DriverNameAtMost63",
                 "spec: {driverName: "
                 "a123456789a123456789a123456789a123456789a123456789a123456789.com}",
                 {"spec.driverName: Too long: may not be more than 63 bytes"}},
            Case{
                "DriverNameIsSubdomain",
                "spec: {driverName: -bad.example.com}",
                {R"(spec.driverName: Invalid value: "-bad.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'))"}},
            Case{
                "NamespaceIsLabel", "spec: {namespace: My.NS}", {label("spec.namespace", "My.NS")}},
            Case{"DriverImageRequired",
                 "spec: {driver: {image: null}}",
                 {"spec.driver.image: Required value"}},
            Case{
                "DriverImageNoWhitespace",
                "spec: {driver: {image: 'a b'}}",
                {R"(spec.driver.image: Invalid value: "a b": must be a non-empty image reference without whitespace)"}},
            Case{
                "PullPolicyEnum",
                "spec: {driver: {imagePullPolicy: Sometimes}}",
                {R"(spec.driver.imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never")"}},
            Case{
                "FsGroupPolicyEnum",
                "spec: {csiDriver: {fsGroupPolicy: Foo}}",
                {R"(spec.csiDriver.fsGroupPolicy: Unsupported value: "Foo": supported values: "File", "None", "ReadWriteOnceWithFSType")"}},
            Case{
                "LifecycleModesEnum",
                "spec: {csiDriver: {volumeLifecycleModes: [Persistent, Temporary]}}",
                {R"(spec.csiDriver.volumeLifecycleModes[1]: Unsupported value: "Temporary": supported values: "Ephemeral", "Persistent")"}},
            Case{"LifecycleModesUnique",
                 "spec: {csiDriver: {volumeLifecycleModes: [Persistent, Persistent]}}",
                 {R"(spec.csiDriver.volumeLifecycleModes[1]: Duplicate value: "Persistent")"}},
            Case{"AudiencesDistinct",
                 "spec: {csiDriver: {tokenRequests: [{audience: a}, {audience: a}]}}",
                 {R"(spec.csiDriver.tokenRequests[1].audience: Duplicate value: "a")"}},
            Case{"TokenAtLeast10Minutes",
                 "spec: {csiDriver: {tokenRequests: [{audience: a, expirationSeconds: 599}]}}",
                 {"spec.csiDriver.tokenRequests[0].expirationSeconds: Invalid value: 599: may "
                  "not specify a duration less than 10 minutes"}},
            Case{"TokenBelow2To32",
                 "spec: {csiDriver: {tokenRequests: [{audience: a, expirationSeconds: "
                 "4294967297}]}}",
                 {"spec.csiDriver.tokenRequests[0].expirationSeconds: Invalid value: "
                  "4294967297: may not specify a duration larger than 2^32 seconds"}},
            Case{"AllocatableAtLeast10",
                 "spec: {csiDriver: {nodeAllocatableUpdatePeriodSeconds: 9}}",
                 {"spec.csiDriver.nodeAllocatableUpdatePeriodSeconds: Invalid value: 9: must "
                  "be greater than or equal to 10 seconds"}},
            Case{"TokenInSecretsNeedsTokenRequests",
                 "spec: {csiDriver: {serviceAccountTokenInSecrets: false}}",
                 {"spec.csiDriver.serviceAccountTokenInSecrets: Invalid value: false: "
                  "serviceAccountTokenInSecrets is set but no tokenRequests are specified"}},
            Case{"CapacityNeedsController",
                 "spec: {csiDriver: {storageCapacity: true}, controller: null}",
                 {"spec.csiDriver.storageCapacity: Forbidden: requires a provisioner, which "
                  "publishes CSIStorageCapacity objects: spec.controller with the provisioner "
                  "enabled, or spec.node.provisioner"}},
            Case{"CapacityNeedsProvisioner",
                 "spec: {csiDriver: {storageCapacity: true}, controller: {provisioner: "
                 "{enabled: false}}}",
                 {"spec.csiDriver.storageCapacity: Forbidden: requires a provisioner, which "
                  "publishes CSIStorageCapacity objects: spec.controller.provisioner or "
                  "spec.node.provisioner"}},
            Case{"CapacityOfNodeLocalProvisioning",
                 "spec: {csiDriver: {storageCapacity: true}, controller: null, node: "
                 "{provisioner: {enabled: true, baseDelay: 10s, maxDelay: 2m}}}",
                 {}},
            Case{"ProvisionerCentrallyOrOnEveryNode",
                 "spec: {node: {provisioner: {enabled: true}}}",
                 {"spec.node.provisioner.enabled: Forbidden: a driver provisions either "
                  "centrally or on every node: disable spec.controller.provisioner (or leave "
                  "out spec.controller) to provision on every node"}},
            Case{"NodeProvisionerDelays",
                 "spec: {controller: null, node: {provisioner: {enabled: true, baseDelay: "
                 "soon}}}",
                 {"spec.node.provisioner.baseDelay: Invalid value: \"soon\": must be a Go "
                  "duration such as \"20s\" or \"1m\""}},
            Case{"NodeProvisionerPortIsTheNodePodsPort",
                 "spec: {controller: null, node: {provisioner: {enabled: true, httpPort: "
                 "9809}}}",
                 {"spec.node.provisioner.httpPort: Invalid value: 9809: is used by "
                  "spec.node.registrar.httpPort"}},
            Case{"AttacherNeedsAttachRequired",
                 "spec: {csiDriver: {attachRequired: false}, controller: {attacher: {enabled: "
                 "true}}}",
                 {"spec.controller.attacher.enabled: Forbidden: the external-attacher has "
                  "nothing to do when spec.csiDriver.attachRequired is false"}},
            Case{
                "ControllerKindEnum",
                "spec: {controller: {kind: DaemonSet}}",
                {R"(spec.controller.kind: Unsupported value: "DaemonSet": supported values: "Deployment", "StatefulSet")"}},
            Case{"ReplicasNotNegative",
                 "spec: {controller: {replicas: -1}}",
                 {"spec.controller.replicas: Invalid value: -1: must be greater than or equal "
                  "to 0"}},
            Case{"LeaderElectionStaysOnWithReplicas",
                 "spec: {controller: {replicas: 2, leaderElection: {enabled: false}}}",
                 {"spec.controller.leaderElection.enabled: Forbidden: leader election must "
                  "stay enabled when replicas > 1: otherwise every replica of the provisioner "
                  "acts at once",
                  "spec.controller.leaderElection.enabled: Forbidden: leader election must "
                  "stay enabled when replicas > 1: otherwise every replica of the attacher "
                  "acts at once"}},
            Case{"SidecarLeaderElectionStaysOnWithReplicas",
                 "spec: {controller: {replicas: 3, provisioner: {leaderElection: {enabled: "
                 "false}}}}",
                 {"spec.controller.provisioner.leaderElection.enabled: Forbidden: leader "
                  "election must stay enabled when replicas > 1: otherwise every replica of "
                  "the provisioner acts at once"}},
            Case{
                "DurationsAreGoDurations",
                "spec: {controller: {leaderElection: {leaseDuration: 15 seconds}}}",
                {R"(spec.controller.leaderElection.leaseDuration: Invalid value: "15 seconds": must be a positive Go duration such as "15s" or "1m30s")"}},
            Case{
                "LeaseLongerThanRenew",
                "spec: {controller: {leaderElection: {leaseDuration: 10s, renewDeadline: "
                "10s}}}",
                {R"(spec.controller.leaderElection.leaseDuration: Invalid value: "10s": must be greater than renewDeadline)"}},
            Case{
                "RenewLongerThanRetryJitter",
                "spec: {controller: {provisioner: {leaderElection: {renewDeadline: 10s, "
                "retryPeriod: 9s}}}}",
                {R"(spec.controller.provisioner.leaderElection.renewDeadline: Invalid value: "10s": must be greater than 1.2 x retryPeriod)"}},
            Case{"SidecarPortsDistinct",
                 "spec: {controller: {resizer: {enabled: true, httpPort: 8080}}}",
                 {"spec.controller.resizer.httpPort: Invalid value: 8080: is used by "
                  "spec.controller.provisioner.httpPort"}},
            Case{"PortRange",
                 "spec: {controller: {provisioner: {httpPort: 70000}}}",
                 {"spec.controller.provisioner.httpPort: Invalid value: 70000: must be between "
                  "1 and 65535, inclusive"}},
            Case{"DriverPortsAvoidSidecars",
                 "spec: {driver: {ports: [{containerPort: 9809}]}}",
                 {"spec.driver.ports[0].containerPort: Invalid value: 9809: is used by "
                  "spec.node.registrar.httpPort"}},
            Case{"NodeProbePortAvoidsRegistrar",
                 "spec: {node: {livenessProbe: {port: 9809}}}",
                 {"spec.node.livenessProbe.port: Invalid value: 9809: is used by "
                  "spec.node.registrar.httpPort"}},
            Case{
                "DriverPortNames",
                "spec: {driver: {ports: [{containerPort: 1234, name: metrics_port}]}}",
                {R"(spec.driver.ports[0].name: Invalid value: "metrics_port": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-))"}},
            Case{
                "KubeletDirAbsolute",
                "spec: {node: {kubeletDir: var/lib/kubelet}}",
                {R"(spec.node.kubeletDir: Invalid value: "var/lib/kubelet": must be an absolute path)"}},
            Case{
                "KubeletDirNoDotDot",
                "spec: {node: {kubeletDir: /var/../etc}}",
                {R"(spec.node.kubeletDir: Invalid value: "/var/../etc": must not contain '..', ':' or whitespace)"}},
            Case{
                "UpdateStrategyEnum",
                "spec: {node: {updateStrategy: {type: Rolling}}}",
                {R"(spec.node.updateStrategy.type: Unsupported value: "Rolling": supported values: "OnDelete", "RollingUpdate", "WhenVolumesUnused")"}},
            Case{
                "WhenVolumesUnusedParametersOnlyWithItsType",
                "spec: {node: {updateStrategy: {type: OnDelete, whenVolumesUnused: "
                "{maxUnavailable: 2}}}}",
                {R"(spec.node.updateStrategy.whenVolumesUnused: Forbidden: may only be set with type WhenVolumesUnused)"}},
            Case{
                "WhenVolumesUnusedMaxUnavailable",
                "spec: {node: {updateStrategy: {type: WhenVolumesUnused, whenVolumesUnused: "
                "{maxUnavailable: 'ten'}}}}",
                {R"(spec.node.updateStrategy.whenVolumesUnused.maxUnavailable: Invalid value: "ten": must be a number of nodes (at least 1) or a percentage (1% to 100%))"}},
            Case{
                "WhenVolumesUnusedMaxUnavailableZero",
                "spec: {node: {updateStrategy: {type: WhenVolumesUnused, whenVolumesUnused: "
                "{maxUnavailable: 0}}}}",
                {R"(spec.node.updateStrategy.whenVolumesUnused.maxUnavailable: Invalid value: 0: must be a number of nodes (at least 1) or a percentage (1% to 100%))"}},
            Case{
                "NodeSelectorKeys", "spec: {node: {nodeSelector: {'bad key': x}}}", {R"(spec.node.nodeSelector: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'))"}},
            Case{
                "TolerationOperator",
                "spec: {node: {tolerations: [{key: a, operator: Maybe}]}}",
                {R"(spec.node.tolerations[0].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists")"}},
            Case{
                "TolerationExistsHasNoValue",
                "spec: {node: {tolerations: [{key: a, operator: Exists, value: b}]}}",
                {R"(spec.node.tolerations[0].value: Invalid value: "b": value must be empty when `operator` is 'Exists')"}},
            Case{"TolerationFieldTypes",
                 "spec: {node: {tolerations: [{key: 1, operator: Exists}]}}",
                 {"spec.node.tolerations[0].key: Invalid value: 1: must be a string"}},
            Case{
                "TolerationEffect",
                "spec: {controller: {tolerations: [{operator: Exists, effect: NoRun}]}}",
                {R"(spec.controller.tolerations[0].effect: Unsupported value: "NoRun": supported values: "NoExecute", "NoSchedule", "PreferNoSchedule")"}},
            Case{
                "PriorityClassName",
                "spec: {node: {priorityClassName: Critical!}}",
                {R"(spec.node.priorityClassName: Invalid value: "Critical!": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'))"}},
            Case{
                "ResourceQuantities",
                "spec: {node: {resources: {limits: {memory: 1 GB}}}}",
                {R"(spec.node.resources.limits[memory]: Invalid value: "1 GB": must be a quantity such as "100m", "64Mi" or "2")"}},
            Case{
                "ResourceKeys",
                "spec: {controller: {provisioner: {resources: {maximum: {cpu: 1}}}}}",
                {R"(spec.controller.provisioner.resources.maximum: Unsupported value: "maximum": supported values: "claims", "limits", "requests")"}},
            Case{"EnvNames",
                 "spec: {driver: {env: [{value: x}, {name: 'A=B'}]}}",
                 {"spec.driver.env[0].name: Required value",
                  R"(spec.driver.env[1].name: Invalid value: "A=B": must not contain '=')"}},
            Case{"EnvReservedNames",
                 "spec: {driver: {env: [{name: CSI_ENDPOINT, value: x}]}}",
                 {"spec.driver.env[0].name: Forbidden: CSI_ENDPOINT is set by the operator"}},
            Case{
                "VolumeNamesReserved",
                "spec: {driver: {volumes: [{name: socket-dir, emptyDir: {}}]}}",
                {R"(spec.driver.volumes[0].name: Invalid value: "socket-dir": is used by the operator's own volumes)"}},
            Case{"VolumeNamesUnique",
                 "spec: {driver: {volumes: [{name: a, emptyDir: {}}, {name: a, emptyDir: {}}]}}",
                 {R"(spec.driver.volumes[1].name: Duplicate value: "a")"}},
            Case{
                "MountsNeedVolumes",
                "spec: {driver: {volumeMounts: [{name: nope, mountPath: /x}]}}",
                {R"(spec.driver.volumeMounts[0].name: Invalid value: "nope": not found in the driver's volumes)"}},
            Case{
                "MountPathsReserved",
                "spec: {driver: {volumes: [{name: a, emptyDir: {}}], volumeMounts: [{name: a, "
                "mountPath: /csi}]}}",
                {R"(spec.driver.volumeMounts[0].mountPath: Invalid value: "/csi": is mounted by the operator)"}},
            Case{
                "NodeMountPathsUnderKubeletDir",
                "spec: {node: {kubeletDir: /k0s/kubelet/, driver: {volumes: [{name: a, "
                "emptyDir: {}}], volumeMounts: [{name: a, mountPath: /k0s/kubelet/pods}]}}}",
                {R"(spec.node.driver.volumeMounts[0].mountPath: Invalid value: "/k0s/kubelet/pods": is mounted by the operator)"}},
            Case{"NodeDriverPrivileged",
                 "spec: {driver: {securityContext: {runAsUser: 1000}}}",
                 {"spec.driver.securityContext.privileged: Forbidden: the node plugin must be "
                  "privileged: it mounts the kubelet's pods and plugins directories with "
                  "Bidirectional propagation"}},
            Case{"NodeDriverOverridePrivileged",
                 "spec: {node: {driver: {securityContext: {privileged: false}}}}",
                 {"spec.node.driver.securityContext.privileged: Forbidden: the node plugin "
                  "must be privileged: it mounts the kubelet's pods and plugins directories "
                  "with Bidirectional propagation"}},
            Case{"RbacRulesNeedVerbs",
                 "spec: {controller: {rbacRules: [{apiGroups: [''], resources: [nodes]}]}}",
                 {"spec.controller.rbacRules[0].verbs: Required value: verbs must contain at "
                  "least one value"}},
            Case{"RbacRulesNeedResources",
                 "spec: {node: {rbacRules: [{apiGroups: [''], verbs: [get]}]}}",
                 {"spec.node.rbacRules[0].resources: Required value: resource rules must "
                  "supply at least one resource"}},
            Case{"PodTemplatePatchIsObject",
                 "spec: {node: {podTemplatePatch: [1]}}",
                 {"spec.node.podTemplatePatch: Invalid value: [1]: must be an object (a pod "
                  "template patch)"}},
            Case{"StorageClassNameRequired",
                 "spec: {storageClasses: [{reclaimPolicy: Delete}]}",
                 {"spec.storageClasses[0].name: Required value"}},
            Case{"StorageClassNamesUnique",
                 "spec: {storageClasses: [{name: a}, {name: a}]}",
                 {R"(spec.storageClasses[1].name: Duplicate value: "a")"}},
            Case{
                "ReclaimPolicyEnum",
                "spec: {storageClasses: [{name: a, reclaimPolicy: Recycle}]}",
                {R"(spec.storageClasses[0].reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain")"}},
            Case{
                "BindingModeEnum",
                "spec: {storageClasses: [{name: a, volumeBindingMode: Later}]}",
                {R"(spec.storageClasses[0].volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer")"}},
            Case{"OneDefaultStorageClass",
                 "spec: {storageClasses: [{name: a, isDefault: true}, {name: b, isDefault: "
                 "true}]}",
                 {"spec.storageClasses[1].isDefault: Forbidden: at most one StorageClass may "
                  "be the default"}},
            Case{"SecretNeedsNameAndNamespace",
                 "spec: {storageClasses: [{name: a, parameters: "
                 "{csi.storage.k8s.io/provisioner-secret-name: s}}]}",
                 {"spec.storageClasses[0].parameters[csi.storage.k8s.io/"
                  "provisioner-secret-namespace]: Required value: a secret reference needs "
                  "both the name and the namespace"}},
            Case{"SecretNamespaceIsLabel",
                 "spec: {storageClasses: [{name: a, parameters: "
                 "{csi.storage.k8s.io/node-stage-secret-name: s, "
                 "csi.storage.k8s.io/node-stage-secret-namespace: Bad_NS}}]}",
                 {label("spec.storageClasses[0].parameters[csi.storage.k8s.io/"
                        "node-stage-secret-namespace]",
                        "Bad_NS")}},
            Case{
                "MountOptionsNotEmpty",
                "spec: {storageClasses: [{name: a, mountOptions: ['']}]}",
                {R"(spec.storageClasses[0].mountOptions[0]: Invalid value: "": must not be empty)"}},
            Case{"ImagePullSecretNames",
                 "spec: {imagePullSecrets: [{}]}",
                 {"spec.imagePullSecrets[0].name: Required value"}},
            Case{
                "ImageRegistryHasNoScheme",
                "spec: {imageRegistry: 'https://mirror.example.com'}",
                {R"(spec.imageRegistry: Invalid value: "https://mirror.example.com": must be a registry host and optional path, such as "registry.example.com/sig-storage", without a scheme)"}},
            Case{
                "DeletionPolicyEnum",
                "spec: {deletionPolicy: Keep}",
                {R"(spec.deletionPolicy: Unsupported value: "Keep": supported values: "Delete", "Orphan")"}},
            Case{
                "PlacementEnum",
                "spec: {controller: {placement: Node}}",
                {R"(spec.controller.placement: Unsupported value: "Node": supported values: "Workload", "NodePlugin", "SinglePod")"}},
            Case{"NodePluginPlacementHasNoControllerPod",
                 "spec: {controller: {placement: NodePlugin, kind: StatefulSet, replicas: 2, "
                 "nodeSelector: {a: b}, tolerations: [], affinity: {}, "
                 "topologySpreadConstraints: [], priorityClassName: p, livenessProbe: {}, "
                 "driver: {}, podTemplatePatch: {}}}",
                 [] {
                   std::vector<std::string> out;
                   for (const char* f :
                        {"kind", "replicas", "nodeSelector", "tolerations", "affinity",
                         "topologySpreadConstraints", "priorityClassName", "livenessProbe",
                         "driver", "podTemplatePatch"}) {
                     out.push_back(std::string("spec.controller.") + f +
                                   ": Forbidden: applies to the controller workload, and "
                                   "with placement NodePlugin there is none: the sidecars "
                                   "run in the node plugin's pods (set it under spec.node)");
                   }
                   return out;
                 }()},
            Case{"SinglePodPlacementHasNoControllerPod",
                 "spec: {controller: {placement: SinglePod, replicas: 1}}",
                 {"spec.controller.replicas: Forbidden: applies to the controller workload, "
                  "and with placement SinglePod there is none: the sidecars run in the node "
                  "plugin's pods (set it under spec.node)"}},
            Case{"SinglePodPlacementRefusesWhatNeedsANodePluginOnEveryNode",
                 "spec: {controller: {placement: SinglePod, provisioner: {enabled: false}}, "
                 "windowsNode: {driver: {image: 'w:1'}}, node: {provisioner: {enabled: "
                 "true}, updateStrategy: {type: OnDelete}}, startupTaint: {key: "
                 "csiop.dev/x}}",
                 {"spec.windowsNode.enabled: Forbidden: not with spec.controller.placement "
                  "SinglePod: the driver keeps its volumes in its one process, and a Windows "
                  "node plugin would be a second one that knows none of them",
                  "spec.node.provisioner.enabled: Forbidden: not with "
                  "spec.controller.placement SinglePod: the pod's provisioner is the "
                  "controller's (spec.controller.provisioner)",
                  "spec.node.updateStrategy: Forbidden: not with spec.controller.placement "
                  "SinglePod: it is a DaemonSet's, and the pod is a StatefulSet's, replaced "
                  "when its template changes",
                  "spec.startupTaint: Forbidden: not with spec.controller.placement "
                  "SinglePod: the driver registers on one node only, so every other node "
                  "would keep the taint"}},
            Case{"SinglePodPlacementHasNoVerifiedRollout",
                 "spec: {controller: {placement: SinglePod}, rollout: {type: Verified}}",
                 {"spec.rollout.type: Forbidden: not with spec.controller.placement "
                  "SinglePod: a verified rollout replaces node plugin pods node by node, and "
                  "there is one pod"}},
            Case{"SinglePodPlacementMayTurnLeaderElectionOff",
                 "spec: {controller: {placement: SinglePod, leaderElection: {enabled: "
                 "false}}}",
                 {}},
            Case{
                "AdditionalNamespacesAreLabelsOnceEachAndNotTheDriversOwn",
                "spec: {namespace: csi-x, additionalNamespaces: [{name: Openebs}, {name: "
                "lvm}, {name: lvm}, {name: csi-x}]}",
                {R"(spec.additionalNamespaces[0].name: Invalid value: "Openebs": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'))",
                 R"(spec.additionalNamespaces[2].name: Duplicate value: "lvm")",
                 R"(spec.additionalNamespaces[3].name: Invalid value: "csi-x": is the driver's own namespace (spec.namespace): its rules are spec.node.namespacedRbacRules and spec.controller.namespacedRbacRules)"}},
            Case{"AdditionalNamespaceControllerRulesNeedAController",
                 "spec: {controller: null, csiDriver: {attachRequired: false}, "
                 "additionalNamespaces: [{name: lvm, controllerRbacRules: [{apiGroups: [''], "
                 "resources: [configmaps], verbs: [get]}]}]}",
                 {"spec.additionalNamespaces[0].controllerRbacRules: Forbidden: there is no "
                  "spec.controller: the node plugin's rules are nodeRbacRules"}},
            Case{"NodePluginPlacementAcceptsTheDefaultKind",
                 "spec: {controller: {placement: NodePlugin, kind: Deployment}}",
                 {}},
            Case{"NodePluginPlacementKeepsLeaderElection",
                 "spec: {controller: {placement: NodePlugin, leaderElection: {enabled: "
                 "false}}}",
                 {"spec.controller.leaderElection.enabled: Forbidden: leader election must "
                  "stay enabled with placement NodePlugin: otherwise the provisioner of "
                  "every node acts at once",
                  "spec.controller.leaderElection.enabled: Forbidden: leader election must "
                  "stay enabled with placement NodePlugin: otherwise the attacher of every "
                  "node acts at once"}},
            Case{"NodePluginSidecarPortsAreTheNodePodsPorts",
                 "spec: {controller: {placement: NodePlugin, provisioner: {httpPort: 9809}}}",
                 {"spec.controller.provisioner.httpPort: Invalid value: 9809: is used by "
                  "spec.node.registrar.httpPort"}},
            Case{"NodePluginSidecarPortsAreNotTheNodeDriversPorts",
                 "spec: {controller: {placement: NodePlugin}, driver: {ports: "
                 "[{containerPort: 8080}]}}",
                 {"spec.driver.ports[0].containerPort: Invalid value: 8080: is used by "
                  "spec.controller.provisioner.httpPort"}},
            Case{"NodePluginPlacementNeedsNoControllerImage",
                 "spec: {driver: {image: null}, node: {driver: {image: n:1}}, controller: "
                 "{placement: NodePlugin}}",
                 {}}),
    [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.name); });

TEST(Validation, AcceptsTemplatedSecretReferences) {
  const auto v =
      validateWith("spec: {storageClasses: [{name: a, parameters: {"
                   "csi.storage.k8s.io/provisioner-secret-name: '${pvc.name}',"
                   "csi.storage.k8s.io/provisioner-secret-namespace: '${pvc.namespace}'}}]}");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
}

TEST(Validation, AcceptsUppercaseDriverNamesLikeTheApiServer) {
  // Kubernetes validates the lower-cased driver name.
  EXPECT_TRUE(validateWith("spec: {driverName: Demo.CSI.example.com}").ok());
}

TEST(Validation, OverridesMayCarryTheOnlyImage) {
  const auto v = validateWith("spec: {driver: {image: null}, node: {driver: {image: n:v1}}, "
                              "controller: {driver: {image: c:v1}}}");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
}

TEST(Validation, WarnsWhenNothingHandlesAttachment) {
  auto v = validateWith("spec: {controller: null}");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("no external-attacher"), std::string::npos);
  v = validateWith("spec: {controller: {attacher: {enabled: false}}}");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("volumes will not attach"), std::string::npos);
  EXPECT_TRUE(validateWith("spec: {csiDriver: {attachRequired: false}, controller: null}")
                  .warnings.empty());
}

TEST(Validation, WarnsAboutWildcardVerbs) {
  const auto v = validateWith(
      "spec: {node: {rbacRules: [{apiGroups: [''], resources: [nodes], verbs: ['*']}]}}");
  EXPECT_TRUE(v.ok());
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("wildcard"), std::string::npos);
}

TEST(Validation, DriverNameIsImmutable) {
  const DriverDeployment old = decode(parseYaml(kBase)[0]).object;
  DriverDeployment updated = old;
  EXPECT_TRUE(validateUpdate(old, updated).ok());
  updated.spec.driverName = "other.csi.example.com";
  EXPECT_EQ(
      messages(validateUpdate(old, updated)),
      (std::vector<std::string>{
          R"(spec.driverName: Invalid value: "other.csi.example.com": field is immutable )"
          R"((it was "demo.csi.example.com"; create a new DriverDeployment for another driver))"}));
}

TEST(Validation, PlacementChangesNeitherToNorFromSinglePod) {
  const DriverDeployment workload = decode(parseYaml(kBase)[0]).object;
  DriverDeployment nodePlugin = workload;
  nodePlugin.spec.controller->placement = "NodePlugin";
  DriverDeployment single = workload;
  single.spec.controller->placement = "SinglePod";
  EXPECT_TRUE(validateUpdate(workload, nodePlugin).ok());
  EXPECT_TRUE(validateUpdate(single, single).ok());
  const std::string tail = " SinglePod: the old and the new node plugin would run on one node at "
                           "once, on one socket and one state directory: delete the "
                           "DriverDeployment and create it again";
  EXPECT_EQ(
      messages(validateUpdate(nodePlugin, single)),
      (std::vector<std::string>{"spec.controller.placement: Forbidden: cannot change to" + tail}));
  EXPECT_EQ(messages(validateUpdate(single, workload)),
            (std::vector<std::string>{"spec.controller.placement: Forbidden: cannot change from" +
                                      tail}));
}

TEST(Validation, ReportsEveryErrorAtOnce) {
  const auto v = validateWith("metadata: {name: X}\nspec: {driverName: null, deletionPolicy: No}");
  EXPECT_EQ(v.errors.size(), 3u) << joinMessages(v.errors);
}

} // namespace
} // namespace csiop::api
