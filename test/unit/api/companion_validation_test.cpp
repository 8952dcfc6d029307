// Validation of the companion objects: ConfigMaps, Services, VolumeSnapshotClasses, the
// controller's PodDisruptionBudget, secret access, further objects and required APIs.
#include <gtest/gtest.h>

#include "validation_cases.hpp"

namespace csiop::api {
namespace {

TEST(CompanionValidation, EveryCompanionAtOnceIsValid) {
  const auto v = validateWith(R"(
spec:
  namespace: storage
  controller: {podDisruptionBudget: {maxUnavailable: 1, unhealthyPodEvictionPolicy: AlwaysAllow}}
  configMaps:
  - name: driver-config
    data: {config.json: '{"clusters": []}'}
    binaryData: {keyring: AAEC}
    labels: {team: storage}
  services:
  - name: metrics
    component: Controller
    ports: [{name: http, port: 8080, targetPort: 8080}, {name: grpc, port: 9090, protocol: TCP}]
  - {name: node-metrics, component: Node, clusterIP: None, ports: [{port: 9100, targetPort: metrics}]}
  volumeSnapshotClasses:
  - name: snapshots
    deletionPolicy: Retain
    isDefault: true
    parameters:
      csi.storage.k8s.io/snapshotter-secret-name: snap
      csi.storage.k8s.io/snapshotter-secret-namespace: storage
  secretAccess:
  - {namespace: ceph, names: [csi-rbd-secret], serviceAccounts: [Controller, Node]}
  - {}
  objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: dashboard, labels: {app: dashboard}}
    spec: {selector: {matchLabels: {app: dashboard}}}
  - {apiVersion: v1, kind: ServiceAccount, metadata: {name: dashboard, namespace: storage}}
  requiredAPIs: [secrets-store.csi.x-k8s.io/v1/secretproviderclasses, v1/configmaps]
)");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
  EXPECT_TRUE(v.warnings.empty()) << ::testing::PrintToString(v.warnings);
}

TEST(CompanionValidation, SnapshotClassesWithoutASnapshotterAreAWarning) {
  const auto v = validateWith(
      "spec: {controller: {snapshotter: {enabled: false}}, volumeSnapshotClasses: [{name: s}]}");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
  ASSERT_EQ(v.warnings.size(), 1U);
  EXPECT_NE(v.warnings[0].find("the driver has no snapshotter"), std::string::npos);
}

// Each case runs through Rule.ReportsExactlyItsErrors (validation_test.cpp).
INSTANTIATE_TEST_SUITE_P(
    Companions, Rule,
    ::testing::Values(
        Case{"AggregatedRoleTo",
             "spec: {aggregatedClusterRoles: [{name: users, aggregateTo: [admin, cluster-admin], "
             "rules: [{apiGroups: [example.com], resources: [widgets], verbs: [get]}]}]}",
             {"spec.aggregatedClusterRoles[0].aggregateTo[1]: Unsupported value: "
              "\"cluster-admin\": supported values: \"admin\", \"edit\", \"view\""}},
        Case{"AggregatedRoleWithoutRules",
             "spec: {aggregatedClusterRoles: [{name: users, aggregateTo: [view]}]}",
             {"spec.aggregatedClusterRoles[0].rules: Required value: a role without rules grants "
              "nothing"}},
        Case{"AggregatedRoleName",
             "spec: {aggregatedClusterRoles: [{name: 'csiop:users', aggregateTo: [view], rules: "
             "[{apiGroups: [example.com], resources: [widgets], verbs: [get]}]}]}",
             {"spec.aggregatedClusterRoles[0].name: Invalid value: \"csiop:users\": a lowercase "
              "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
              "and must start and end with an alphanumeric character (e.g. 'example.com', regex "
              "used for validation is "
              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
        Case{"ConfigMapWithoutName",
             "spec: {configMaps: [{data: {a: b}}]}",
             {"spec.configMaps[0].name: Required value"}},
        Case{"ConfigMapNamesUnique",
             "spec: {configMaps: [{name: a}, {name: a}]}",
             {"spec.configMaps[1].name: Duplicate value: \"a\""}},
        Case{"ConfigMapKey",
             "spec: {configMaps: [{name: a, data: {'a/b': x}}]}",
             {"spec.configMaps[0].data: Invalid value: \"a/b\": a key must consist of "
              "alphanumeric characters, '-', '_' or '.'"}},
        Case{"ConfigMapKeyInBoth",
             "spec: {configMaps: [{name: a, data: {k: x}, binaryData: {k: AAEC}}]}",
             {"spec.configMaps[0].binaryData[k]: Duplicate value: \"k\""}},
        Case{"ConfigMapBinaryNotBase64",
             "spec: {configMaps: [{name: a, binaryData: {k: 'a!'}}]}",
             {"spec.configMaps[0].binaryData[k]: Invalid value: \"a!\": must be base64-encoded"}},
        Case{"ServiceNeedsComponentAndPorts",
             "spec: {services: [{name: m}]}",
             {"spec.services[0].component: Required value: Node or Controller: the pods the "
              "Service selects",
              "spec.services[0].ports: Required value: a Service needs at least one port"}},
        Case{"ServiceNameIsALabel",
             "spec: {services: [{name: a.b, component: Node, ports: [{port: 1}]}]}",
             {"spec.services[0].name: Invalid value: \"a.b\": a lowercase RFC 1123 label must "
              "consist of lower case alphanumeric characters or '-', and must start and end with "
              "an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
              "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"}},
        Case{"ServiceOfAControllerInTheNodePlugin",
             "spec: {controller: {placement: NodePlugin}, services: [{name: m, component: "
             "Controller, ports: [{port: 1}]}]}",
             {"spec.services[0].component: Forbidden: Controller needs spec.controller with "
              "placement Workload (the controller sidecars have no pods of their own otherwise)"}},
        Case{"ServicePortsNamedWhenSeveral",
             "spec: {services: [{name: m, component: Node, ports: [{port: 1}, {port: 2}]}]}",
             {"spec.services[0].ports[0].name: Required value: every port of a Service with "
              "several ports needs a name",
              "spec.services[0].ports[1].name: Required value: every port of a Service with "
              "several ports needs a name"}},
        Case{"ServicePortRange",
             "spec: {services: [{name: m, component: Node, ports: [{port: 0, protocol: HTTP}]}]}",
             {"spec.services[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, "
              "inclusive",
              "spec.services[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: "
              "\"TCP\", \"UDP\", \"SCTP\""}},
        Case{"NodePortOnAClusterIP",
             "spec: {services: [{name: m, component: Node, ports: [{port: 1, nodePort: 30000}]}]}",
             {"spec.services[0].ports[0].nodePort: Forbidden: may only be set with type NodePort "
              "or LoadBalancer"}},
        Case{"ServiceClusterIP",
             "spec: {services: [{name: m, component: Node, clusterIP: 10.0.0.1, ports: [{port: "
             "1}]}]}",
             {"spec.services[0].clusterIP: Unsupported value: \"10.0.0.1\": supported values: "
              "\"None\""}},
        Case{"SnapshotClassDeletionPolicy",
             "spec: {volumeSnapshotClasses: [{name: s, deletionPolicy: Keep}]}",
             {"spec.volumeSnapshotClasses[0].deletionPolicy: Unsupported value: \"Keep\": "
              "supported values: \"Delete\", \"Retain\""}},
        Case{"OneDefaultSnapshotClass",
             "spec: {volumeSnapshotClasses: [{name: a, isDefault: true}, {name: b, isDefault: "
             "true}]}",
             {"spec.volumeSnapshotClasses[1].isDefault: Forbidden: at most one "
              "VolumeSnapshotClass may be the default"}},
        Case{"SnapshotSecretNeedsANamespace",
             "spec: {volumeSnapshotClasses: [{name: a, parameters: "
             "{csi.storage.k8s.io/snapshotter-secret-name: s}}]}",
             {"spec.volumeSnapshotClasses[0].parameters[csi.storage.k8s.io/"
              "snapshotter-secret-namespace]: Required value: a secret reference needs both the "
              "name and the namespace"}},
        Case{"BudgetNeedsOneBound",
             "spec: {controller: {podDisruptionBudget: {}}}",
             {"spec.controller.podDisruptionBudget.maxUnavailable: Required value: one of "
              "minAvailable and maxUnavailable is needed"}},
        Case{"BudgetNotBoth",
             "spec: {controller: {podDisruptionBudget: {minAvailable: 1, maxUnavailable: 1}}}",
             {"spec.controller.podDisruptionBudget: Forbidden: minAvailable and maxUnavailable "
              "cannot both be set"}},
        Case{"BudgetValue",
             "spec: {controller: {podDisruptionBudget: {minAvailable: '150%'}}}",
             {"spec.controller.podDisruptionBudget.minAvailable: Invalid value: \"150%\": must "
              "be an integer or a percentage between 0% and 100%"}},
        Case{"BudgetInTheNodePlugin",
             "spec: {controller: {placement: NodePlugin, podDisruptionBudget: {maxUnavailable: "
             "1}}}",
             {"spec.controller.podDisruptionBudget: Forbidden: needs placement Workload (in the "
              "node plugin's pods the controller has no pods of its own)"}},
        Case{"SecretAccessNames",
             "spec: {secretAccess: [{names: []}, {names: [A]}]}",
             {"spec.secretAccess[0].names: Required value: leave it out for any Secret of the "
              "namespace",
              "spec.secretAccess[1].names[0]: Invalid value: \"A\": a lowercase RFC 1123 "
              "subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
              "must start and end with an alphanumeric character (e.g. 'example.com', regex used "
              "for validation is "
              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
        Case{"SecretAccessOfANodeOnlyDriver",
             "spec: {controller: null, secretAccess: [{namespace: ns}]}",
             {"spec.secretAccess[0].serviceAccounts: Required value: the default is Controller, "
              "and the driver has no spec.controller"}},
        Case{"SecretAccessReader",
             "spec: {secretAccess: [{serviceAccounts: [Kubelet]}]}",
             {"spec.secretAccess[0].serviceAccounts[0]: Unsupported value: \"Kubelet\": "
              "supported values: \"Controller\", \"Node\""}},
        Case{"ObjectWithoutKindOrName",
             "spec: {objects: [{apiVersion: v1, metadata: {}}]}",
             {"spec.objects[0].kind: Required value",
              "spec.objects[0].metadata.name: Required value"}},
        Case{"ObjectClusterScoped",
             "spec: {objects: [{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, "
             "metadata: {name: x}}]}",
             {"spec.objects[0].kind: Forbidden: ClusterRole is cluster-scoped; spec.objects "
              "holds objects of the driver's namespace only"}},
        Case{"ObjectInAnotherNamespace",
             "spec: {objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: "
             "kube-system}}]}",
             {"spec.objects[0].metadata.namespace: Invalid value: \"kube-system\": must be left "
              "out: the object goes into the driver's namespace"}},
        Case{"ObjectTwice",
             "spec: {objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}, "
             "{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}]}",
             {"spec.objects[1].metadata.name: Duplicate value: \"x\""}},
        Case{"ObjectWithServerFields",
             "spec: {objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: x, "
             "ownerReferences: []}, status: {}}]}",
             {"spec.objects[0].metadata.ownerReferences: Forbidden: is set by the operator or "
              "the API server",
              "spec.objects[0].status: Forbidden: is written by the object's own controller"}},
        Case{"RequiredAPIFormat",
             "spec: {requiredAPIs: [secretproviderclasses]}",
             {"spec.requiredAPIs[0]: Invalid value: \"secretproviderclasses\": must be "
              "GROUP/VERSION/RESOURCE (VERSION/RESOURCE for the core group), e.g. "
              "snapshot.storage.k8s.io/v1/volumesnapshotclasses"}}));

} // namespace
} // namespace csiop::api
