// The pods' settings as rendered: sidecar security and endpoints, the driver container's
// probes and hooks, pod-level fields, the containers a user adds, the controller's strategy.
#include <gtest/gtest.h>

#include "../common/render_test_util.hpp"

namespace csiop {
namespace {

using api::Json;
using testutil::container;
using testutil::containerNames;
using testutil::dd;
using testutil::find;
using testutil::hasArg;
using testutil::load;
using testutil::renderYaml;

const Json& nodePlugin(const std::vector<Json>& objs) {
  return *find(objs, "DaemonSet", "demo-node", "csi-demo");
}

const Json& controllerPlugin(const std::vector<Json>& objs, const char* kind = "Deployment") {
  return *find(objs, kind, "demo-controller", "csi-demo");
}

const Json kUnprivileged = Json{{"allowPrivilegeEscalation", false},
                                {"capabilities", {{"drop", Json::array({"ALL"})}}},
                                {"readOnlyRootFilesystem", true}};

TEST(RenderPods, EverySidecarRunsUnprivilegedWhateverTheDriver) {
  // The drivers are privileged in both pods here; no sidecar follows them.
  const auto objs = renderYaml(dd(R"(    securityContext: {privileged: true}
  controller:
    replicas: 2
    resizer: {enabled: true}
    snapshotter: {enabled: true}
    healthMonitor: {enabled: true}
)"));
  for (const auto* w : {&nodePlugin(objs), &controllerPlugin(objs)}) {
    for (const auto& c : (*w)["spec"]["template"]["spec"]["containers"]) {
      SCOPED_TRACE(c["name"].get<std::string>());
      if (c["name"] == "csi-driver") {
        EXPECT_EQ(c["securityContext"], (Json{{"privileged", true}}));
      } else {
        EXPECT_EQ(c["securityContext"], kUnprivileged);
      }
    }
  }
}

TEST(RenderPods, SidecarsInTheNodePluginRunUnprivilegedToo) {
  const auto objs = renderYaml(dd("  controller: {placement: NodePlugin}\n"));
  const Json& ds = nodePlugin(objs);
  for (const char* name :
       {"node-driver-registrar", "liveness-probe", "csi-provisioner", "csi-attacher"}) {
    EXPECT_EQ((*container(ds, name))["securityContext"], kUnprivileged) << name;
  }
  EXPECT_EQ((*container(ds, "csi-driver"))["securityContext"], (Json{{"privileged", true}}));
}

TEST(RenderPods, ASidecarsOwnSecurityContextReplacesTheDefault) {
  const auto objs = renderYaml(dd(R"(  node:
    registrar: {securityContext: {seLinuxOptions: {type: spc_t}}}
  controller:
    provisioner: {securityContext: {runAsUser: 65532}}
)"));
  EXPECT_EQ((*container(nodePlugin(objs), "node-driver-registrar"))["securityContext"],
            (Json{{"seLinuxOptions", {{"type", "spc_t"}}}}));
  EXPECT_EQ((*container(controllerPlugin(objs), "csi-provisioner"))["securityContext"],
            (Json{{"runAsUser", 65532}}));
  EXPECT_EQ((*container(controllerPlugin(objs), "csi-attacher"))["securityContext"], kUnprivileged);
}

TEST(RenderPods, LivenessprobeServesOnHttpEndpointNotTheDeprecatedHealthPort) {
  const auto objs = renderYaml(dd("  node: {livenessProbe: {port: 9900}}\n  controller: {}\n"));
  const Json& node = *container(nodePlugin(objs), "liveness-probe");
  EXPECT_EQ(node["args"], (Json::array({"--csi-address=/csi/csi.sock", "--http-endpoint=:9900"})));
  const Json& ctrl = *container(controllerPlugin(objs), "liveness-probe");
  EXPECT_TRUE(hasArg(ctrl, "--http-endpoint=:9808"));
  for (const auto& a : ctrl["args"]) {
    EXPECT_EQ(a.get<std::string>().find("--health-port"), std::string::npos);
  }
}

TEST(RenderPods, LoopbackEndpointsAreProbedOnTheLoopback) {
  const auto objs = renderYaml(dd(R"(  node:
    hostNetwork: true
    registrar: {httpEndpoint: "localhost:19809"}
    livenessProbe:
      httpEndpoint: "localhost:29653"
      initialDelaySeconds: 30
      timeoutSeconds: 10
      periodSeconds: 30
      failureThreshold: 5
)"));
  const Json& ds = nodePlugin(objs);
  const Json& registrar = *container(ds, "node-driver-registrar");
  EXPECT_TRUE(hasArg(registrar, "--http-endpoint=localhost:19809"));
  EXPECT_EQ(registrar["ports"][0]["containerPort"], 19809);
  EXPECT_EQ(registrar["livenessProbe"]["httpGet"]["host"], "localhost");
  EXPECT_TRUE(hasArg(*container(ds, "liveness-probe"), "--http-endpoint=localhost:29653"));
  const Json& driver = *container(ds, "csi-driver");
  EXPECT_EQ(driver["livenessProbe"],
            (Json{{"httpGet", {{"path", "/healthz"}, {"port", "healthz"}, {"host", "localhost"}}},
                  {"initialDelaySeconds", 30},
                  {"timeoutSeconds", 10},
                  {"periodSeconds", 30},
                  {"failureThreshold", 5}}));
  EXPECT_EQ(driver["ports"][0]["containerPort"], 29653);
  EXPECT_EQ(ds["spec"]["template"]["spec"]["dnsPolicy"], "ClusterFirstWithHostNet");
}

TEST(RenderPods, AnEndpointOfNoneRendersNoFlagPortOrProbe) {
  const auto objs = renderYaml(dd(R"(  node:
    registrar: {httpEndpoint: ""}
  controller:
    replicas: 2
    provisioner: {httpEndpoint: ""}
)"));
  const Json& registrar = *container(nodePlugin(objs), "node-driver-registrar");
  const Json& provisioner = *container(controllerPlugin(objs), "csi-provisioner");
  for (const Json* c : {&registrar, &provisioner}) {
    for (const auto& a : (*c)["args"]) {
      EXPECT_FALSE(a.get<std::string>().starts_with("--http-endpoint")) << a;
    }
    EXPECT_FALSE(c->contains("ports"));
    EXPECT_FALSE(c->contains("livenessProbe"));
  }
  EXPECT_TRUE(hasArg(provisioner, "--leader-election"));
  EXPECT_TRUE(hasArg(*container(controllerPlugin(objs), "csi-attacher"), "--http-endpoint=:8081"));
}

TEST(RenderPods, SidecarCommandAndEnvFollowTheGeneratedOnes) {
  const auto objs = renderYaml(dd(R"(  csiDriver: {storageCapacity: true}
  controller:
    provisioner:
      command: [/bin/all-in-one, provisioner]
      env: [{name: GODEBUG, value: "x=1"}]
)"));
  const Json& p = *container(controllerPlugin(objs), "csi-provisioner");
  EXPECT_EQ(p["command"], (Json::array({"/bin/all-in-one", "provisioner"})));
  ASSERT_EQ(p["env"].size(), 3u);
  EXPECT_EQ(p["env"][0]["name"], "NAMESPACE");
  EXPECT_EQ(p["env"][1]["name"], "POD_NAME");
  EXPECT_EQ(p["env"][2], (Json{{"name", "GODEBUG"}, {"value", "x=1"}}));
  EXPECT_FALSE((*container(controllerPlugin(objs), "csi-attacher")).contains("env"));
}

TEST(RenderPods, DriverProbesAndHooks) {
  const auto objs = renderYaml(
      dd(R"(    readinessProbe: {httpGet: {path: /healthz, port: healthz}, periodSeconds: 5}
    lifecycle: {preStop: {exec: {command: [/bin/driver, pre-stop-hook]}}}
  node:
    driver: {startupProbe: {tcpSocket: {port: 9808}}}
  controller: {}
)"));
  const Json& node = *container(nodePlugin(objs), "csi-driver");
  EXPECT_EQ(node["readinessProbe"]["periodSeconds"], 5);
  EXPECT_EQ(node["startupProbe"]["tcpSocket"]["port"], 9808);
  EXPECT_EQ(node["lifecycle"]["preStop"]["exec"]["command"][1], "pre-stop-hook");
  const Json& ctrl = *container(controllerPlugin(objs), "csi-driver");
  EXPECT_TRUE(ctrl.contains("readinessProbe"));
  EXPECT_FALSE(ctrl.contains("startupProbe"));
}

TEST(RenderPods, PodSettings) {
  const auto objs = renderYaml(dd(R"(  node:
    priorityClassName: ""
    securityContext: {seccompProfile: {type: RuntimeDefault}}
    hostPID: true
    terminationGracePeriodSeconds: 10
    podLabels: {team: storage}
    podAnnotations: {example.com/scrape: "true"}
  controller:
    hostNetwork: true
)"));
  const Json& tmpl = nodePlugin(objs)["spec"]["template"];
  const Json& spec = tmpl["spec"];
  EXPECT_FALSE(spec.contains("priorityClassName"));
  EXPECT_EQ(spec["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
  EXPECT_EQ(spec["hostPID"], true);
  EXPECT_FALSE(spec.contains("hostNetwork"));
  EXPECT_FALSE(spec.contains("dnsPolicy"));
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 10);
  EXPECT_EQ(tmpl["metadata"]["labels"]["team"], "storage");
  EXPECT_EQ(tmpl["metadata"]["labels"]["app.kubernetes.io/instance"], "demo");
  EXPECT_EQ(tmpl["metadata"]["annotations"]["example.com/scrape"], "true");
  EXPECT_EQ(tmpl["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"],
            "csi-driver");
  const Json& ctrl = controllerPlugin(objs)["spec"]["template"]["spec"];
  EXPECT_EQ(ctrl["priorityClassName"], "system-cluster-critical");
  EXPECT_EQ(ctrl["hostNetwork"], true);
  EXPECT_EQ(ctrl["dnsPolicy"], "ClusterFirstWithHostNet");
}

TEST(RenderPods, InitAndExtraContainersAroundTheOperators) {
  const auto objs = renderYaml(dd(R"(  node:
    initContainers: [{name: prepare, image: busybox}]
    extraContainers: [{name: agent, image: example.com/agent:v1}]
  controller:
    extraContainers: [{name: exporter, image: example.com/exporter:v1}]
)"));
  const Json& ds = nodePlugin(objs);
  EXPECT_EQ(ds["spec"]["template"]["spec"]["initContainers"][0]["name"], "prepare");
  EXPECT_EQ(containerNames(ds), (std::vector<std::string>{"csi-driver", "node-driver-registrar",
                                                          "liveness-probe", "agent"}));
  EXPECT_EQ(containerNames(controllerPlugin(objs)).back(), "exporter");
  EXPECT_FALSE(controllerPlugin(objs)["spec"]["template"]["spec"].contains("initContainers"));
}

// Linux nodes by default; a selector given replaces it; {} is no node selector at all, for
// clusters where every node (or a DaemonSet's tolerations) decides, as most vendors deploy.
TEST(RenderPods, NodeSelectorsDefaultToLinuxAndAnEmptyOneSelectsEveryNode) {
  const auto selectors = [](const std::string& spec) {
    const auto objs = renderYaml(dd(spec));
    const Json& node = nodePlugin(objs)["spec"]["template"]["spec"];
    const Json& controller = controllerPlugin(objs)["spec"]["template"]["spec"];
    return std::pair{node.value("nodeSelector", Json()), controller.value("nodeSelector", Json())};
  };
  const Json linux = {{"kubernetes.io/os", "linux"}};
  EXPECT_EQ(selectors("  controller: {}\n"), std::pair(linux, linux));
  EXPECT_EQ(selectors("  node: {nodeSelector: {}}\n  controller: {nodeSelector: {}}\n"),
            std::pair(Json(), Json()));
  EXPECT_EQ(
      selectors("  node: {nodeSelector: {pool: csi}}\n"
                "  controller: {nodeSelector: {node-role.kubernetes.io/control-plane: \"\"}}\n"),
      std::pair(Json{{"pool", "csi"}}, Json{{"node-role.kubernetes.io/control-plane", ""}}));
}

TEST(RenderPods, ControllerStrategy) {
  auto objs = renderYaml(
      dd("  controller: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0}}}\n"));
  EXPECT_EQ(controllerPlugin(objs)["spec"]["strategy"],
            (Json{{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 0}}}}));
  // Without one, a Deployment whose sidecars elect no leader is replaced, never overlapped.
  objs = renderYaml(dd("  controller: {}\n"));
  EXPECT_EQ(controllerPlugin(objs)["spec"]["strategy"], (Json{{"type", "Recreate"}}));
  objs = renderYaml(dd("  controller: {kind: StatefulSet, strategy: {type: OnDelete}}\n"));
  EXPECT_EQ(controllerPlugin(objs, "StatefulSet")["spec"]["updateStrategy"],
            (Json{{"type", "OnDelete"}}));
}

} // namespace
} // namespace csiop
