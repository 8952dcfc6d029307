// Ceph CSI's RBD driver (examples/ceph-rbd.yaml) against the vendor's own manifests of release
// v3.12.2 (github.com/ceph/ceph-csi, tag v3.12.2, commit dcf14882dd4d): the CSIDriver, the node
// plugin and controller pods container by container, the driver's RBAC, the ConfigMaps and
// Services the pods need, and the example classes. Every value below was read in the file the
// test names; where the operator deliberately differs, the test says so.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <csiop/api/defaults.hpp>
#include <csiop/render/prerequisites.hpp>

#include "vendor_facts.hpp"

namespace csiop::vendors {
namespace {

const char* kNamespace = "csi-ceph-rbd";
const char* kImage = "quay.io/cephcsi/cephcsi:v3.12.2";

const std::vector<Json>& objects() {
  static const std::vector<Json> objs = renderExample("ceph-rbd");
  return objs;
}

// A copy of a rendered object (or null, and a failure): lookups of keys it lacks then read
// as null instead of tripping the const operator[]'s assertion.
Json obj(const std::string& kind, const std::string& name, const std::string& ns = "") {
  return get(objects(), kind, name, ns);
}

Json nodePlugin() {
  return obj("DaemonSet", "ceph-rbd-node", kNamespace);
}

Json controller() {
  return obj("Deployment", "ceph-rbd-controller", kNamespace);
}

// deploy/rbd/kubernetes/csidriver.yaml.
TEST(VendorCephRbd, CSIDriverIsTheVendors) {
  Json d = obj("CSIDriver", "rbd.csi.ceph.com");
  // attachRequired, podInfoOnMount, seLinuxMount, fsGroupPolicy as the vendor's; the rest are
  // the server's defaults, written out by the operator.
  EXPECT_TRUE(same(d["spec"], R"({"attachRequired": true, "podInfoOnMount": false,
      "seLinuxMount": true, "fsGroupPolicy": "File", "volumeLifecycleModes": ["Persistent"],
      "storageCapacity": false, "requiresRepublish": false})"));
}

// deploy/rbd/kubernetes/csi-rbdplugin.yaml, DaemonSet csi-rbdplugin: the pod.
TEST(VendorCephRbd, NodePluginPodRunsOnTheNodesNetworkAndPIDNamespace) {
  Json spec = podSpec(nodePlugin());
  EXPECT_EQ(spec["hostNetwork"], true);
  EXPECT_EQ(spec["hostPID"], true);
  EXPECT_EQ(spec["dnsPolicy"], "ClusterFirstWithHostNet");
  EXPECT_EQ(spec["priorityClassName"], "system-node-critical");
  EXPECT_FALSE(spec.contains("tolerations")) << "the vendor's tolerates no taint";
  EXPECT_FALSE(spec.contains("securityContext"));
  EXPECT_EQ(spec["serviceAccountName"], "ceph-rbd-node");
  EXPECT_EQ(spec["automountServiceAccountToken"], true); // the driver reads the API
  EXPECT_EQ(nodePlugin()["spec"]["template"]["metadata"]["labels"]["app"], "csi-rbdplugin");
  EXPECT_FALSE(nodePlugin()["spec"].contains("updateStrategy"));
  // The vendor's three containers; no livenessprobe (liveness-prometheus instead).
  EXPECT_EQ(
      testutil::containerNames(nodePlugin()),
      (std::vector<std::string>{"csi-rbdplugin", "node-driver-registrar", "liveness-prometheus"}));
}

// deploy/rbd/kubernetes/csi-rbdplugin.yaml, container csi-rbdplugin.
TEST(VendorCephRbd, NodeDriverContainer) {
  Json c = containerOf(nodePlugin(), "csi-rbdplugin");
  EXPECT_EQ(c["image"], kImage);
  EXPECT_EQ(c["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(c["args"], Json::parse(R"j(["--nodeid=$(NODE_ID)",
      "--pluginpath=/var/lib/kubelet/plugins",
      "--stagingpath=/var/lib/kubelet/plugins/kubernetes.io/csi/", "--type=rbd",
      "--nodeserver=true", "--endpoint=$(CSI_ENDPOINT)",
      "--csi-addons-endpoint=$(CSI_ADDONS_ENDPOINT)", "--v=5", "--drivername=rbd.csi.ceph.com",
      "--enableprofiling=false"])j"));
  EXPECT_EQ(envValue(c, "CSI_ENDPOINT"), "unix:///csi/csi.sock");
  EXPECT_EQ(envValue(c, "CSI_ADDONS_ENDPOINT"), "unix:///csi/csi-addons.sock");
  expectEnvFrom(c, "NODE_ID", "spec.nodeName");
  expectEnvFrom(c, "POD_IP", "status.podIP");
  expectEnvFrom(c, "POD_NAMESPACE", "metadata.namespace");
  EXPECT_TRUE(same(c["securityContext"], R"({"privileged": true,
      "capabilities": {"add": ["SYS_ADMIN"]}, "allowPrivilegeEscalation": true})"));
  EXPECT_FALSE(c.contains("livenessProbe")) << "the vendor's driver has no liveness probe";
  EXPECT_FALSE(c.contains("ports"));
  EXPECT_FALSE(c.contains("resources"));
  const std::string token = R"({"projected": {"sources": [{"serviceAccountToken":
      {"path": "oidc-token", "expirationSeconds": 3600, "audience": "ceph-csi-kms"}}]}})";
  expectMounts(
      nodePlugin(), c,
      {{"/csi",
        R"({"hostPath": {"path": "/var/lib/kubelet/plugins/rbd.csi.ceph.com",
            "type": "DirectoryOrCreate"}})",
        "", false},
       // The operator's /dev has type Directory (the vendor's none).
       {"/dev", R"({"hostPath": {"path": "/dev", "type": "Directory"}})", "", false},
       {"/sys", R"({"hostPath": {"path": "/sys"}})", "", false},
       {"/run/mount", R"({"hostPath": {"path": "/run/mount"}})", "", false},
       {"/etc/selinux", R"({"hostPath": {"path": "/etc/selinux"}})", "", true},
       {"/lib/modules", R"({"hostPath": {"path": "/lib/modules"}})", "", true},
       {"/etc/ceph-csi-config/", R"({"configMap": {"name": "ceph-csi-config"}})", "", false},
       {"/etc/ceph-csi-encryption-kms-config/",
        R"({"configMap": {"name": "ceph-csi-encryption-kms-config"}})", "", false},
       {"/var/lib/kubelet/plugins",
        R"({"hostPath": {"path": "/var/lib/kubelet/plugins", "type": "Directory"}})",
        "Bidirectional", false},
       {"/var/lib/kubelet/pods",
        R"({"hostPath": {"path": "/var/lib/kubelet/pods", "type": "DirectoryOrCreate"}})",
        "Bidirectional", false},
       {"/tmp/csi/keys", R"({"emptyDir": {"medium": "Memory"}})", "", false},
       {"/var/log/ceph", R"({"hostPath": {"path": "/var/log/ceph", "type": "DirectoryOrCreate"}})",
        "", false},
       {"/etc/ceph/", R"({"configMap": {"name": "ceph-config"}})", "", false},
       {"/run/secrets/tokens", token, "", true}});
}

