// The JuiceFS CSI driver (examples/juicefs.yaml) against the vendor's own manifest of release
// v0.32.4 (github.com/juicedata/juicefs-csi-driver, tag v0.32.4, commit 5e5a4b3b9b82):
// deploy/k8s.yaml, the `kustomize build` of deploy/kubernetes/release/ (base/resources.yaml with
// base/*_resource.yaml and release/statefulset.yaml applied). The CSIDriver, the node plugin and
// controller pods container by container, the driver's RBAC, its ConfigMap and the StorageClass
// of the vendor's docs. Where the operator deliberately differs, the test says so.
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "vendor_facts.hpp"

namespace csiop::vendors {
namespace {

const char* kNamespace = "csi-juicefs";
const char* kImage = "juicedata/juicefs-csi-driver:v0.32.4";
const char* kLivenessImage = "registry.k8s.io/sig-storage/livenessprobe:v2.11.0";

const std::vector<Json>& objects() {
  static const std::vector<Json> objs = renderExample("juicefs");
  return objs;
}

// A copy of a rendered object (or null, and a failure): lookups of keys it lacks then read
// as null instead of tripping the const operator[]'s assertion.
Json obj(const std::string& kind, const std::string& name, const std::string& ns = "") {
  return get(objects(), kind, name, ns);
}

Json nodePlugin() {
  return obj("DaemonSet", "juicefs-node", kNamespace);
}

Json controller() {
  return obj("StatefulSet", "juicefs-controller", kNamespace);
}

// The driver's liveness probe on the livenessprobe sidecar's 9909 (named healthz), with the
// vendor's timings; and the driver's resources (deploy/kubernetes/base/*_resource.yaml).
void expectProbeAndResources(Json driver) {
  EXPECT_TRUE(same(driver["ports"], R"([{"name": "healthz", "containerPort": 9909,
      "protocol": "TCP"}])"));
  EXPECT_TRUE(same(driver["livenessProbe"], R"({"httpGet": {"path": "/healthz",
      "port": "healthz"}, "initialDelaySeconds": 10, "timeoutSeconds": 3, "periodSeconds": 10,
      "failureThreshold": 5})"));
  EXPECT_TRUE(same(driver["resources"], R"({"limits": {"cpu": "1", "memory": "1Gi"},
      "requests": {"cpu": "100m", "memory": "512Mi"}})"));
}

// deploy/k8s.yaml, CSIDriver csi.juicefs.com.
TEST(VendorJuiceFs, CSIDriverIsTheVendors) {
  // attachRequired and podInfoOnMount as the vendor's; the rest are the server's defaults,
  // written out by the operator.
  EXPECT_TRUE(same(obj("CSIDriver", "csi.juicefs.com")["spec"],
                   R"({"attachRequired": false, "podInfoOnMount": true,
      "volumeLifecycleModes": ["Persistent"], "storageCapacity": false,
      "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false})"));
}

// deploy/k8s.yaml, DaemonSet juicefs-csi-node: the pod.
TEST(VendorJuiceFs, NodePluginPod) {
  Json spec = podSpec(nodePlugin());
  // Mount pods copy the node plugin pod's DNS policy, host network, tolerations and
  // ServiceAccount.
  EXPECT_EQ(spec["dnsPolicy"], "ClusterFirstWithHostNet");
  EXPECT_FALSE(spec.contains("hostNetwork"));
  EXPECT_FALSE(spec.contains("hostPID"));
  EXPECT_TRUE(same(spec["tolerations"], R"([{"key": "CriticalAddonsOnly",
      "operator": "Exists"}])"));
  EXPECT_EQ(spec["priorityClassName"], "system-node-critical");
  EXPECT_EQ(spec["serviceAccountName"], "juicefs-node");
  EXPECT_EQ(spec["automountServiceAccountToken"], true);
  // The controller and the mount controller find the node plugin pods by this label.
  EXPECT_EQ(nodePlugin()["spec"]["template"]["metadata"]["labels"]["app"], "juicefs-csi-node");
  EXPECT_FALSE(nodePlugin()["spec"].contains("updateStrategy"));
  EXPECT_EQ(
      testutil::containerNames(nodePlugin()),
      (std::vector<std::string>{"juicefs-plugin", "node-driver-registrar", "liveness-probe"}));
}

