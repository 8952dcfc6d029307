// examples/openebs-lvm.yaml against OpenEBS LVM LocalPV's plain manifests at v1.5.0
// (openebs/lvm-localpv, tag v1.5.0, commit d8b2b9aad93ad4c0447b7de385724e76be23d269):
// deploy/yamls/lvm-driver.yaml (the CSIDriver, the controller Deployment and the node DaemonSet in
// kube-system, their ServiceAccounts, ClusterRoles and metrics Service) with
// deploy/yamls/namespace.yaml (`openebs`, the driver's LVM_NAMESPACE), the example classes of
// README.md and deploy/sample/lvmsnapclass.yaml, and the driver's source at that tag for what its
// containers call (pkg/...). What the operator does differently on purpose is commented in the
// example; where a test checks such a difference, it says so.
#include "vendor_facts.hpp"

#include <csiop/api/defaults.hpp>
#include <csiop/render/prerequisites.hpp>

namespace csiop::vendors {
namespace {

constexpr const char* kNamespace = "kube-system";
constexpr const char* kRecords = "openebs"; // LVM_NAMESPACE
constexpr const char* kImage = "openebs/lvm-driver:1.5.0";
// The node plugin's socket directory (the vendor's is <kubelet>/plugins/lvm-localpv/).
constexpr const char* kSocketVolume = R"({"hostPath": {
    "path": "/var/lib/kubelet/plugins/local.csi.openebs.io", "type": "DirectoryOrCreate"}})";

const std::vector<Json>& objects() {
  static const std::vector<Json> objs = renderExample("openebs-lvm");
  return objs;
}

const Json& node() {
  return get(objects(), "DaemonSet", "openebs-lvm-node", kNamespace);
}

const Json& controller() {
  return get(objects(), "Deployment", "openebs-lvm-controller", kNamespace);
}

// The value at a JSON pointer ("/spec/strategy"), or null.
Json at(const Json& j, const std::string& pointer) {
  const Json::json_pointer p(pointer);
  return j.contains(p) ? j.at(p) : Json();
}

// The only subject of a binding, as "namespace/name" (and a failure if there are more).
std::string subjectOf(const Json& binding) {
  const Json& subjects = api::member(binding, "subjects");
  EXPECT_EQ(subjects.size(), 1U) << binding.dump();
  return subjects.size() == 1 ? at(subjects[0], "/namespace").get<std::string>() + "/" +
                                    at(subjects[0], "/name").get<std::string>()
                              : std::string();
}

// The rules of every ClusterRole bound to the ServiceAccount kube-system/`account`, as one role.
Json clusterRulesOf(const std::string& account) {
  Json all = {{"rules", Json::array()}};
  for (const Json* binding : testutil::ofKind(objects(), "ClusterRoleBinding")) {
    for (const auto& s : at(*binding, "/subjects")) {
      if (at(s, "/name") == account && at(s, "/namespace") == kNamespace) {
        const Json& role =
            get(objects(), "ClusterRole", at(*binding, "/roleRef/name").get<std::string>());
        for (const auto& r : at(role, "/rules")) {
          all["rules"].push_back(r);
        }
      }
    }
  }
  return all;
}

// The top of lvm-driver.yaml: CSIDriver local.csi.openebs.io.
TEST(VendorOpenebsLvm, CSIDriverTracksCapacityWithoutAttach) {
  const Json& d = get(objects(), "CSIDriver", "local.csi.openebs.io");
  EXPECT_EQ(at(d, "/spec/attachRequired"), false);
  EXPECT_EQ(at(d, "/spec/podInfoOnMount"), true);
  EXPECT_EQ(at(d, "/spec/storageCapacity"), true);
  // Unset there: the server's defaults, which the operator writes out.
  EXPECT_TRUE(sameJson(at(d, "/spec/volumeLifecycleModes"), Json::array({"Persistent"})));
  EXPECT_EQ(at(d, "/spec/fsGroupPolicy"), "ReadWriteOnceWithFSType");
  EXPECT_EQ(at(d, "/spec/requiresRepublish"), false);
  EXPECT_TRUE(at(d, "/spec/tokenRequests").is_null());
  EXPECT_TRUE(at(d, "/spec/seLinuxMount").is_null());
}