// deploy/rbd/kubernetes/csi-rbdplugin.yaml, container driver-registrar.
TEST(VendorCephRbd, NodeRegistrarIsPrivilegedForSELinuxAndServesNoEndpoint) {
  Json c = containerOf(nodePlugin(), "node-driver-registrar");
  EXPECT_EQ(c["image"], "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.11.1");
  EXPECT_EQ(c["args"], Json::parse(R"(["--csi-address=/csi/csi.sock",
      "--kubelet-registration-path=/var/lib/kubelet/plugins/rbd.csi.ceph.com/csi.sock",
      "--v=1"])"));
  expectEnvFrom(c, "KUBE_NODE_NAME", "spec.nodeName");
  EXPECT_TRUE(same(c["securityContext"], R"({"privileged": true,
      "allowPrivilegeEscalation": true})"));
  // No --http-endpoint, so no port on the node's network and no probe, as the vendor's.
  EXPECT_FALSE(c.contains("ports"));
  EXPECT_FALSE(c.contains("livenessProbe"));
  expectMounts(
      nodePlugin(), c,
      {{"/csi",
        R"({"hostPath": {"path": "/var/lib/kubelet/plugins/rbd.csi.ceph.com",
            "type": "DirectoryOrCreate"}})",
        "", false},
       {"/registration",
        R"({"hostPath": {"path": "/var/lib/kubelet/plugins_registry", "type": "Directory"}})", "",
        false}});
}