// deploy/k8s.yaml, DaemonSet juicefs-csi-node, container juicefs-plugin.
TEST(VendorJuiceFs, NodeDriverContainer) {
  Json c = containerOf(nodePlugin(), "juicefs-plugin");
  EXPECT_EQ(c["image"], kImage);
  EXPECT_EQ(c["args"], Json::parse(R"j(["--endpoint=$(CSI_ENDPOINT)", "--logtostderr",
      "--nodeid=$(NODE_NAME)", "--enable-manager=true", "--config=/etc/config/config.yaml"])j"));
  // The vendor's unix:/csi/csi.sock, spelled with the operator's three slashes.
  EXPECT_EQ(envValue(c, "CSI_ENDPOINT"), "unix:///csi/csi.sock");
  expectEnvFrom(c, "NODE_NAME", "spec.nodeName");
  expectEnvFrom(c, "JUICEFS_MOUNT_NAMESPACE", "metadata.namespace");
  expectEnvFrom(c, "POD_NAME", "metadata.name");
  expectEnvFrom(c, "HOST_IP", "status.hostIP");
  EXPECT_EQ(envValue(c, "KUBELET_PORT"), "10250");
  EXPECT_EQ(envValue(c, "JUICEFS_MOUNT_PATH"), "/var/lib/juicefs/volume");
  EXPECT_EQ(envValue(c, "JUICEFS_CONFIG_PATH"), "/var/lib/juicefs/config");
  EXPECT_TRUE(same(c["securityContext"], R"({"privileged": true})"));
  expectProbeAndResources(c);
  expectMounts(
      nodePlugin(), c,
      {// The vendor's socket directory is <kubelet>/csi-plugins/csi.juicefs.com/.
       {"/csi",
        R"({"hostPath": {"path": "/var/lib/kubelet/plugins/csi.juicefs.com",
            "type": "DirectoryOrCreate"}})",
        "", false},
       // The vendor's whole kubelet directory, Bidirectional: the operator's own mounts of its
       // pods and plugins directories are left out (two Bidirectional mounts of one host tree,
       // one inside the other, would propagate each mount back onto it once more).
       {"/var/lib/kubelet", R"({"hostPath": {"path": "/var/lib/kubelet", "type": "Directory"}})",
        "Bidirectional", false},
       {"/dev", R"({"hostPath": {"path": "/dev", "type": "Directory"}})", "", false},
       {"/jfs", R"({"hostPath": {"path": "/var/lib/juicefs/volume", "type": "DirectoryOrCreate"}})",
        "Bidirectional", false},
       {"/root/.juicefs",
        R"({"hostPath": {"path": "/var/lib/juicefs/config", "type": "DirectoryOrCreate"}})",
        "Bidirectional", false},
       {"/etc/config",
        R"({"configMap": {"name": "juicefs-csi-driver-config", "defaultMode": 420}})", "", false},
       {"/tmp", R"({"hostPath": {"path": "/var/run/juicefs-csi", "type": "DirectoryOrCreate"}})",
        "", false}});
  // The driver reads the kubelet's root directory from the pod volume of this name.
  EXPECT_EQ(named(podSpec(nodePlugin())["volumes"], "kubelet-dir")["hostPath"]["path"],
            "/var/lib/kubelet");
}