// namespace.yaml creates `openebs`; the workloads go to kube-system, which nobody creates.
TEST(VendorOpenebsLvm, WorkloadsInKubeSystemRecordsInOpenebs) {
  const auto namespaces = testutil::ofKind(objects(), "Namespace");
  ASSERT_EQ(namespaces.size(), 1U) << "kube-system is never created";
  const Json& ns = *namespaces[0];
  EXPECT_EQ(at(ns, "/metadata/name"), kRecords);
  // Never owned, so never deleted with the DriverDeployment (its deletion would mark every
  // LVMVolume for deletion); no pods there, so no Pod Security label.
  EXPECT_TRUE(at(ns, "/metadata/ownerReferences").is_null());
  EXPECT_TRUE(at(ns, "/metadata/labels/pod-security.kubernetes.io~1enforce").is_null());
  for (const char* kind : {"DaemonSet", "Deployment", "ServiceAccount", "Service"}) {
    for (const Json* o : testutil::ofKind(objects(), kind)) {
      EXPECT_EQ(at(*o, "/metadata/namespace"), kNamespace) << kind;
    }
  }
  // The only objects in `openebs`: the two drivers' Roles and their bindings.
  std::vector<std::string> there;
  for (const Json& o : objects()) {
    if (at(o, "/metadata/namespace") == kRecords) {
      there.push_back(o["kind"].get<std::string>() + " " +
                      o["metadata"]["name"].get<std::string>());
    }
  }
  EXPECT_EQ(there, (std::vector<std::string>{"Role csiop:openebs-lvm:node-driver",
                                             "RoleBinding csiop:openebs-lvm:node-driver",
                                             "Role csiop:openebs-lvm:controller-driver",
                                             "RoleBinding csiop:openebs-lvm:controller-driver"}));
}

// Both driver containers are told the namespace of their records (env LVM_NAMESPACE, which
// pkg/lvm/volume.go reads), and it is the one where their Roles are.
TEST(VendorOpenebsLvm, LvmNamespaceIsWhereTheDriversRolesAre) {
  for (const Json* w : {&node(), &controller()}) {
    const Json& c = containerOf(*w, "openebs-lvm-plugin");
    EXPECT_EQ(envValue(c, "LVM_NAMESPACE"), kRecords) << at(*w, "/kind");
  }
  for (const char* role :
       {"csiop:openebs-lvm:node-driver", "csiop:openebs-lvm:controller-driver"}) {
    EXPECT_NE(testutil::find(objects(), "Role", role, kRecords), nullptr) << role;
    EXPECT_NE(testutil::find(objects(), "RoleBinding", role, kRecords), nullptr) << role;
  }
}