// deploy/rbd/kubernetes/csi-rbdplugin.yaml, container liveness-prometheus.
TEST(VendorCephRbd, NodeLivenessPrometheusExportsTheProbeOnPort8680) {
  Json c = containerOf(nodePlugin(), "liveness-prometheus");
  EXPECT_EQ(c["image"], kImage);
  EXPECT_EQ(c["args"], Json::parse(R"j(["--type=liveness", "--endpoint=$(CSI_ENDPOINT)",
      "--metricsport=8680", "--metricspath=/metrics", "--polltime=60s", "--timeout=3s"])j"));
  EXPECT_EQ(envValue(c, "CSI_ENDPOINT"), "unix:///csi/csi.sock");
  expectEnvFrom(c, "POD_IP", "status.podIP");
  EXPECT_TRUE(same(c["securityContext"], R"({"privileged": true,
      "allowPrivilegeEscalation": true})"));
  expectMounts(nodePlugin(), c,
               {{"/csi",
                 R"({"hostPath": {"path": "/var/lib/kubelet/plugins/rbd.csi.ceph.com",
                     "type": "DirectoryOrCreate"}})",
                 "", false}});
}

// deploy/rbd/kubernetes/csi-rbdplugin-provisioner.yaml, Deployment csi-rbdplugin-provisioner.
TEST(VendorCephRbd, ControllerPodIsThreeReplicasOnePerNode) {
  Json d = controller();
  EXPECT_EQ(d["spec"]["replicas"], 3);
  EXPECT_FALSE(d["spec"].contains("strategy")) << "the server's RollingUpdate, as the vendor's";
  Json spec = podSpec(d);
  EXPECT_EQ(spec["priorityClassName"], "system-cluster-critical");
  EXPECT_EQ(spec["serviceAccountName"], "ceph-rbd-controller");
  EXPECT_FALSE(spec.contains("tolerations"));
  EXPECT_FALSE(spec.contains("hostNetwork"));
  EXPECT_EQ(d["spec"]["template"]["metadata"]["labels"]["app"], "csi-rbdplugin-provisioner");
  EXPECT_TRUE(same(spec["affinity"], R"({"podAntiAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchExpressions":
      [{"key": "app", "operator": "In", "values": ["csi-rbdplugin-provisioner"]}]},
      "topologyKey": "kubernetes.io/hostname"}]}})"));
  EXPECT_EQ(testutil::containerNames(d),
            (std::vector<std::string>{"csi-rbdplugin", "csi-provisioner", "csi-attacher",
                                      "csi-resizer", "csi-snapshotter", "csi-rbdplugin-controller",
                                      "liveness-prometheus"}));
}

