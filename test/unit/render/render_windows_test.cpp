// spec.windowsNode: the node plugin of Windows nodes. The csi-proxy mode is checked fact by fact
// against csi-driver-smb's in vendors/csi_driver_smb_test.cpp; here the HostProcess mode, what
// the Windows pod does not inherit from spec.driver, and the patched pod's checks.
#include <gtest/gtest.h>

#include <csiop/render/check.hpp>

#include "../common/render_test_util.hpp"

namespace csiop {
namespace {

using api::Json;
using testutil::container;
using testutil::find;

const char* const kWindowsNode = R"(  node:
    kubeletDir: /var/lib/k0s/kubelet
  windowsNode:
)";

TEST(RenderWindows, AHostProcessPodMountsNothingAndRunsAsSystemOnTheHostsNetwork) {
  const auto objs =
      testutil::renderYaml(testutil::dd(std::string(kWindowsNode) + R"(    hostProcess: true
    kubeletDir: 'D:\kubelet\'
    driver:
      image: example.com/driver:v1-windows-hp
      command: [driver.exe]
)"));
  const Json* ds = find(objs, "DaemonSet", "demo-node-windows", "csi-demo");
  ASSERT_NE(ds, nullptr);
  const Json& pod = (*ds)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["securityContext"], Json::parse(R"({"windowsOptions": {"hostProcess": true,
      "runAsUserName": "NT AUTHORITY\\SYSTEM"}})"));
  EXPECT_EQ(pod["hostNetwork"], true);
  EXPECT_EQ(pod["dnsPolicy"], "ClusterFirstWithHostNet");
  EXPECT_EQ(pod["volumes"], Json::parse(R"([{"name": "socket-dir", "hostPath":
      {"path": "D:\\kubelet\\plugins\\demo.csi.example.com", "type": "DirectoryOrCreate"}}])"));
  const Json* d = container(*ds, "csi-driver");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ((*d)["command"], Json::array({"driver.exe"}));
  EXPECT_EQ((*d)["env"][0]["value"], "unix://D:\\kubelet\\plugins\\demo.csi.example.com\\csi.sock");
  EXPECT_FALSE(d->contains("volumeMounts"));
  const Json* r = container(*ds, "node-driver-registrar");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ((*r)["command"], Json::array({"csi-node-driver-registrar.exe"}));
  EXPECT_EQ((*r)["args"], Json::parse(R"json([
      "--csi-address=unix://D:\\kubelet\\plugins\\demo.csi.example.com\\csi.sock",
      "--kubelet-registration-path=D:\\kubelet\\plugins\\demo.csi.example.com\\csi.sock",
      "--plugin-registration-path=D:\\kubelet\\plugins_registry", "--http-endpoint=:9809"])json"));
  EXPECT_FALSE(r->contains("volumeMounts"));
  const Json* l = container(*ds, "liveness-probe");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ((*l)["command"], Json::array({"livenessprobe.exe"}));
}

TEST(RenderWindows, TheDriverTakesSpecDriverButTheLinuxPodsFields) {
  const std::string yaml = R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec:
  driverName: demo.csi.example.com
  driver:
    name: demo-plugin
    image: example.com/driver:v1
    command: [/bin/driver]
    args: [--v=2]
    env: [{name: LOG, value: debug}]
    securityContext: {privileged: true}
    volumes: [{name: etc, hostPath: {path: /etc}}]
    volumeMounts: [{name: etc, mountPath: /host/etc}]
  windowsNode:
    securityContext: {windowsOptions: {runAsUserName: ContainerAdministrator}}
)";
  const auto objs = testutil::renderYaml(yaml);
  const Json* ds = find(objs, "DaemonSet", "demo-node-windows", "csi-demo");
  ASSERT_NE(ds, nullptr);
  const Json* d = container(*ds, "demo-plugin");
  ASSERT_NE(d, nullptr) << "the driver container's name is spec.driver's";
  EXPECT_EQ((*d)["image"], "example.com/driver:v1");
  EXPECT_EQ((*d)["args"], Json::array({"--v=2"}));
  EXPECT_EQ((*d)["env"][2], Json::parse(R"({"name": "LOG", "value": "debug"})"));
  EXPECT_FALSE(d->contains("command"));
  EXPECT_FALSE(d->contains("securityContext"));
  EXPECT_EQ((*d)["volumeMounts"].dump().find("/host/etc"), std::string::npos);
  const Json& pod = (*ds)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["volumes"].dump().find("\"etc\""), std::string::npos);
  EXPECT_EQ(pod["securityContext"],
            Json::parse(R"({"windowsOptions": {"runAsUserName": "ContainerAdministrator"}})"));
  EXPECT_EQ(pod["os"], (Json{{"name", "windows"}}));
  EXPECT_EQ(pod["automountServiceAccountToken"], false);
  EXPECT_EQ((*ds)["spec"]["template"]["metadata"]["annotations"]
                 ["kubectl.kubernetes.io/default-container"],
            "demo-plugin");
  // The Linux node plugin is untouched, and only for Linux nodes.
  const Json* linux = find(objs, "DaemonSet", "demo-node", "csi-demo");
  ASSERT_NE(linux, nullptr);
  EXPECT_EQ((*linux)["spec"]["template"]["spec"]["nodeSelector"],
            (Json{{"kubernetes.io/os", "linux"}}));
  EXPECT_EQ((*container(*linux, "demo-plugin"))["securityContext"]["privileged"], true);
}

TEST(RenderWindows, ADisabledWindowsNodeRendersNothing) {
  const auto objs = testutil::renderYaml(testutil::dd("  windowsNode:\n    enabled: false\n"));
  EXPECT_EQ(find(objs, "DaemonSet", "demo-node-windows", "csi-demo"), nullptr);
}

TEST(RenderWindows, APatchIsCheckedAgainstTheWindowsPodsPaths) {
  const auto dd = testutil::load(testutil::dd(R"(  windowsNode:
    podTemplatePatch:
      spec:
        containers:
        - name: node-driver-registrar
          volumeMounts:
          - {mountPath: 'C:\registration', $patch: delete}
)"));
  const auto errors = render::checkRendered(dd);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message(),
            "spec.windowsNode.podTemplatePatch: Forbidden: after the patch, container "
            "\"node-driver-registrar\" does not mount volume \"registration-dir\" at "
            "C:\\registration, the kubelet's plugin registry");
}

} // namespace
} // namespace csiop
