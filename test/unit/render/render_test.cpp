// Behaviour of the renderer, one property per test.
#include <gtest/gtest.h>

#include <set>

#include <csiop/api/images.hpp>
#include <csiop/api/yaml.hpp>

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
using testutil::ofKind;
using testutil::renderYaml;

TEST(Render, IsDeterministic) {
  const std::string a = dd("  storageClasses:\n  - name: s\n    parameters: {b: '2', a: '1'}\n"
                           "  node: {nodeSelector: {z: '1', a: '2'}}\n  controller: {}\n");
  const std::string b = dd("  node: {nodeSelector: {a: '2', z: '1'}}\n  controller: {}\n"
                           "  storageClasses:\n  - parameters: {a: '1', b: '2'}\n    name: s\n");
  const std::string first = api::toYamlStream(renderYaml(a));
  EXPECT_EQ(first, api::toYamlStream(renderYaml(a)));
  EXPECT_EQ(first, api::toYamlStream(renderYaml(b)));
}

TEST(Render, OrdersObjectsForApplying) {
  std::vector<std::string> kinds;
  for (const auto& o : renderYaml(dd("  controller: {}\n  storageClasses: [{name: s}]\n"))) {
    kinds.push_back(o["kind"]);
  }
  // The sidecars' shared ClusterRoles first among the RBAC, then their bindings.
  const std::vector<std::string> expected = {
      "Namespace",   "CSIDriver",   "ServiceAccount",     "ServiceAccount",
      "ClusterRole", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBinding",
      "DaemonSet",   "Deployment",  "StorageClass"};
  EXPECT_EQ(kinds, expected);
}

// A shared ClusterRole (every driver's) names no driver: the operator's labels and its own.
TEST(Render, EveryObjectCarriesTheRecommendedLabels) {
  auto d = load(dd("  controller: {replicas: 2}\n  storageClasses: [{name: s}]\n"));
  for (const auto& o : render::render(d)) {
    SCOPED_TRACE(o["kind"].get<std::string>());
    const Json& l = o["metadata"]["labels"];
    if (render::isShared(o)) {
      EXPECT_EQ(l, (Json{{"app.kubernetes.io/component", "sidecar-rbac"},
                         {"app.kubernetes.io/part-of", "csi-operator"},
                         {"app.kubernetes.io/managed-by", "csi-operator"},
                         {api::kSharedLabel, "true"}}));
      continue;
    }
    EXPECT_EQ(l["app.kubernetes.io/name"], "demo.csi.example.com");
    EXPECT_EQ(l["app.kubernetes.io/instance"], "demo");
    EXPECT_TRUE(l.contains("app.kubernetes.io/component"));
    EXPECT_EQ(l["app.kubernetes.io/part-of"], "csi-operator");
    EXPECT_EQ(l["app.kubernetes.io/managed-by"], "csi-operator");
    EXPECT_EQ(l[api::kOwnerLabel], "demo");
  }
}

TEST(Render, OwnerReferencesOnlyWithAKnownUid) {
  auto d = load(dd("  controller: {}\n"));
  for (const auto& o : render::render(d)) {
    EXPECT_FALSE(o["metadata"].contains("ownerReferences")) << o["kind"];
  }
  d.metadata["uid"] = "u-1";
  for (const auto& o : render::render(d)) {
    SCOPED_TRACE(o["kind"].get<std::string>());
    if (o["kind"] == "Namespace" || render::isShared(o)) {
      // Never owned: deleting the DriverDeployment must not delete a namespace, nor the
      // sidecars' ClusterRoles every driver binds.
      EXPECT_FALSE(o["metadata"].contains("ownerReferences"));
      continue;
    }
    const Json& ref = o["metadata"]["ownerReferences"].at(0);
    EXPECT_EQ(ref["kind"], "DriverDeployment");
    EXPECT_EQ(ref["uid"], "u-1");
    EXPECT_EQ(ref["controller"], true);
  }
  const auto objs = render::render(d);
  EXPECT_EQ((*find(objs, "CSIDriver",
                   "demo.csi.example.com"))["metadata"]["annotations"][api::kOwnerUidAnnotation],
            "u-1");
}