// deploy/rbd/kubernetes/csi-rbdplugin-provisioner.yaml, container csi-rbdplugin.
TEST(VendorCephRbd, ControllerDriverContainer) {
  Json c = containerOf(controller(), "csi-rbdplugin");
  EXPECT_EQ(c["image"], kImage);
  EXPECT_EQ(c["args"], Json::parse(R"j(["--nodeid=$(NODE_ID)", "--type=rbd",
      "--controllerserver=true", "--endpoint=$(CSI_ENDPOINT)",
      "--csi-addons-endpoint=$(CSI_ADDONS_ENDPOINT)", "--v=5", "--drivername=rbd.csi.ceph.com",
      "--pidlimit=-1", "--rbdhardmaxclonedepth=8", "--rbdsoftmaxclonedepth=4",
      "--enableprofiling=false", "--setmetadata=true"])j"));
  // The vendor's socket is csi-provisioner.sock; the operator's csi.sock in the same emptyDir.
  EXPECT_EQ(envValue(c, "CSI_ENDPOINT"), "unix:///csi/csi.sock");
  EXPECT_EQ(envValue(c, "CSI_ADDONS_ENDPOINT"), "unix:///csi/csi-addons.sock");
  expectEnvFrom(c, "NODE_ID", "spec.nodeName");
  expectEnvFrom(c, "POD_IP", "status.podIP");
  expectEnvFrom(c, "POD_NAMESPACE", "metadata.namespace");
  EXPECT_FALSE(c.contains("securityContext")) << "unprivileged, as the vendor's";
  EXPECT_FALSE(c.contains("livenessProbe"));
  const std::string token = R"({"projected": {"sources": [{"serviceAccountToken":
      {"path": "oidc-token", "expirationSeconds": 3600, "audience": "ceph-csi-kms"}}]}})";
  expectMounts(
      controller(), c,
      {// The vendor's socket-dir is an emptyDir in memory; the operator's is on disk.
       {"/csi", R"({"emptyDir": {}})", "", false},
       {"/dev", R"({"hostPath": {"path": "/dev"}})", "", false},
       {"/sys", R"({"hostPath": {"path": "/sys"}})", "", false},
       {"/lib/modules", R"({"hostPath": {"path": "/lib/modules"}})", "", true},
       {"/etc/ceph-csi-config/", R"({"configMap": {"name": "ceph-csi-config"}})", "", false},
       {"/etc/ceph-csi-encryption-kms-config/",
        R"({"configMap": {"name": "ceph-csi-encryption-kms-config"}})", "", false},
       {"/tmp/csi/keys", R"({"emptyDir": {"medium": "Memory"}})", "", false},
       {"/etc/ceph/", R"({"configMap": {"name": "ceph-config"}})", "", false},
       {"/run/secrets/tokens", token, "", true}});
}

// deploy/rbd/kubernetes/csi-rbdplugin-provisioner.yaml, containers csi-provisioner,
// csi-snapshotter, csi-attacher, csi-resizer: the vendor's images and flags, under leader
// election, without an HTTP endpoint.
TEST(VendorCephRbd, ControllerSidecarsAtTheVendorsTagsAndFlags) {
  const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> want = {
      {"csi-provisioner",
       {"registry.k8s.io/sig-storage/csi-provisioner:v5.0.1",
        R"(["--csi-address=/csi/csi.sock", "--leader-election", "--v=1", "--timeout=150s",
            "--retry-interval-start=500ms", "--feature-gates=HonorPVReclaimPolicy=true",
            "--prevent-volume-mode-conversion=true", "--default-fstype=ext4",
            "--extra-create-metadata=true", "--immediate-topology=false"])"}},
      {"csi-snapshotter",
       {"registry.k8s.io/sig-storage/csi-snapshotter:v8.0.1",
        R"(["--csi-address=/csi/csi.sock", "--leader-election", "--v=1", "--timeout=150s",
            "--extra-create-metadata=true", "--enable-volume-group-snapshots=true"])"}},
      {"csi-attacher",
       {"registry.k8s.io/sig-storage/csi-attacher:v4.6.1",
        R"(["--csi-address=/csi/csi.sock", "--leader-election", "--v=1",
            "--retry-interval-start=500ms", "--default-fstype=ext4"])"}},
      {"csi-resizer",
       {"registry.k8s.io/sig-storage/csi-resizer:v1.11.1",
        R"(["--csi-address=/csi/csi.sock", "--leader-election", "--v=1", "--timeout=150s",
            "--retry-interval-start=500ms", "--handle-volume-inuse-error=false",
            "--feature-gates=RecoverVolumeExpansionFailure=true"])"}},
  };
  for (const auto& [name, imageAndArgs] : want) {
    Json c = containerOf(controller(), name);
    EXPECT_EQ(c["image"], imageAndArgs.first) << name;
    EXPECT_EQ(c["args"], Json::parse(imageAndArgs.second)) << name;
    EXPECT_FALSE(c.contains("ports")) << name;
    EXPECT_FALSE(c.contains("livenessProbe")) << name;
    expectMounts(controller(), c, {{"/csi", R"({"emptyDir": {}})", "", false}});
  }
}