// lvm-driver.yaml, DaemonSet openebs-lvm-node: the pod.
TEST(VendorOpenebsLvm, NodePod) {
  const Json& ds = node();
  EXPECT_TRUE(sameJson(at(ds, "/spec/updateStrategy"), Json::parse(R"({"type": "RollingUpdate",
      "rollingUpdate": {"maxUnavailable": "100%"}})")));
  // The vendor's pod labels (its README selects the pods by role=openebs-lvm).
  const Json labels = at(ds, "/spec/template/metadata/labels");
  EXPECT_EQ(at(labels, "/app"), "openebs-lvm-node");
  EXPECT_EQ(at(labels, "/role"), "openebs-lvm");
  EXPECT_EQ(at(labels, "/openebs.io~1component-name"), "openebs-lvm-node");
  const Json& pod = podSpec(ds);
  // Different on purpose: the vendor's PriorityClass openebs-lvm-localpv-csi-node-critical is
  // not the operator's to create; the built-in class every cluster has.
  EXPECT_EQ(at(pod, "/priorityClassName"), "system-node-critical");
  EXPECT_TRUE(at(pod, "/tolerations").is_null()) << "the vendor tolerates no taint";
  EXPECT_NE(at(pod, "/hostNetwork"), true);
  EXPECT_NE(at(pod, "/hostPID"), true);
  EXPECT_TRUE(at(pod, "/securityContext").is_null());
  EXPECT_TRUE(at(pod, "/initContainers").is_null());
  // openebs-lvm-node-sa, with a token: the agent reads its Node and writes its records.
  EXPECT_EQ(at(pod, "/serviceAccountName"), "openebs-lvm-node");
  EXPECT_EQ(at(pod, "/automountServiceAccountToken"), true);
  EXPECT_EQ(testutil::containerNames(ds),
            (std::vector<std::string>{"openebs-lvm-plugin", "node-driver-registrar"}))
      << "the vendor runs no livenessprobe";
}

// lvm-driver.yaml, DaemonSet openebs-lvm-node, container openebs-lvm-plugin.
TEST(VendorOpenebsLvm, NodeDriverContainer) {
  const Json& ds = node();
  const Json& c = containerOf(ds, "openebs-lvm-plugin");
  EXPECT_EQ(at(c, "/image"), kImage);
  EXPECT_EQ(at(c, "/imagePullPolicy"), "IfNotPresent");
  EXPECT_TRUE(sameJson(at(c, "/args"), Json::parse(R"j(["--nodeid=$(OPENEBS_NODE_ID)",
      "--endpoint=$(OPENEBS_CSI_ENDPOINT)", "--plugin=$(OPENEBS_NODE_DRIVER)",
      "--listen-address=$(METRICS_LISTEN_ADDRESS)"])j")));
  expectEnvFrom(c, "OPENEBS_NODE_ID", "spec.nodeName");
  // The vendor's endpoint is unix:///plugin/csi.sock, its plugin-dir: the same socket, in the
  // operator's socket directory.
  EXPECT_EQ(envValue(c, "OPENEBS_CSI_ENDPOINT"), envValue(c, "CSI_ENDPOINT"));
  EXPECT_EQ(envValue(c, "OPENEBS_CSI_ENDPOINT"), "unix:///csi/csi.sock");
  EXPECT_EQ(envValue(c, "OPENEBS_NODE_DRIVER"), "agent");
  EXPECT_EQ(envValue(c, "METRICS_LISTEN_ADDRESS"), ":9500");
  EXPECT_EQ(envValue(c, "ALLOWED_TOPOLOGIES"), "kubernetes.io/hostname,");
  EXPECT_EQ(at(c, "/env").size(), 8U) << "the vendor's six, CSI_ENDPOINT and KUBE_NODE_NAME";
  EXPECT_TRUE(sameJson(at(c, "/securityContext"),
                       Json::parse(R"({"privileged": true, "allowPrivilegeEscalation": true})")));
  EXPECT_TRUE(sameJson(at(c, "/resources"), Json::object()));
  for (const char* none : {"/livenessProbe", "/readinessProbe", "/lifecycle", "/ports"}) {
    EXPECT_TRUE(at(c, none).is_null()) << none;
  }
  // plugin-dir, device-dir and pods-mount-dir. The vendor mounts all of /var/lib/kubelet/
  // Bidirectionally; the driver mounts only at the kubelet's target paths, below pods/ (file
  // systems) and plugins/kubernetes.io/csi/volumeDevices/ (block), and stages nothing.
  expectMounts(ds, c,
               {{"/csi", kSocketVolume, "", false},
                {"/var/lib/kubelet/pods",
                 R"({"hostPath": {"path": "/var/lib/kubelet/pods", "type": "DirectoryOrCreate"}})",
                 "Bidirectional", false},
                {"/var/lib/kubelet/plugins",
                 R"({"hostPath": {"path": "/var/lib/kubelet/plugins", "type": "Directory"}})",
                 "Bidirectional", false},
                {"/dev", R"({"hostPath": {"path": "/dev", "type": "Directory"}})", "", false}});
}

// lvm-driver.yaml, DaemonSet openebs-lvm-node, container csi-node-driver-registrar.
TEST(VendorOpenebsLvm, NodeRegistrar) {
  const Json& ds = node();
  const Json& r = containerOf(ds, "node-driver-registrar");
  EXPECT_EQ(at(r, "/image"), "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.8.0");
  EXPECT_EQ(at(r, "/imagePullPolicy"), "IfNotPresent");
  // The vendor's $(ADDRESS) and $(DRIVER_REG_SOCK_PATH), spelled out in the operator's socket
  // directory; no --http-endpoint, so no port and no liveness probe.
  EXPECT_TRUE(sameJson(at(r, "/args"), Json::parse(R"(["--csi-address=/csi/csi.sock",
      "--kubelet-registration-path=/var/lib/kubelet/plugins/local.csi.openebs.io/csi.sock",
      "--v=5"])")));
  EXPECT_TRUE(at(r, "/ports").is_null());
  EXPECT_TRUE(at(r, "/livenessProbe").is_null());
  expectEnvFrom(r, "KUBE_NODE_NAME", "spec.nodeName");
  EXPECT_EQ(envValue(r, "NODE_DRIVER"), "openebs-lvm");
  // Left out on purpose: the vendor's preStop hook needs /bin/sh, which the image lacks.
  EXPECT_TRUE(at(r, "/lifecycle").is_null());
  EXPECT_TRUE(sameJson(at(r, "/securityContext"), Json::object()));
  EXPECT_TRUE(sameJson(at(r, "/resources"), Json::object()));
  expectMounts(ds, r,
               {{"/csi", kSocketVolume, "", false},
                {"/registration", R"({"hostPath": {"path": "/var/lib/kubelet/plugins_registry",
                                   "type": "Directory"}})",
                 "", false}});
}