// deploy/k8s.yaml, DaemonSet juicefs-csi-node, containers node-driver-registrar and
// liveness-probe.
TEST(VendorJuiceFs, NodeSidecars) {
  Json reg = containerOf(nodePlugin(), "node-driver-registrar");
  EXPECT_EQ(reg["image"], "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.9.0");
  EXPECT_EQ(reg["args"], Json::parse(R"(["--csi-address=/csi/csi.sock",
      "--kubelet-registration-path=/var/lib/kubelet/plugins/csi.juicefs.com/csi.sock",
      "--v=5"])"));
  EXPECT_FALSE(reg.contains("ports")) << "no HTTP endpoint, as the vendor's";
  EXPECT_FALSE(reg.contains("livenessProbe"));
  expectMounts(
      nodePlugin(), reg,
      {{"/csi",
        R"({"hostPath": {"path": "/var/lib/kubelet/plugins/csi.juicefs.com",
            "type": "DirectoryOrCreate"}})",
        "", false},
       {"/registration",
        R"({"hostPath": {"path": "/var/lib/kubelet/plugins_registry", "type": "Directory"}})", "",
        false}});

  Json live = containerOf(nodePlugin(), "liveness-probe");
  EXPECT_EQ(live["image"], kLivenessImage);
  // The vendor's --health-port=9909, as --http-endpoint (the same port on every interface).
  EXPECT_EQ(live["args"],
            Json::parse(R"(["--csi-address=/csi/csi.sock", "--http-endpoint=:9909"])"));
}

// deploy/k8s.yaml, StatefulSet juicefs-csi-controller: the pod.
TEST(VendorJuiceFs, ControllerPodIsAStatefulSetOfTwo) {
  Json s = controller();
  EXPECT_EQ(s["spec"]["replicas"], 2);
  EXPECT_FALSE(s["spec"].contains("updateStrategy"));
  Json spec = podSpec(s);
  EXPECT_EQ(spec["priorityClassName"], "system-cluster-critical");
  EXPECT_EQ(spec["serviceAccountName"], "juicefs-controller");
  EXPECT_TRUE(same(spec["tolerations"], R"([{"key": "CriticalAddonsOnly",
      "operator": "Exists"}])"));
  EXPECT_TRUE(same(spec["affinity"], "{}")) << "no spread over nodes, as the vendor's";
  EXPECT_FALSE(spec.contains("hostNetwork"));
  EXPECT_EQ(s["spec"]["template"]["metadata"]["labels"]["app"], "juicefs-csi-controller");
  // No attacher (attachRequired false) and no snapshotter (commented out by the vendor).
  EXPECT_EQ(testutil::containerNames(s),
            (std::vector<std::string>{"juicefs-plugin", "csi-provisioner", "csi-resizer",
                                      "liveness-probe"}));
}

// deploy/k8s.yaml, StatefulSet juicefs-csi-controller, container juicefs-plugin.
TEST(VendorJuiceFs, ControllerDriverContainer) {
  Json c = containerOf(controller(), "juicefs-plugin");
  EXPECT_EQ(c["image"], kImage);
  EXPECT_EQ(c["args"], Json::parse(R"j(["--endpoint=$(CSI_ENDPOINT)", "--logtostderr",
      "--nodeid=$(NODE_NAME)", "--leader-election", "--config=/etc/config/config.yaml"])j"));
  EXPECT_EQ(envValue(c, "CSI_ENDPOINT"), "unix:///csi/csi.sock");
  expectEnvFrom(c, "NODE_NAME", "spec.nodeName");
  expectEnvFrom(c, "JUICEFS_MOUNT_NAMESPACE", "metadata.namespace");
  expectEnvFrom(c, "POD_NAME", "metadata.name");
  EXPECT_EQ(envValue(c, "JUICEFS_MOUNT_PATH"), "/var/lib/juicefs/volume");
  EXPECT_EQ(envValue(c, "JUICEFS_CONFIG_PATH"), "/var/lib/juicefs/config");
  EXPECT_FALSE(named(c["env"], "HOST_IP").is_object()) << "node plugin only";
  // Not the vendor's: the DaemonSet its controller falls back to is the operator's.
  EXPECT_EQ(envValue(c, "JUICEFS_CSI_NODE_DS_NAME"), nodePlugin()["metadata"]["name"]);
  EXPECT_TRUE(same(c["securityContext"], R"({"privileged": true,
      "capabilities": {"add": ["SYS_ADMIN"]}})"));
  expectProbeAndResources(c);
  expectMounts(
      controller(), c,
      {// The vendor's socket-dir emptyDir at /var/lib/csi/sockets/pluginproxy/.
       {"/csi", R"({"emptyDir": {}})", "", false},
       {"/jfs", R"({"hostPath": {"path": "/var/lib/juicefs/volume", "type": "DirectoryOrCreate"}})",
        "Bidirectional", false},
       {"/root/.juicefs",
        R"({"hostPath": {"path": "/var/lib/juicefs/config", "type": "DirectoryOrCreate"}})",
        "Bidirectional", false},
       {"/etc/config",
        R"({"configMap": {"name": "juicefs-csi-driver-config", "defaultMode": 420}})", "", false}});
}

