// Validation of the pod-level and container-level fields: sidecar settings, HTTP endpoints,
// probes and hooks, pod settings, the containers a user adds, the controller's strategy.
#include <gtest/gtest.h>

#include "validation_cases.hpp"

namespace csiop::api {
namespace {

TEST(PodValidation, EveryNewFieldAtOnceIsValid) {
  const auto v = validateWith(R"(
spec:
  driver:
    readinessProbe: {httpGet: {path: /healthz, port: healthz}, periodSeconds: 5}
    startupProbe: {tcpSocket: {port: 9808}}
    lifecycle: {preStop: {exec: {command: [/bin/driver, pre-stop-hook]}}}
  node:
    hostNetwork: true
    priorityClassName: ""
    securityContext: {seccompProfile: {type: RuntimeDefault}}
    hostPID: true
    dnsPolicy: Default
    terminationGracePeriodSeconds: 30
    podLabels: {team: storage}
    podAnnotations: {example.com/scrape: "true"}
    initContainers: [{name: prepare, image: busybox, volumeMounts: [{name: plugins-dir, mountPath: /p}]}]
    extraContainers: [{name: agent, image: example.com/agent:v1, env: [{name: A, value: b}]}]
    registrar:
      httpEndpoint: localhost:19809
      command: [/csi-node-driver-registrar]
      env: [{name: X, value: y}]
      securityContext: {privileged: true}
    livenessProbe:
      httpEndpoint: localhost:29653
      initialDelaySeconds: 30
      timeoutSeconds: 10
      periodSeconds: 30
      failureThreshold: 5
  controller:
    hostNetwork: true
    strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}
    extraContainers: [{name: exporter, image: example.com/exp:v1}]
    provisioner: {httpEndpoint: ""}
    attacher: {httpEndpoint: "127.0.0.1:8090", env: [{name: ADDRESS, value: /csi/csi.sock}]}
)");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
}

INSTANTIATE_TEST_SUITE_P(
    Pods, Rule,
    ::testing::Values(
        Case{"EndpointAndPortTogether",
             "spec: {node: {registrar: {httpPort: 9000, httpEndpoint: ':9001'}}}",
             {"spec.node.registrar.httpEndpoint: Forbidden: may not be set together with httpPort "
              "(httpPort P is the short form of httpEndpoint \":P\")"}},
        Case{"EndpointMalformed",
             "spec: {controller: {resizer: {enabled: true, httpEndpoint: 'localhost'}}}",
             {"spec.controller.resizer.httpEndpoint: Invalid value: \"localhost\": must be "
              "HOST:PORT or :PORT with a port from 1 to 65535, such as \":8080\" or "
              "\"localhost:8080\", or \"\" for no endpoint"}},
        Case{"EndpointPortOutOfRange",
             "spec: {node: {livenessProbe: {httpEndpoint: ':70000'}}}",
             {"spec.node.livenessProbe.httpEndpoint: Invalid value: \":70000\": must be "
              "HOST:PORT or :PORT with a port from 1 to 65535, such as \":8080\" or "
              "\"localhost:8080\""}},
        Case{"LivenessProbeNeedsAnEndpoint",
             "spec: {node: {livenessProbe: {httpEndpoint: ''}}}",
             {"spec.node.livenessProbe.httpEndpoint: Required value: livenessprobe needs an "
              "endpoint (set enabled: false to run no livenessprobe)"}},
        Case{"LoopbackNeedsHostNetwork",
             "spec: {node: {registrar: {httpEndpoint: 'localhost:19809'}}}",
             {"spec.node.registrar.httpEndpoint: Invalid value: \"localhost:19809\": binds to "
              "the pod's loopback interface, which the kubelet's probe reaches only in a pod on "
              "the node's network: set spec.node.hostNetwork: true, or bind to every interface "
              "(\":PORT\")"}},
        Case{"LoopbackOfAControllerSidecar",
             "spec: {controller: {provisioner: {httpEndpoint: '127.0.0.1:8080'}}}",
             {"spec.controller.provisioner.httpEndpoint: Invalid value: \"127.0.0.1:8080\": "
              "binds to the pod's loopback interface, which the kubelet's probe reaches only in "
              "a pod on the node's network: set spec.controller.hostNetwork: true, or bind to "
              "every interface (\":PORT\")"}},
        Case{"EndpointPortsClash",
             "spec: {node: {livenessProbe: {httpEndpoint: ':9809'}}}",
             {"spec.node.livenessProbe.httpEndpoint: Invalid value: 9809: is used by "
              "spec.node.registrar.httpPort"}},
        Case{"DisabledEndpointFreesItsPort",
             "spec: {node: {registrar: {httpEndpoint: ''}, livenessProbe: {port: 9809}}}",
             {}},
        Case{"ProbeTimings",
             "spec: {controller: {livenessProbe: {initialDelaySeconds: -1, timeoutSeconds: 0, "
             "periodSeconds: 0, failureThreshold: 0}}}",
             {"spec.controller.livenessProbe.initialDelaySeconds: Invalid value: -1: must be "
              "greater than or equal to 0",
              "spec.controller.livenessProbe.timeoutSeconds: Invalid value: 0: must be greater "
              "than or equal to 1",
              "spec.controller.livenessProbe.periodSeconds: Invalid value: 0: must be greater "
              "than or equal to 1",
              "spec.controller.livenessProbe.failureThreshold: Invalid value: 0: must be "
              "greater than or equal to 1"}},
        Case{"ProbeNeedsOneHandler",
             "spec: {driver: {readinessProbe: {httpGet: {port: 1}, exec: {command: [x]}}}}",
             {"spec.driver.readinessProbe: Required value: must specify exactly one of exec, "
              "httpGet, tcpSocket or grpc"}},
        Case{"ProbeTimingsInAProbe",
             "spec: {node: {driver: {startupProbe: {exec: {command: [x]}, periodSeconds: 0}}}}",
             {"spec.node.driver.startupProbe.periodSeconds: Invalid value: 0: must be an "
              "integer greater than or equal to 1"}},
        Case{"LifecycleKeys",
             "spec: {driver: {lifecycle: {beforeStop: {exec: {command: [x]}}, preStop: {}}}}",
             {"spec.driver.lifecycle.beforeStop: Unsupported value: \"beforeStop\": supported "
              "values: \"postStart\", \"preStop\", \"stopSignal\"",
              "spec.driver.lifecycle.preStop: Required value: must specify exactly one of exec, "
              "httpGet, sleep or tcpSocket"}},
        Case{"SidecarEnvNeedsNames",
             "spec: {controller: {provisioner: {env: [{value: x}]}}}",
             {"spec.controller.provisioner.env[0].name: Required value"}},
        Case{"SidecarCommandEntriesNotEmpty",
             "spec: {node: {registrar: {command: ['']}}}",
             {"spec.node.registrar.command[0]: Invalid value: \"\": must not be empty"}},
        Case{"SidecarSecurityContextIsAnObject",
             "spec: {node: {livenessProbe: {securityContext: [privileged]}}}",
             {"spec.node.livenessProbe.securityContext: Invalid value: [\"privileged\"]: must "
              "be a SecurityContext object"}},
        Case{"DnsPolicyEnum",
             "spec: {node: {dnsPolicy: Host}}",
             {"spec.node.dnsPolicy: Unsupported value: \"Host\": supported values: "
              "\"ClusterFirst\", \"ClusterFirstWithHostNet\", \"Default\", \"None\""}},
        Case{"GracePeriodNotNegative",
             "spec: {controller: {terminationGracePeriodSeconds: -5}}",
             {"spec.controller.terminationGracePeriodSeconds: Invalid value: -5: must be "
              "greater than or equal to 0"}},
        Case{"PodLabelsLeaveTheOperatorsAlone",
             "spec: {node: {podLabels: {app.kubernetes.io/instance: other, "
             "csiop.dev/driverdeployment: x}}}",
             {"spec.node.podLabels[app.kubernetes.io/instance]: Forbidden: is set by the "
              "operator (the workload's selector uses it)",
              "spec.node.podLabels[csiop.dev/driverdeployment]: Forbidden: is set by the "
              "operator (the workload's selector uses it)"}},
        Case{"ExtraContainerNames",
             "spec: {node: {extraContainers: [{name: node-driver-registrar, image: a}, "
             "{name: Agent, image: b}, {image: c}]}}",
             {"spec.node.extraContainers[0].name: Duplicate value: \"node-driver-registrar\"",
              "spec.node.extraContainers[1].name: Invalid value: \"Agent\": a lowercase RFC "
              "1123 label must consist of lower case alphanumeric characters or '-', and must "
              "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
              "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
              "spec.node.extraContainers[2].name: Required value"}},
        Case{"InitAndExtraContainersShareNames",
             "spec: {controller: {initContainers: [{name: x, image: a}], "
             "extraContainers: [{name: x, image: b}]}}",
             {"spec.controller.extraContainers[0].name: Duplicate value: \"x\""}},
        Case{"ExtraContainerNeedsAnImage",
             "spec: {controller: {extraContainers: [{name: x}]}}",
             {"spec.controller.extraContainers[0].image: Required value"}},
        Case{"ExtraContainerMountsThePodsVolumes",
             "spec: {driver: {volumes: [{name: conf, configMap: {name: c}}]}, "
             "controller: {extraContainers: [{name: x, image: a, volumeMounts: "
             "[{name: conf, mountPath: /c}, {name: registration-dir, mountPath: /r}]}]}}",
             {"spec.controller.extraContainers[0].volumeMounts[1].name: Invalid value: "
              "\"registration-dir\": not found in the driver's volumes"}},
        Case{"DeploymentStrategyType",
             "spec: {controller: {strategy: {type: OnDelete}}}",
             {"spec.controller.strategy.type: Unsupported value: \"OnDelete\": supported "
              "values: \"Recreate\", \"RollingUpdate\""}},
        Case{"StatefulSetStrategyType",
             "spec: {controller: {kind: StatefulSet, strategy: {type: Recreate}}}",
             {"spec.controller.strategy.type: Unsupported value: \"Recreate\": supported "
              "values: \"OnDelete\", \"RollingUpdate\""}},
        Case{"NodePluginPlacementHasNoControllerPod",
             "spec: {controller: {placement: NodePlugin, hostNetwork: true, strategy: {}, "
             "extraContainers: []}}",
             {"spec.controller.hostNetwork: Forbidden: applies to the controller workload, and "
              "with placement NodePlugin there is none: the sidecars run in the node plugin's "
              "pods (set it under spec.node)",
              "spec.controller.strategy: Forbidden: applies to the controller workload, and with "
              "placement NodePlugin there is none: the sidecars run in the node plugin's pods "
              "(set it under spec.node)",
              "spec.controller.extraContainers: Forbidden: applies to the controller workload, "
              "and with placement NodePlugin there is none: the sidecars run in the node "
              "plugin's pods (set it under spec.node)"}},
        Case{"NodePluginSidecarsUseTheNodesNetwork",
             "spec: {node: {hostNetwork: true}, controller: {placement: NodePlugin, "
             "provisioner: {httpEndpoint: 'localhost:8080'}}}",
             {}},
        Case{"PriorityClassNameMayBeEmpty",
             "spec: {node: {priorityClassName: ''}, controller: {priorityClassName: ''}}",
             {}}),
    [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.name); });