// lvm-driver.yaml, Service openebs-lvm-node-service.
TEST(VendorOpenebsLvm, NodeMetricsService) {
  const Json& svc = get(objects(), "Service", "openebs-lvm-node-service", kNamespace);
  EXPECT_EQ(at(svc, "/metadata/labels/name"), "openebs-lvm-node");
  EXPECT_EQ(at(svc, "/spec/clusterIP"), "None");
  EXPECT_TRUE(sameJson(at(svc, "/spec/ports"),
                       Json::parse(R"([{"name": "metrics", "port": 9500, "targetPort": 9500}])")));
  // It selects the node plugin's pods (the vendor's by app: openebs-lvm-node).
  const Json labels = at(node(), "/spec/template/metadata/labels");
  const Json selector = at(svc, "/spec/selector");
  ASSERT_FALSE(selector.empty());
  for (const auto& [key, value] : selector.items()) {
    EXPECT_EQ(labels.value(key, Json()), value) << key;
  }
  EXPECT_EQ(testutil::ofKind(objects(), "Service").size(), 1U);
}

// lvm-driver.yaml, Deployment openebs-lvm-controller: the pod.
TEST(VendorOpenebsLvm, ControllerPod) {
  const Json& d = controller();
  EXPECT_EQ(at(d, "/spec/replicas"), 1);
  EXPECT_TRUE(at(d, "/spec/strategy").is_null()) << "the server's RollingUpdate, as the vendor's";
  const Json labels = at(d, "/spec/template/metadata/labels");
  EXPECT_EQ(at(labels, "/app"), "openebs-lvm-controller");
  EXPECT_EQ(at(labels, "/role"), "openebs-lvm");
  EXPECT_EQ(at(labels, "/openebs.io~1component-name"), "openebs-lvm-controller");
  const Json& pod = podSpec(d);
  // Never two controllers on one node, by the vendor's app label, which the pods carry.
  EXPECT_TRUE(sameJson(at(pod, "/affinity"), Json::parse(R"({"podAntiAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["openebs-lvm-controller"]}]},
       "topologyKey": "kubernetes.io/hostname"}]}})")));
  // Different on purpose: the built-in class instead of the vendor's
  // openebs-lvm-localpv-csi-controller-critical.
  EXPECT_EQ(at(pod, "/priorityClassName"), "system-cluster-critical");
  EXPECT_TRUE(at(pod, "/tolerations").is_null());
  EXPECT_NE(at(pod, "/hostNetwork"), true);
  EXPECT_TRUE(at(pod, "/securityContext").is_null());
  EXPECT_EQ(at(pod, "/serviceAccountName"), "openebs-lvm-controller");
  EXPECT_NE(at(pod, "/automountServiceAccountToken"), false);
  EXPECT_TRUE(
      sameJson(at(pod, "/volumes"), Json::parse(R"([{"name": "socket-dir", "emptyDir": {}}])")));
  // The vendor's four containers but snapshot-controller (the cluster's, not the driver's).
  EXPECT_EQ(testutil::containerNames(d),
            (std::vector<std::string>{"openebs-lvm-plugin", "csi-provisioner", "csi-resizer",
                                      "csi-snapshotter"}));
}