TEST(Render, NamespaceOnlyWhenWantedAndNotASystemOne) {
  EXPECT_NE(find(renderYaml(dd("")), "Namespace", "csi-demo"), nullptr);
  const auto ns = *find(renderYaml(dd("")), "Namespace", "csi-demo");
  EXPECT_EQ(ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "privileged");
  EXPECT_TRUE(ofKind(renderYaml(dd("  createNamespace: false\n")), "Namespace").empty());
  EXPECT_TRUE(ofKind(renderYaml(dd("  namespace: kube-system\n")), "Namespace").empty());
}

TEST(Render, CSIDriverHasEveryFieldSet) {
  const auto objs = renderYaml(dd(R"(  csiDriver:
    attachRequired: false
    podInfoOnMount: true
    volumeLifecycleModes: [Ephemeral]
    storageCapacity: true
    fsGroupPolicy: None
    tokenRequests: [{audience: a, expirationSeconds: 600}, {audience: b}]
    requiresRepublish: true
    seLinuxMount: true
    nodeAllocatableUpdatePeriodSeconds: 30
    serviceAccountTokenInSecrets: true
    preventPodSchedulingIfMissing: true
  controller: {}
)"));
  const Json expected = Json::parse(R"({"attachRequired": false, "podInfoOnMount": true,
    "volumeLifecycleModes": ["Ephemeral"], "storageCapacity": true, "fsGroupPolicy": "None",
    "tokenRequests": [{"audience": "a", "expirationSeconds": 600}, {"audience": "b"}],
    "requiresRepublish": true, "seLinuxMount": true, "nodeAllocatableUpdatePeriodSeconds": 30,
    "serviceAccountTokenInSecrets": true, "preventPodSchedulingIfMissing": true})");
  EXPECT_EQ((*find(objs, "CSIDriver", "demo.csi.example.com"))["spec"], expected);
}

TEST(Render, CSIDriverDefaultsAreExplicit) {
  const Json expected = Json::parse(R"({"attachRequired": true, "podInfoOnMount": false,
    "volumeLifecycleModes": ["Persistent"], "storageCapacity": false,
    "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false})");
  EXPECT_EQ((*find(renderYaml(dd("")), "CSIDriver", "demo.csi.example.com"))["spec"], expected);
}

TEST(Render, NodePluginLayout) {
  const auto objs = renderYaml(dd("  node: {kubeletDir: /var/lib/k0s/kubelet/}\n"));
  const Json& ds = *find(objs, "DaemonSet", "demo-node", "csi-demo");
  const Json& pod = ds["spec"]["template"]["spec"];
  EXPECT_EQ(containerNames(ds),
            (std::vector<std::string>{"csi-driver", "node-driver-registrar", "liveness-probe"}));
  EXPECT_EQ(pod["priorityClassName"], "system-node-critical");
  EXPECT_EQ(pod["serviceAccountName"], "demo-node");
  EXPECT_EQ(pod["automountServiceAccountToken"], false);
  EXPECT_EQ(pod["tolerations"], Json::parse(R"([{"operator": "Exists"}])"));
  const Json volumes = Json::parse(R"([
    {"name": "socket-dir", "hostPath": {"path": "/var/lib/k0s/kubelet/plugins/demo.csi.example.com", "type": "DirectoryOrCreate"}},
    {"name": "registration-dir", "hostPath": {"path": "/var/lib/k0s/kubelet/plugins_registry", "type": "Directory"}},
    {"name": "mountpoint-dir", "hostPath": {"path": "/var/lib/k0s/kubelet/pods", "type": "DirectoryOrCreate"}},
    {"name": "plugins-dir", "hostPath": {"path": "/var/lib/k0s/kubelet/plugins", "type": "Directory"}},
    {"name": "dev-dir", "hostPath": {"path": "/dev", "type": "Directory"}}])");
  EXPECT_EQ(pod["volumes"], volumes);

  const Json& driver = *container(ds, "csi-driver");
  EXPECT_EQ(driver["securityContext"]["privileged"], true);
  EXPECT_EQ(driver["env"][0], (Json{{"name", "CSI_ENDPOINT"}, {"value", "unix:///csi/csi.sock"}}));
  EXPECT_EQ(driver["env"][1]["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName");
  const Json mounts = Json::parse(R"([
    {"name": "socket-dir", "mountPath": "/csi"},
    {"name": "mountpoint-dir", "mountPath": "/var/lib/k0s/kubelet/pods", "mountPropagation": "Bidirectional"},
    {"name": "plugins-dir", "mountPath": "/var/lib/k0s/kubelet/plugins", "mountPropagation": "Bidirectional"},
    {"name": "dev-dir", "mountPath": "/dev"}])");
  EXPECT_EQ(driver["volumeMounts"], mounts);
  EXPECT_EQ(driver["livenessProbe"]["httpGet"]["port"], "healthz");
  EXPECT_EQ(driver["ports"][0]["containerPort"], 9808);

  const Json& registrar = *container(ds, "node-driver-registrar");
  EXPECT_EQ(registrar["args"], Json::parse(R"(["--csi-address=/csi/csi.sock",
    "--kubelet-registration-path=/var/lib/k0s/kubelet/plugins/demo.csi.example.com/csi.sock",
    "--http-endpoint=:9809"])"));
  EXPECT_EQ(registrar["volumeMounts"][1],
            (Json{{"name", "registration-dir"}, {"mountPath", "/registration"}}));
  EXPECT_EQ((*container(ds, "liveness-probe"))["args"],
            Json::parse(R"(["--csi-address=/csi/csi.sock", "--http-endpoint=:9808"])"));
}