// deploy/rbd/kubernetes/csi-rbdplugin-provisioner.yaml, containers csi-rbdplugin-controller and
// liveness-prometheus.
TEST(VendorCephRbd, ControllerExtraContainers) {
  Json pv = containerOf(controller(), "csi-rbdplugin-controller");
  EXPECT_EQ(pv["image"], kImage);
  EXPECT_EQ(pv["args"], Json::parse(R"j(["--type=controller", "--v=5",
      "--drivername=rbd.csi.ceph.com", "--drivernamespace=$(DRIVER_NAMESPACE)",
      "--setmetadata=true"])j"));
  expectEnvFrom(pv, "DRIVER_NAMESPACE", "metadata.namespace");
  expectMounts(
      controller(), pv,
      {{"/etc/ceph-csi-config/", R"({"configMap": {"name": "ceph-csi-config"}})", "", false},
       {"/tmp/csi/keys", R"({"emptyDir": {"medium": "Memory"}})", "", false},
       {"/etc/ceph/", R"({"configMap": {"name": "ceph-config"}})", "", false}});

  Json live = containerOf(controller(), "liveness-prometheus");
  EXPECT_EQ(live["image"], kImage);
  EXPECT_EQ(live["args"], Json::parse(R"j(["--type=liveness", "--endpoint=$(CSI_ENDPOINT)",
      "--metricsport=8680", "--metricspath=/metrics", "--polltime=60s", "--timeout=3s"])j"));
  EXPECT_EQ(envValue(live, "CSI_ENDPOINT"), "unix:///csi/csi.sock");
  expectEnvFrom(live, "POD_IP", "status.podIP");
  EXPECT_FALSE(live.contains("securityContext"));
  expectMounts(controller(), live, {{"/csi", R"({"emptyDir": {}})", "", false}});
}

// deploy/rbd/kubernetes/csi-nodeplugin-rbac.yaml, ClusterRole rbd-csi-nodeplugin.
TEST(VendorCephRbd, NodePluginRulesAreTheVendorsClusterRole) {
  Json role = obj("ClusterRole", "csiop:ceph-rbd:node-driver");
  EXPECT_TRUE(grants(role, "", "nodes", {"get"}));
  EXPECT_TRUE(grants(role, "", "secrets", {"get"}));
  EXPECT_TRUE(grants(role, "", "configmaps", {"get"}));
  EXPECT_TRUE(grants(role, "", "serviceaccounts", {"get"}));
  EXPECT_TRUE(grants(role, "", "persistentvolumes", {"get"}));
  EXPECT_TRUE(grants(role, "storage.k8s.io", "volumeattachments", {"list", "get"}));
  EXPECT_TRUE(grants(role, "", "serviceaccounts/token", {"create"}));
  EXPECT_EQ(role["rules"].size(), 7U);
  EXPECT_FALSE(grants(role, "", "secrets", {"list"}));
  Json binding = obj("ClusterRoleBinding", "csiop:ceph-rbd:node-driver");
  EXPECT_EQ(binding["subjects"][0]["name"], "ceph-rbd-node");
  EXPECT_EQ(binding["subjects"][0]["namespace"], kNamespace);
}