// lvm-driver.yaml, Deployment openebs-lvm-controller, container openebs-lvm-plugin.
TEST(VendorOpenebsLvm, ControllerDriverContainer) {
  const Json& c = containerOf(controller(), "openebs-lvm-plugin");
  EXPECT_EQ(at(c, "/image"), kImage);
  EXPECT_EQ(at(c, "/imagePullPolicy"), "IfNotPresent");
  EXPECT_TRUE(sameJson(at(c, "/args"), Json::parse(R"j(["--endpoint=$(OPENEBS_CSI_ENDPOINT)",
      "--plugin=$(OPENEBS_CONTROLLER_DRIVER)"])j")));
  EXPECT_EQ(envValue(c, "OPENEBS_CONTROLLER_DRIVER"), "controller");
  // The vendor's is unix:///var/lib/csi/sockets/pluginproxy/csi.sock, in its emptyDir.
  EXPECT_EQ(envValue(c, "OPENEBS_CSI_ENDPOINT"), "unix:///csi/csi.sock");
  EXPECT_EQ(envValue(c, "OPENEBS_IO_INSTALLER_TYPE"), "lvm-operator");
  EXPECT_EQ(envValue(c, "OPENEBS_IO_ENABLE_ANALYTICS"), "true");
  EXPECT_EQ(at(c, "/env").size(), 7U) << "the vendor's five, CSI_ENDPOINT and KUBE_NODE_NAME";
  for (const char* none :
       {"/securityContext", "/livenessProbe", "/readinessProbe", "/lifecycle", "/ports"}) {
    EXPECT_TRUE(at(c, none).is_null()) << none;
  }
  EXPECT_TRUE(sameJson(at(c, "/resources"), Json::object()));
  expectMounts(controller(), c, {{"/csi", R"({"emptyDir": {}})", "", false}});
}

// lvm-driver.yaml, Deployment openebs-lvm-controller, containers csi-provisioner, csi-resizer
// and csi-snapshotter: the vendor's images and flags, each under leader election.
TEST(VendorOpenebsLvm, ControllerSidecars) {
  const Json& d = controller();
  struct Expected {
    const char* name;
    const char* image;
    const char* args;
  };
  const Expected sidecars[] = {
      // The operator's --enable-capacity (the vendor's --enable-capacity=true) and
      // --capacity-ownerref-level=2 (the Deployment owns the capacity objects).
      {"csi-provisioner", "registry.k8s.io/sig-storage/csi-provisioner:v3.5.0",
       R"(["--csi-address=/csi/csi.sock", "--leader-election", "--enable-capacity",
           "--capacity-ownerref-level=2", "--v=5", "--feature-gates=Topology=true",
           "--strict-topology", "--extra-create-metadata=true", "--default-fstype=ext4"])"},
      {"csi-resizer", "registry.k8s.io/sig-storage/csi-resizer:v1.8.0",
       R"(["--csi-address=/csi/csi.sock", "--leader-election", "--v=5"])"},
      {"csi-snapshotter", "registry.k8s.io/sig-storage/csi-snapshotter:v6.2.2",
       R"(["--csi-address=/csi/csi.sock", "--leader-election"])"},
  };
  for (const auto& s : sidecars) {
    SCOPED_TRACE(s.name);
    const Json& c = containerOf(d, s.name);
    EXPECT_EQ(at(c, "/image"), s.image);
    EXPECT_EQ(at(c, "/imagePullPolicy"), "IfNotPresent");
    EXPECT_TRUE(sameJson(at(c, "/args"), Json::parse(s.args)));
    // No metrics endpoint, no leader-election probe, no securityContext: the vendor's.
    EXPECT_TRUE(at(c, "/ports").is_null());
    EXPECT_TRUE(at(c, "/livenessProbe").is_null());
    EXPECT_TRUE(sameJson(at(c, "/securityContext"), Json::object()));
    EXPECT_TRUE(sameJson(at(c, "/resources"), Json::object()));
    expectMounts(d, c, {{"/csi", R"({"emptyDir": {}})", "", false}});
  }
  const Json& p = containerOf(d, "csi-provisioner");
  expectEnvFrom(p, "NAMESPACE", "metadata.namespace");
  expectEnvFrom(p, "POD_NAME", "metadata.name");
  EXPECT_TRUE(at(containerOf(d, "csi-resizer"), "/env").is_null());
}