TEST(Render, LivenessProbeCanBeTurnedOff) {
  const auto objs = renderYaml(dd("  node: {livenessProbe: {enabled: false}}\n"));
  const Json& ds = *find(objs, "DaemonSet", "demo-node", "csi-demo");
  EXPECT_EQ(containerNames(ds), (std::vector<std::string>{"csi-driver", "node-driver-registrar"}));
  EXPECT_FALSE((*container(ds, "csi-driver")).contains("livenessProbe"));
}

TEST(Render, NodeOnlyDriverHasNoController) {
  const auto objs = renderYaml(dd("  csiDriver: {attachRequired: false}\n"));
  EXPECT_TRUE(ofKind(objs, "Deployment").empty());
  EXPECT_TRUE(ofKind(objs, "StatefulSet").empty());
  EXPECT_TRUE(ofKind(objs, "ClusterRole").empty());
  EXPECT_EQ(ofKind(objs, "ServiceAccount").size(), 1u);
}

TEST(Render, OnlyTheSidecarsTheSpecNeeds) {
  auto objs = renderYaml(dd("  csiDriver: {attachRequired: false}\n  controller: {}\n"));
  EXPECT_EQ(containerNames(*find(objs, "Deployment", "demo-controller", "csi-demo")),
            (std::vector<std::string>{"csi-driver", "csi-provisioner", "liveness-probe"}));
  objs = renderYaml(dd("  controller: {resizer: {enabled: true}, snapshotter: {enabled: true}, "
                       "healthMonitor: {enabled: true}}\n"));
  EXPECT_EQ(containerNames(*find(objs, "Deployment", "demo-controller", "csi-demo")),
            (std::vector<std::string>{"csi-driver", "csi-provisioner", "csi-attacher",
                                      "csi-resizer", "csi-snapshotter",
                                      "csi-external-health-monitor-controller", "liveness-probe"}));
}

TEST(Render, SingleReplicaControllerNeverOverlaps) {
  const auto objs = renderYaml(dd("  controller: {}\n"));
  const Json& d = *find(objs, "Deployment", "demo-controller", "csi-demo");
  EXPECT_EQ(d["spec"]["replicas"], 1);
  EXPECT_EQ(d["spec"]["strategy"], (Json{{"type", "Recreate"}}));
  EXPECT_FALSE(hasArg(*container(d, "csi-provisioner"), "--leader-election"));
  EXPECT_TRUE(ofKind(objs, "Role").empty()); // no leases to manage
  EXPECT_EQ(d["spec"]["template"]["spec"]["priorityClassName"], "system-cluster-critical");
  EXPECT_EQ(d["spec"]["template"]["spec"]["volumes"],
            Json::parse(R"([{"name": "socket-dir", "emptyDir": {}}])"));
}