// A node plugin's mount at or above the kubelet's directory: only hostPath D at D,
// Bidirectional, which then serves for the operator's own pods and plugins mounts.
INSTANTIATE_TEST_SUITE_P(
    KubeletDir, Rule,
    ::testing::Values(
        Case{"OverTheKubeletDirInAnyOtherForm",
             "spec: {driver: {volumes: [{name: k, hostPath: {path: /var/lib/kubelet}}, "
             "{name: e, emptyDir: {}}, {name: l, hostPath: {path: /var/lib}}], "
             "volumeMounts: [{name: k, mountPath: /var/lib/kubelet, mountPropagation: "
             "HostToContainer}, {name: e, mountPath: /var/lib/kubelet/}, {name: l, "
             "mountPath: /var, mountPropagation: Bidirectional}]}}",
             {"spec.driver.volumeMounts[0].mountPath: Invalid value: \"/var/lib/kubelet\": lies "
              "over the "
              "operator's Bidirectional mounts of /var/lib/kubelet/pods and "
              "/var/lib/kubelet/plugins: mount a hostPath volume of /var/lib/kubelet at "
              "/var/lib/kubelet with "
              "mountPropagation Bidirectional (the operator then leaves its own two out), or a "
              "directory beside the kubelet's",
              "spec.driver.volumeMounts[1].mountPath: Invalid value: \"/var/lib/kubelet/\": lies "
              "over the "
              "operator's Bidirectional mounts of /var/lib/kubelet/pods and "
              "/var/lib/kubelet/plugins: mount a hostPath volume of /var/lib/kubelet/ at "
              "/var/lib/kubelet/ with "
              "mountPropagation Bidirectional (the operator then leaves its own two out), or a "
              "directory beside the kubelet's",
              "spec.driver.volumeMounts[2].mountPath: Invalid value: \"/var\": lies over the "
              "operator's Bidirectional mounts of /var/lib/kubelet/pods and "
              "/var/lib/kubelet/plugins: mount a hostPath volume of /var at /var with "
              "mountPropagation Bidirectional (the operator then leaves its own two out), or a "
              "directory beside the kubelet's"}},
        Case{"TheWholeKubeletDirAtItsOwnPath",
             "spec: {node: {kubeletDir: /k0s/kubelet, driver: {volumes: [{name: k, "
             "hostPath: {path: /k0s/kubelet/}}, {name: b, hostPath: {path: /k0s/kubelet-b}}], "
             "volumeMounts: [{name: k, mountPath: /k0s/kubelet, mountPropagation: "
             "Bidirectional}, {name: b, mountPath: /k0s/kubelet-b}]}}}",
             {}}),
    [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.name); });

} // namespace
} // namespace csiop::api