// deploy/k8s.yaml, StatefulSet juicefs-csi-controller, containers csi-provisioner, csi-resizer
// and liveness-probe: the vendor's images and flags, under leader election, without an HTTP
// endpoint.
TEST(VendorJuiceFs, ControllerSidecars) {
  const std::vector<std::tuple<std::string, std::string, std::string>> want = {
      {"csi-provisioner", "registry.k8s.io/sig-storage/csi-provisioner:v3.6.0",
       R"(["--csi-address=/csi/csi.sock", "--leader-election", "--timeout=60s", "--v=5"])"},
      {"csi-resizer", "registry.k8s.io/sig-storage/csi-resizer:v1.9.0",
       R"(["--csi-address=/csi/csi.sock", "--leader-election", "--timeout=20s", "--v=2"])"},
      {"liveness-probe", kLivenessImage,
       R"(["--csi-address=/csi/csi.sock", "--http-endpoint=:9909"])"},
  };
  for (const auto& [name, image, args] : want) {
    Json c = containerOf(controller(), name);
    EXPECT_EQ(c["image"], image) << name;
    EXPECT_EQ(c["args"], Json::parse(args)) << name;
    EXPECT_FALSE(c.contains("ports")) << name;
    EXPECT_FALSE(c.contains("livenessProbe")) << name;
    expectMounts(controller(), c, {{"/csi", R"({"emptyDir": {}})", "", false}});
  }
}

// deploy/k8s.yaml, ClusterRole juicefs-csi-external-node-service-role (bound to the node
// plugin's ServiceAccount).
TEST(VendorJuiceFs, NodePluginRulesAreTheVendorsClusterRole) {
  Json role = obj("ClusterRole", "csiop:juicefs:node-driver");
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> rules = {
      {"", "pods", {"get", "list", "create", "update", "delete", "patch", "watch"}},
      {"", "pods/log", {"get"}},
      {"", "secrets", {"get", "create", "update", "delete", "patch"}},
      {"batch", "jobs", {"get", "create", "update", "delete", "patch"}},
      {"", "nodes", {"get", "list"}},
      {"", "nodes/proxy", {"get", "create"}}, // "*" in the vendor's, spelled out
      {"", "persistentvolumes", {"get", "list"}},
      {"", "persistentvolumeclaims", {"get", "list"}},
      {"", "pods/exec", {"create"}},
      {"", "events", {"create", "get"}},
      {"storage.k8s.io", "storageclasses", {"get", "watch"}},
      {"", "configmaps", {"get", "update"}},
  };
  for (const auto& [group, resource, verbs] : rules) {
    EXPECT_TRUE(grants(role, group, resource, verbs)) << group << "/" << resource;
  }
  EXPECT_EQ(role["rules"].size(), 12U);
  // The vendor's "*", spelled out: every verb the kubelet API maps its methods to.
  EXPECT_TRUE(same(role["rules"][5], R"({"apiGroups": [""], "resources": ["nodes/proxy"],
      "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]})"));
  EXPECT_FALSE(grants(role, "", "secrets", {"list"}));
  Json binding = obj("ClusterRoleBinding", "csiop:juicefs:node-driver");
  EXPECT_EQ(binding["subjects"][0]["name"], "juicefs-node");
  EXPECT_EQ(binding["subjects"][0]["namespace"], kNamespace);
}