TEST(Render, ReplicasTurnOnLeaderElectionEverywhere) {
  const auto objs =
      renderYaml(dd("  controller:\n    replicas: 3\n"
                    "    leaderElection: {leaseDuration: 30s}\n"
                    "    resizer: {enabled: true, leaderElection: {retryPeriod: 4s}}\n"));
  const Json& d = *find(objs, "Deployment", "demo-controller", "csi-demo");
  EXPECT_FALSE(d["spec"].contains("strategy"));
  for (const char* name : {"csi-provisioner", "csi-attacher", "csi-resizer"}) {
    SCOPED_TRACE(name);
    const Json& c = *container(d, name);
    EXPECT_TRUE(hasArg(c, "--leader-election"));
    EXPECT_TRUE(hasArg(c, "--leader-election-lease-duration=30s"));
    EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"], "/healthz/leader-election");
  }
  EXPECT_TRUE(hasArg(*container(d, "csi-resizer"), "--leader-election-retry-period=4s"));
  EXPECT_FALSE(hasArg(*container(d, "csi-provisioner"), "--leader-election-retry-period=4s"));
  // A lease Role per sidecar, in the driver's namespace.
  const auto roles = ofKind(objs, "Role");
  ASSERT_EQ(roles.size(), 3u);
  for (const Json* r : roles) {
    EXPECT_EQ((*r)["metadata"]["namespace"], "csi-demo");
    EXPECT_EQ((*r)["rules"], Json::parse(R"([{"apiGroups": ["coordination.k8s.io"],
      "resources": ["leases"], "verbs": ["get", "watch", "list", "delete", "update", "create"]}])"));
  }
  // Replicas spread over nodes by default.
  EXPECT_EQ(
      d["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
       ["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]["topologyKey"],
      "kubernetes.io/hostname");
}

TEST(Render, StorageCapacityFollowsTheWorkloadKind) {
  for (const std::string kind : {"Deployment", "StatefulSet"}) {
    SCOPED_TRACE(kind);
    const auto objs = renderYaml(
        dd("  csiDriver: {storageCapacity: true}\n  controller: {kind: " + kind + "}\n"));
    const Json& w = *find(objs, kind, "demo-controller", "csi-demo");
    const Json& p = *container(w, "csi-provisioner");
    EXPECT_TRUE(hasArg(p, "--enable-capacity"));
    EXPECT_TRUE(hasArg(p, kind == "StatefulSet" ? "--capacity-ownerref-level=1"
                                                : "--capacity-ownerref-level=2"));
    EXPECT_EQ(p["env"][0]["name"], "NAMESPACE");
    EXPECT_EQ(p["env"][1]["name"], "POD_NAME");
    const Json& role = *find(objs, "Role", "csiop:demo:external-provisioner", "csi-demo");
    std::set<std::string> resources;
    for (const auto& r : role["rules"]) {
      resources.insert(r["resources"][0]);
    }
    std::set<std::string> expected = {"csistoragecapacities", "pods"};
    if (kind == "Deployment") {
      expected.insert("replicasets");
    }
    EXPECT_EQ(resources, expected);
  }
}

TEST(Render, ImageRegistryRewritesDefaultSidecarImagesOnly) {
  const auto objs =
      renderYaml(dd("  imageRegistry: mirror.example.com/csi/\n"
                    "  controller: {attacher: {image: own.example.com/attacher:v9}}\n"));
  const Json& d = *find(objs, "Deployment", "demo-controller", "csi-demo");
  EXPECT_EQ((*container(d, "csi-provisioner"))["image"],
            "mirror.example.com/csi/csi-provisioner:" +
                std::string(api::imageDefault(api::Component::Provisioner).tag));
  EXPECT_EQ((*container(d, "csi-attacher"))["image"], "own.example.com/attacher:v9");
  EXPECT_EQ((*container(d, "csi-driver"))["image"], "example.com/driver:v1");
}

TEST(Render, ResourcesDefaultPerPodThenPerSidecar) {
  const auto objs = renderYaml(dd("  node:\n    resources: {limits: {memory: 64Mi}}\n"
                                  "    registrar: {resources: {requests: {cpu: 1m}}}\n"
                                  "  controller: {}\n"));
  const Json& ds = *find(objs, "DaemonSet", "demo-node", "csi-demo");
  EXPECT_EQ((*container(ds, "csi-driver"))["resources"],
            Json::parse(R"({"limits": {"memory": "64Mi"}})"));
  EXPECT_EQ((*container(ds, "liveness-probe"))["resources"],
            Json::parse(R"({"limits": {"memory": "64Mi"}})"));
  EXPECT_EQ((*container(ds, "node-driver-registrar"))["resources"],
            Json::parse(R"({"requests": {"cpu": "1m"}})"));
  const Json& d = *find(objs, "Deployment", "demo-controller", "csi-demo");
  EXPECT_FALSE((*container(d, "csi-driver")).contains("resources"));
  EXPECT_EQ((*container(d, "csi-provisioner"))["resources"],
            Json::parse(R"({"requests": {"cpu": "10m", "memory": "20Mi"}})"));
}

TEST(Render, DriverOverridesReplaceFieldByField) {
  const auto objs = renderYaml(R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec:
  driverName: demo.csi.example.com
  driver: {image: base:v1, args: [--base]}
  controller: {driver: {args: [--controller]}}
)");
  EXPECT_EQ((*container(*find(objs, "DaemonSet", "demo-node", "csi-demo"), "csi-driver"))["args"],
            Json::array({"--base"}));
  const Json& c =
      *container(*find(objs, "Deployment", "demo-controller", "csi-demo"), "csi-driver");
  EXPECT_EQ(c["args"], Json::array({"--controller"}));
  EXPECT_EQ(c["image"], "base:v1");
}

TEST(Render, PodTemplatePatchMergesByKubernetesKeys) {
  const auto objs = renderYaml(dd(R"(  node:
    podTemplatePatch:
      metadata: {annotations: {example.com/a: b}}
      spec:
        priorityClassName: null
        dnsPolicy: Default
        containers:
        - name: csi-driver
          env: [{name: EXTRA, value: "1"}]
          volumeMounts: [{mountPath: /dev, readOnly: true}]
        - name: liveness-probe
          $patch: delete
        - name: sidecar
          image: example.com/sidecar:v1
)"));
  const Json& ds = *find(objs, "DaemonSet", "demo-node", "csi-demo");
  const Json& tmpl = ds["spec"]["template"];
  EXPECT_EQ(tmpl["metadata"]["annotations"]["example.com/a"], "b");
  EXPECT_EQ(tmpl["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"],
            "csi-driver");
  EXPECT_FALSE(tmpl["spec"].contains("priorityClassName"));
  EXPECT_EQ(tmpl["spec"]["dnsPolicy"], "Default");
  EXPECT_EQ(containerNames(ds),
            (std::vector<std::string>{"csi-driver", "node-driver-registrar", "sidecar"}));
  const Json& driver = *container(ds, "csi-driver");
  EXPECT_EQ(driver["env"].size(), 3u);
  EXPECT_EQ(driver["env"][2]["name"], "EXTRA");
  EXPECT_EQ(driver["volumeMounts"][3],
            (Json{{"name", "dev-dir"}, {"mountPath", "/dev"}, {"readOnly", true}}));
}

TEST(Render, StorageClasses) {
  const auto objs = renderYaml(dd(R"(  storageClasses:
  - name: fast
    isDefault: true
    parameters: {type: ssd}
    reclaimPolicy: Retain
    volumeBindingMode: WaitForFirstConsumer
    allowVolumeExpansion: true
    mountOptions: [noatime]
    labels: {tier: gold}
    annotations: {note: x}
)"));
  const Json& sc = *find(objs, "StorageClass", "fast");
  EXPECT_EQ(sc["provisioner"], "demo.csi.example.com");
  EXPECT_EQ(sc["parameters"], (Json{{"type", "ssd"}}));
  EXPECT_EQ(sc["reclaimPolicy"], "Retain");
  EXPECT_EQ(sc["volumeBindingMode"], "WaitForFirstConsumer");
  EXPECT_EQ(sc["allowVolumeExpansion"], true);
  EXPECT_EQ(sc["mountOptions"], Json::array({"noatime"}));
  EXPECT_EQ(sc["metadata"]["labels"]["tier"], "gold");
  EXPECT_EQ(sc["metadata"]["annotations"],
            (Json{{"note", "x"}, {"storageclass.kubernetes.io/is-default-class", "true"}}));
}

TEST(Render, HostNetworkUsesClusterDns) {
  const auto objs = renderYaml(dd("  node: {hostNetwork: true}\n"));
  const Json& pod = (*find(objs, "DaemonSet", "demo-node", "csi-demo"))["spec"]["template"]["spec"];
  EXPECT_EQ(pod["hostNetwork"], true);
  EXPECT_EQ(pod["dnsPolicy"], "ClusterFirstWithHostNet");
}

TEST(Render, ImagePullSecretsOnEveryPod) {
  const auto objs = renderYaml(dd("  imagePullSecrets: [{name: regcred}]\n  controller: {}\n"));
  for (const char* kind : {"DaemonSet", "Deployment"}) {
    EXPECT_EQ((*ofKind(objs, kind).at(0))["spec"]["template"]["spec"]["imagePullSecrets"],
              Json::parse(R"([{"name": "regcred"}])"));
  }
}

} // namespace
} // namespace csiop