// deploy/rbd/kubernetes/csi-provisioner-rbac.yaml, ClusterRole rbd-external-provisioner-runner
// and Role rbd-external-provisioner-cfg.
TEST(VendorCephRbd, ControllerRulesAreTheVendorsRoles) {
  Json role = obj("ClusterRole", "csiop:ceph-rbd:controller-driver");
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> rules = {
      {"", "nodes", {"get", "list", "watch"}},
      // csi-rbdplugin-controller reads Secrets through controller-runtime's cache.
      {"", "secrets", {"get", "list", "watch"}},
      {"", "events", {"list", "watch", "create", "update", "patch"}},
      {"", "persistentvolumes", {"get", "list", "watch", "create", "update", "delete", "patch"}},
      {"", "persistentvolumeclaims", {"get", "list", "watch", "update"}},
      {"", "persistentvolumeclaims/status", {"update", "patch"}},
      {"storage.k8s.io", "storageclasses", {"get", "list", "watch"}},
      {"snapshot.storage.k8s.io",
       "volumesnapshots",
       {"get", "list", "watch", "update", "patch", "create"}},
      {"snapshot.storage.k8s.io", "volumesnapshots/status", {"get", "list", "patch"}},
      {"snapshot.storage.k8s.io",
       "volumesnapshotcontents",
       {"create", "get", "list", "watch", "update", "delete", "patch"}},
      {"snapshot.storage.k8s.io", "volumesnapshotclasses", {"get", "list", "watch"}},
      {"storage.k8s.io", "volumeattachments", {"get", "list", "watch", "update", "patch"}},
      {"storage.k8s.io", "volumeattachments/status", {"patch"}},
      {"storage.k8s.io", "csinodes", {"get", "list", "watch"}},
      {"snapshot.storage.k8s.io", "volumesnapshotcontents/status", {"update", "patch"}},
      {"", "configmaps", {"get"}},
      {"", "serviceaccounts", {"get"}},
      {"", "serviceaccounts/token", {"create"}},
      {"groupsnapshot.storage.k8s.io", "volumegroupsnapshotclasses", {"get", "list", "watch"}},
      {"groupsnapshot.storage.k8s.io",
       "volumegroupsnapshotcontents",
       {"get", "list", "watch", "update", "patch"}},
      {"groupsnapshot.storage.k8s.io", "volumegroupsnapshotcontents/status", {"update", "patch"}},
  };
  for (const auto& [group, resource, verbs] : rules) {
    EXPECT_TRUE(grants(role, group, resource, verbs)) << group << "/" << resource;
  }
  EXPECT_EQ(role["rules"].size(), rules.size());
  EXPECT_EQ(obj("ClusterRoleBinding", "csiop:ceph-rbd:controller-driver")["subjects"][0]["name"],
            "ceph-rbd-controller");

  Json cfg = obj("Role", "csiop:ceph-rbd:controller-driver", kNamespace);
  EXPECT_TRUE(
      grants(cfg, "", "configmaps", {"get", "list", "watch", "create", "update", "delete"}));
  EXPECT_TRUE(grants(cfg, "coordination.k8s.io", "leases",
                     {"get", "watch", "list", "delete", "update", "create"}));
  EXPECT_EQ(cfg["rules"].size(), 2U);
  // Each sidecar also has its upstream rules (the operator's, beside the vendor's union).
  for (const char* sidecar :
       {"external-provisioner", "external-attacher", "external-resizer", "external-snapshotter"}) {
    const std::string name = std::string("csiop:ceph-rbd:") + sidecar;
    const std::string binding = std::string("csiop:ceph-rbd:sidecar:") + sidecar;
    EXPECT_EQ(obj("ClusterRoleBinding", binding)["subjects"][0]["name"], "ceph-rbd-controller")
        << name;
  }
}

// deploy/rbd/kubernetes/csi-config-map.yaml, deploy/ceph-conf.yaml, and the chart's empty
// encryption KMS config (charts/ceph-csi-rbd/templates/encryptionkms-configmap.yaml).
TEST(VendorCephRbd, ConfigMapsThePodsMount) {
  EXPECT_TRUE(
      same(obj("ConfigMap", "ceph-csi-config", kNamespace)["data"], R"({"config.json": "[]"})"));
  EXPECT_TRUE(same(obj("ConfigMap", "ceph-config", kNamespace)["data"],
                   R"({"ceph.conf": "[global]\nauth_cluster_required = cephx\n)"
                   R"(auth_service_required = cephx\nauth_client_required = cephx\n",
                       "keyring": ""})"));
  EXPECT_TRUE(same(obj("ConfigMap", "ceph-csi-encryption-kms-config", kNamespace)["data"],
                   R"({"config.json": "{}"})"));
}