// openebs-lvm-driver-registrar-role (bound to openebs-lvm-node-sa): the node agent's rules.
TEST(VendorOpenebsLvm, NodeRbac) {
  // Cluster-wide: its Node (GetNode, pkg/driver/agent.go and pkg/mgmt/lvmnode/start.go), and
  // list and watch of LVMVolumes and LVMSnapshots, whose informers span every namespace
  // (pkg/mgmt/volume/start.go, pkg/mgmt/snapshot/start.go).
  const Json& role = get(objects(), "ClusterRole", "csiop:openebs-lvm:node-driver");
  EXPECT_TRUE(sameJson(at(role, "/rules"), Json::parse(R"([
      {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]},
      {"apiGroups": ["local.openebs.io"], "resources": ["lvmvolumes", "lvmsnapshots"],
       "verbs": ["list", "watch"]}])")));
  EXPECT_EQ(subjectOf(get(objects(), "ClusterRoleBinding", "csiop:openebs-lvm:node-driver")),
            "kube-system/openebs-lvm-node");
  // In `openebs` only, where the vendor grants them in every namespace: its verbs on the three,
  // and the Events its recorders write about them.
  const Json& records = get(objects(), "Role", "csiop:openebs-lvm:node-driver", kRecords);
  for (const char* r : {"lvmvolumes", "lvmsnapshots", "lvmnodes"}) {
    EXPECT_TRUE(grants(records, "local.openebs.io", r,
                       {"get", "list", "watch", "create", "update", "patch"}))
        << r;
    EXPECT_FALSE(grants(records, "local.openebs.io", r, {"delete"})) << r;
  }
  EXPECT_TRUE(grants(records, "", "events", {"create", "patch"}));
  EXPECT_EQ(at(records, "/rules").size(), 2U);
  EXPECT_EQ(subjectOf(get(objects(), "RoleBinding", "csiop:openebs-lvm:node-driver", kRecords)),
            "kube-system/openebs-lvm-node");
  // Nothing that writes the driver's records, or reads anything else, cluster-wide.
  const Json all = clusterRulesOf("openebs-lvm-node");
  for (const char* verb : {"get", "create", "update", "patch", "delete"}) {
    EXPECT_FALSE(grants(all, "local.openebs.io", "lvmvolumes", {verb})) << verb;
  }
  EXPECT_FALSE(grants(all, "local.openebs.io", "lvmnodes", {"list"}));
  EXPECT_FALSE(grants(all, "", "persistentvolumes", {"get"})) << "the driver reads none";
  EXPECT_FALSE(grants(all, "", "services", {"get"})) << "the driver reads none";
  EXPECT_FALSE(grants(all, "", "events", {"create"}));
}