// deploy/k8s.yaml, ClusterRole juicefs-external-provisioner-role (bound to the controller's
// ServiceAccount); its juicefs-external-snapshotter-role serves no container and is left out.
TEST(VendorJuiceFs, ControllerRulesAreTheVendorsClusterRole) {
  Json role = obj("ClusterRole", "csiop:juicefs:controller-driver");
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> rules = {
      {"", "persistentvolumes", {"get", "list", "watch", "create", "delete", "patch"}},
      {"", "persistentvolumeclaims", {"get", "list", "watch", "update", "patch"}},
      {"", "persistentvolumeclaims/status", {"get", "list", "watch", "update", "patch"}},
      {"storage.k8s.io", "storageclasses", {"get", "list", "watch"}},
      {"", "events", {"list", "watch", "create", "update", "patch"}},
      {"storage.k8s.io", "csinodes", {"get", "list", "watch"}},
      {"", "nodes", {"get", "list", "watch"}},
      {"", "secrets", {"get", "list", "watch", "create", "update", "patch", "delete"}},
      {"", "pods", {"get", "list", "watch", "create", "update", "patch", "delete"}},
      {"", "pods/log", {"get", "list", "watch", "create", "update", "patch", "delete"}},
      {"batch", "jobs", {"get", "create", "update", "patch", "delete", "list", "watch"}},
      {"", "endpoints", {"get", "list", "watch", "create", "update", "patch"}},
      {"apps", "daemonsets", {"get", "list"}},
      {"coordination.k8s.io", "leases", {"get", "watch", "list", "delete", "update", "create"}},
      {"", "configmaps", {"get", "watch", "list", "delete", "update", "create"}},
  };
  for (const auto& [group, resource, verbs] : rules) {
    EXPECT_TRUE(grants(role, group, resource, verbs)) << group << "/" << resource;
  }
  EXPECT_EQ(role["rules"].size(), 13U);
  EXPECT_EQ(obj("ClusterRoleBinding", "csiop:juicefs:controller-driver")["subjects"][0]["name"],
            "juicefs-controller");
  for (const char* sidecar : {"external-provisioner", "external-resizer"}) {
    const std::string name = std::string("csiop:juicefs:") + sidecar;
    const std::string binding = std::string("csiop:juicefs:sidecar:") + sidecar;
    EXPECT_EQ(obj("ClusterRoleBinding", binding)["subjects"][0]["name"], "juicefs-controller")
        << name;
  }
  EXPECT_EQ(testutil::find(objects(), "ClusterRole", "csiop:external-snapshotter"), nullptr);
  EXPECT_EQ(testutil::find(objects(), "ClusterRole", "csiop:external-attacher"), nullptr);
}

// deploy/k8s.yaml, ConfigMap juicefs-csi-driver-config: the name is the driver's default
// (JUICEFS_CONFIG_NAME), the content the vendor's.
TEST(VendorJuiceFs, DriverConfigMap) {
  EXPECT_TRUE(same(obj("ConfigMap", "juicefs-csi-driver-config", kNamespace)["data"],
                   R"({"config.yaml": "enableNodeSelector: false\nmountPodPatch:"})"));
}

// docs/en/guide/pv.md, "Create via kubectl": StorageClass juicefs-sc.
TEST(VendorJuiceFs, StorageClassOfTheDocs) {
  Json sc = obj("StorageClass", "juicefs-sc");
  EXPECT_EQ(sc["provisioner"], "csi.juicefs.com");
  EXPECT_TRUE(same(sc["parameters"], R"({
      "csi.storage.k8s.io/provisioner-secret-name": "juicefs-secret",
      "csi.storage.k8s.io/provisioner-secret-namespace": "default",
      "csi.storage.k8s.io/node-publish-secret-name": "juicefs-secret",
      "csi.storage.k8s.io/node-publish-secret-namespace": "default"})"));
  EXPECT_EQ(sc["reclaimPolicy"], "Retain");
  EXPECT_FALSE(sc.contains("allowVolumeExpansion"));
  EXPECT_FALSE(sc.contains("mountOptions"));
  // The provisioner's secret, by name (the kubelet reads the node-publish one).
  Json secrets = obj("Role", "csiop:juicefs:secrets", "default");
  EXPECT_TRUE(same(secrets["rules"], R"([{"apiGroups": [""], "resources": ["secrets"],
      "verbs": ["get"], "resourceNames": ["juicefs-secret"]}])"));
}

} // namespace
} // namespace csiop::vendors