// deploy/rbd/kubernetes/csi-rbdplugin.yaml (Service csi-metrics-rbdplugin) and
// csi-rbdplugin-provisioner.yaml (Service csi-rbdplugin-provisioner).
TEST(VendorCephRbd, MetricsServices) {
  for (const auto& [name, component] :
       {std::pair{"csi-metrics-rbdplugin", "node-plugin"},
        std::pair{"csi-rbdplugin-provisioner", "controller-plugin"}}) {
    Json s = obj("Service", name, kNamespace);
    EXPECT_EQ(s["metadata"]["labels"]["app"], "csi-metrics") << name;
    EXPECT_EQ(s["spec"]["selector"]["app.kubernetes.io/component"], component) << name;
    EXPECT_TRUE(same(s["spec"]["ports"], R"([{"name": "http-metrics", "port": 8080,
        "protocol": "TCP", "targetPort": 8680}])"))
        << name;
  }
}

// examples/rbd/storageclass.yaml and examples/rbd/snapshotclass.yaml.
TEST(VendorCephRbd, ExampleClasses) {
  Json sc = obj("StorageClass", "csi-rbd-sc");
  EXPECT_EQ(sc["provisioner"], "rbd.csi.ceph.com");
  EXPECT_TRUE(same(sc["parameters"], R"({"clusterID": "<cluster-id>",
      "pool": "<rbd-pool-name>", "imageFeatures": "layering",
      "csi.storage.k8s.io/provisioner-secret-name": "csi-rbd-secret",
      "csi.storage.k8s.io/provisioner-secret-namespace": "default",
      "csi.storage.k8s.io/controller-expand-secret-name": "csi-rbd-secret",
      "csi.storage.k8s.io/controller-expand-secret-namespace": "default",
      "csi.storage.k8s.io/node-stage-secret-name": "csi-rbd-secret",
      "csi.storage.k8s.io/node-stage-secret-namespace": "default",
      "csi.storage.k8s.io/fstype": "ext4"})"));
  EXPECT_EQ(sc["reclaimPolicy"], "Delete");
  EXPECT_EQ(sc["allowVolumeExpansion"], true);
  EXPECT_EQ(sc["mountOptions"], Json::parse(R"(["discard"])"));
  EXPECT_EQ(sc.value("volumeBindingMode", "Immediate"), "Immediate");

  Json snap = obj("VolumeSnapshotClass", "csi-rbdplugin-snapclass");
  EXPECT_EQ(snap["driver"], "rbd.csi.ceph.com");
  EXPECT_EQ(snap["deletionPolicy"], "Delete");
  EXPECT_TRUE(same(snap["parameters"], R"({"clusterID": "<cluster-id>",
      "csi.storage.k8s.io/snapshotter-secret-name": "csi-rbd-secret",
      "csi.storage.k8s.io/snapshotter-secret-namespace": "default"})"));
  // The sidecars' secret, by name, in its namespace (the vendor grants every Secret).
  EXPECT_TRUE(grants(obj("Role", "csiop:ceph-rbd:secrets", "default"), "", "secrets", {"get"}));
}

// deploy/rbd/kubernetes/csi-rbdplugin-provisioner.yaml: csi-snapshotter's
// --enable-volume-group-snapshots needs the group snapshot CRDs (v1alpha1 for v8.0).
TEST(VendorCephRbd, GroupSnapshotAPIsAreRequired) {
  const auto path = std::filesystem::path(CSIOP_SOURCE_DIR) / "examples" / "ceph-rbd.yaml";
  std::ifstream in(path, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  std::vector<std::string> apis;
  for (const auto& a : render::requiredApis(api::resolve(testutil::load(text)))) {
    apis.push_back(a.str());
  }
  for (const char* want : {"groupsnapshot.storage.k8s.io/v1alpha1/volumegroupsnapshotclasses",
                           "groupsnapshot.storage.k8s.io/v1alpha1/volumegroupsnapshotcontents",
                           "snapshot.storage.k8s.io/v1/volumesnapshotclasses",
                           "snapshot.storage.k8s.io/v1/volumesnapshotcontents"}) {
    EXPECT_NE(std::find(apis.begin(), apis.end(), want), apis.end()) << want;
  }
}

} // namespace
} // namespace csiop::vendors