// openebs-lvm-provisioner-role (bound to openebs-lvm-controller-sa), what the driver container
// itself calls; the rest of that role is the sidecars'.
TEST(VendorOpenebsLvm, ControllerRbac) {
  // Cluster-wide: the Node informer (pkg/driver/controller.go) and the analytics' node count;
  // the PVC informer and updates of the leak protection (openebs/lib-csi v0.8.2, pkg/csipv); the
  // analytics' cluster id, the UID of the namespace `default` (openebs/google-analytics-4
  // v0.1.0, usage/versionset.go).
  const Json& role = get(objects(), "ClusterRole", "csiop:openebs-lvm:controller-driver");
  EXPECT_TRUE(sameJson(at(role, "/rules"), Json::parse(R"([
      {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
      {"apiGroups": [""], "resources": ["persistentvolumeclaims"],
       "verbs": ["get", "list", "watch", "update"]},
      {"apiGroups": [""], "resources": ["namespaces"], "resourceNames": ["default"],
       "verbs": ["get"]}])")));
  EXPECT_EQ(subjectOf(get(objects(), "ClusterRoleBinding", "csiop:openebs-lvm:controller-driver")),
            "kube-system/openebs-lvm-controller");
  // In `openebs` only, where the vendor grants `*` in every namespace: the verbs the controller
  // calls (pkg/lvm/volume.go, pkg/driver/schd_helper.go, its LVMNode informer).
  const Json& records = get(objects(), "Role", "csiop:openebs-lvm:controller-driver", kRecords);
  for (const char* r : {"lvmvolumes", "lvmsnapshots", "lvmnodes"}) {
    EXPECT_TRUE(grants(records, "local.openebs.io", r,
                       {"get", "list", "watch", "create", "update", "delete"}))
        << r;
  }
  for (const auto& rule : at(records, "/rules")) {
    for (const auto& verb : at(rule, "/verbs")) {
      EXPECT_NE(verb, "*");
    }
  }
  EXPECT_EQ(
      subjectOf(get(objects(), "RoleBinding", "csiop:openebs-lvm:controller-driver", kRecords)),
      "kube-system/openebs-lvm-controller");
  const Json all = clusterRulesOf("openebs-lvm-controller");
  for (const char* r : {"lvmvolumes", "lvmsnapshots", "lvmnodes"}) {
    EXPECT_FALSE(grants(all, "local.openebs.io", r, {"get"})) << r << ": cluster-wide";
  }
  EXPECT_FALSE(grants(all, "", "services", {"get"})) << "the driver reads none";
  EXPECT_FALSE(grants(all, "", "namespaces", {"list"}));
}

// openebs-lvm-provisioner-role and openebs-lvm-snapshotter-role: their sidecar rules are the
// operator's own per-sidecar roles, bound to the controller's account; the snapshot-controller's
// (customresourcedefinitions, volumesnapshots/status) are not granted, as it is not deployed.
TEST(VendorOpenebsLvm, SidecarRulesCoverTheVendorsMergedRoles) {
  const Json all = clusterRulesOf("openebs-lvm-controller");
  EXPECT_TRUE(grants(all, "", "persistentvolumes", {"get", "list", "watch", "create", "delete"}));
  EXPECT_TRUE(grants(all, "", "persistentvolumeclaims", {"get", "list", "watch", "update"}));
  EXPECT_TRUE(grants(all, "", "persistentvolumeclaims/status", {"patch"}));
  for (const char* r : {"storageclasses", "csinodes"}) {
    EXPECT_TRUE(grants(all, "storage.k8s.io", r, {"get", "list", "watch"})) << r;
  }
  EXPECT_TRUE(grants(all, "", "events", {"list", "watch", "create", "update", "patch"}));
  EXPECT_TRUE(grants(all, "", "nodes", {"get", "list", "watch"}));
  EXPECT_TRUE(
      grants(all, "snapshot.storage.k8s.io", "volumesnapshotclasses", {"get", "list", "watch"}));
  EXPECT_TRUE(grants(all, "snapshot.storage.k8s.io", "volumesnapshotcontents",
                     {"get", "list", "watch", "update", "patch"}));
  EXPECT_TRUE(grants(all, "snapshot.storage.k8s.io", "volumesnapshotcontents/status", {"update"}));
  EXPECT_FALSE(grants(all, "apiextensions.k8s.io", "customresourcedefinitions", {"create"}));
  EXPECT_FALSE(grants(all, "snapshot.storage.k8s.io", "volumesnapshots/status", {"update"}));
  EXPECT_FALSE(grants(all, "", "secrets", {"get"})) << "no class names a Secret";
  // csistoragecapacities (the vendor's `*`) and leases, in the driver's namespace.
  const Json& cfg = get(objects(), "Role", "csiop:openebs-lvm:external-provisioner", kNamespace);
  EXPECT_TRUE(grants(cfg, "storage.k8s.io", "csistoragecapacities",
                     {"get", "list", "watch", "create", "update", "patch", "delete"}));
  for (const char* sidecar : {"external-provisioner", "external-resizer", "external-snapshotter"}) {
    const std::string name = std::string("csiop:openebs-lvm:") + sidecar;
    const std::string binding = std::string("csiop:openebs-lvm:sidecar:") + sidecar;
    EXPECT_EQ(subjectOf(get(objects(), "ClusterRoleBinding", binding)),
              "kube-system/openebs-lvm-controller")
        << sidecar;
    EXPECT_TRUE(grants(get(objects(), "Role", name, kNamespace), "coordination.k8s.io", "leases",
                       {"get", "watch", "list", "delete", "update", "create"}))
        << sidecar;
  }
  EXPECT_EQ(testutil::find(objects(), "ClusterRole", "csiop:external-attacher"), nullptr)
      << "nothing to attach";
}

// README.md ("1. Create a Storage class") and deploy/sample/lvmsnapclass.yaml.
TEST(VendorOpenebsLvm, Classes) {
  const Json& sc = get(objects(), "StorageClass", "openebs-lvmpv");
  EXPECT_EQ(at(sc, "/provisioner"), "local.csi.openebs.io");
  EXPECT_TRUE(
      sameJson(at(sc, "/parameters"), Json::parse(R"({"storage": "lvm", "volgroup": "lvmvg"})")));
  for (const char* unset : {"/volumeBindingMode", "/reclaimPolicy", "/allowVolumeExpansion",
                            "/mountOptions", "/allowedTopologies", "/metadata/annotations"}) {
    EXPECT_TRUE(at(sc, unset).is_null()) << unset;
  }
  EXPECT_EQ(testutil::ofKind(objects(), "StorageClass").size(), 1U);
  const Json& vsc = get(objects(), "VolumeSnapshotClass", "lvmpv-snapclass");
  EXPECT_EQ(at(vsc, "/driver"), "local.csi.openebs.io");
  EXPECT_EQ(at(vsc, "/deletionPolicy"), "Delete");
  EXPECT_EQ(at(vsc, "/metadata/annotations/snapshot.storage.kubernetes.io~1is-default-class"),
            "true");
  EXPECT_TRUE(at(vsc, "/parameters").is_null());
}

// deploy/yamls/*-crd.yaml, the snapshot CRDs in lvm-driver.yaml and its PriorityClasses are not
// the operator's to create; the driver's APIs and the snapshotter's are prerequisites, and the
// pods need no PriorityClass the cluster lacks.
TEST(VendorOpenebsLvm, CRDsArePrerequisitesNotObjects) {
  for (const char* kind : {"CustomResourceDefinition", "PriorityClass"}) {
    EXPECT_TRUE(testutil::ofKind(objects(), kind).empty()) << kind;
  }
  const api::Effective e = api::resolve(loadExample("openebs-lvm"));
  const std::vector<std::string> apis = requiredApisOf(e);
  // The snapshotter's first, then spec.requiredAPIs in their order.
  EXPECT_EQ(apis, (std::vector<std::string>{"snapshot.storage.k8s.io/v1/volumesnapshotclasses",
                                            "snapshot.storage.k8s.io/v1/volumesnapshotcontents",
                                            "local.openebs.io/v1alpha1/lvmvolumes",
                                            "local.openebs.io/v1alpha1/lvmsnapshots",
                                            "local.openebs.io/v1alpha1/lvmnodes"}));
  EXPECT_TRUE(render::requiredPriorityClasses(e).empty());
}

} // namespace
} // namespace csiop::vendors
