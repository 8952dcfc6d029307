// Validation of spec.windowsNode: Windows paths, csi-proxy pipes, and the fields a pod for
// Windows may not have (the API server refuses them once spec.os.name is windows).
#include <gtest/gtest.h>

#include "validation_cases.hpp"

namespace csiop::api {
namespace {

TEST(WindowsValidation, ACsiProxyNodePluginIsValid) {
  const auto v = validateWith(R"(
spec:
  driver:
    securityContext: {privileged: true}
    volumes: [{name: host-etc, hostPath: {path: /etc}}]
    volumeMounts: [{name: host-etc, mountPath: /host/etc}]
  windowsNode:
    kubeletDir: 'C:\var\lib\kubelet\'
    csiProxyPipes: [filesystem-v1, smb-v1, disk-v1beta3]
    nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.20348}
    securityContext: {windowsOptions: {runAsUserName: ContainerAdministrator}}
    driver:
      image: example.com/driver:v1-windows
      volumeMounts: [{name: csi-proxy-smb-v1, mountPath: 'C:\smb'}]
    livenessProbe: {port: 29643}
)");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
}

TEST(WindowsValidation, AHostProcessNodePluginIsValid) {
  const auto v = validateWith(R"(
spec:
  windowsNode:
    hostProcess: true
    registrar: {httpEndpoint: 'localhost:19809'}
)");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
}

TEST(WindowsValidation, ADisabledNodePluginIsNotChecked) {
  const auto v =
      validateWith("spec: {windowsNode: {enabled: false, kubeletDir: /var/lib/kubelet}}");
  EXPECT_TRUE(v.ok()) << joinMessages(v.errors);
}

INSTANTIATE_TEST_SUITE_P(
    Windows, Rule,
    ::testing::Values(
        Case{"KubeletDirNotAWindowsPath",
             "spec: {windowsNode: {kubeletDir: /var/lib/kubelet}}",
             {"spec.windowsNode.kubeletDir: Invalid value: \"/var/lib/kubelet\": must be an "
              "absolute Windows path such as C:\\var\\lib\\kubelet, without '..'"}},
        Case{"KubeletDirWithDotDot",
             "spec: {windowsNode: {kubeletDir: 'C:\\var\\..\\kubelet'}}",
             {"spec.windowsNode.kubeletDir: Invalid value: \"C:\\\\var\\\\..\\\\kubelet\": must "
              "be an absolute Windows path such as C:\\var\\lib\\kubelet, without '..'"}},
        Case{"PipeName",
             "spec: {windowsNode: {csiProxyPipes: [smb-v1, '\\\\.\\pipe\\csi-proxy-smb-v1']}}",
             {"spec.windowsNode.csiProxyPipes[1]: Invalid value: "
              "\"\\\\\\\\.\\\\pipe\\\\csi-proxy-smb-v1\": must be a csi-proxy API group and "
              "version such as \"filesystem-v1\" or \"smb-v1\" (the pipe "
              "\\\\.\\pipe\\csi-proxy-<name>)"}},
        Case{"PipeTwice",
             "spec: {windowsNode: {csiProxyPipes: [smb-v1, smb-v1]}}",
             {"spec.windowsNode.csiProxyPipes[1]: Duplicate value: \"smb-v1\""}},
        Case{"PipesOfAHostProcessPod",
             "spec: {windowsNode: {hostProcess: true, csiProxyPipes: [smb-v1]}}",
             {"spec.windowsNode.csiProxyPipes: Forbidden: a HostProcess driver reaches the host "
              "directly, not through csi-proxy"}},
        Case{"WhenVolumesUnused",
             "spec: {windowsNode: {updateStrategy: {type: WhenVolumesUnused}}}",
             {"spec.windowsNode.updateStrategy.type: Unsupported value: \"WhenVolumesUnused\": "
              "supported values: \"OnDelete\", \"RollingUpdate\""}},
        Case{"LinuxNodeSelector",
             "spec: {windowsNode: {nodeSelector: {kubernetes.io/os: linux}}}",
             {"spec.windowsNode.nodeSelector[kubernetes.io/os]: Invalid value: \"linux\": must be "
              "\"windows\" (or left out: it is added)"}},
        Case{"HostPID",
             "spec: {windowsNode: {hostPID: true}}",
             {"spec.windowsNode.hostPID: Forbidden: Windows pods cannot share the host's process "
              "namespace"}},
        Case{"LinuxPodSecurity",
             "spec: {windowsNode: {securityContext: {seccompProfile: {type: RuntimeDefault}}}}",
             {"spec.windowsNode.securityContext.seccompProfile: Forbidden: is not supported in a "
              "pod for Windows nodes"}},
        Case{"PrivilegedDriver",
             "spec: {windowsNode: {driver: {securityContext: {privileged: true}}}}",
             {"spec.windowsNode.driver.securityContext.privileged: Forbidden: is not supported "
              "in a pod for Windows nodes"}},
        Case{"SidecarCapabilities",
             "spec: {windowsNode: {registrar: {securityContext: {capabilities: {drop: [ALL]}}}}}",
             {"spec.windowsNode.registrar.securityContext.capabilities: Forbidden: is not "
              "supported in a pod for Windows nodes"}},
        Case{"LoopbackWithoutHostProcess",
             "spec: {windowsNode: {livenessProbe: {httpEndpoint: 'localhost:29643'}}}",
             {"spec.windowsNode.livenessProbe.httpEndpoint: Invalid value: \"localhost:29643\": "
              "binds to the pod's loopback interface, which the kubelet's probe reaches only in a "
              "pod on the node's network: set spec.windowsNode.hostProcess: true, or bind to "
              "every interface (\":PORT\")"}},
        Case{"DriverPortOfTheLivenessProbe",
             "spec: {windowsNode: {driver: {ports: [{containerPort: 9808}]}}}",
             {"spec.windowsNode.driver.ports[0].containerPort: Invalid value: 9808: is used by "
              "spec.windowsNode.livenessProbe.port"}},
        Case{"MountOfTheSocketDir",
             "spec: {windowsNode: {driver: {volumeMounts: [{name: kubelet-dir, mountPath: "
             "'C:\\csi'}]}}}",
             {"spec.windowsNode.driver.volumeMounts[0].mountPath: Invalid value: \"C:\\\\csi\": is "
              "mounted by the operator"}},
        Case{"NoImageAnywhere",
             "spec: {driver: {image: null}, node: {driver: {image: a}}, controller: {driver: "
             "{image: b}}, windowsNode: {}}",
             {"spec.driver.image: Required value"}}),
    [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.name); });

} // namespace
} // namespace csiop::api
