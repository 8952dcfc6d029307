// examples/csi-driver-nfs.yaml against csi-driver-nfs's own manifests, v4.13.4: what
// deploy/install-driver.sh v4.13.4 applies, deploy/v4.13.4/ in kubernetes-csi/csi-driver-nfs at
// tag v4.13.4 (commit f09798c0f1e7d1ae3b32dc8dfef67f6e848e8761; identical to that tag's deploy/),
// plus the vendor's example classes. Where our objects differ on purpose (names, the socket
// directory <kubeletDir>/plugins/nfs.csi.k8s.io, the operator's own node mounts, per-sidecar RBAC),
// the test says so.
#include "vendor_facts.hpp"

#include <nlohmann/json.hpp>

namespace csiop::vendors {
namespace {

// Order-insensitive for objects (the operator writes some keys in its own order).
nlohmann::json plain(const Json& j) {
  return nlohmann::json::parse(j.dump());
}
nlohmann::json plain(const char* text) {
  return nlohmann::json::parse(text);
}

// The value at a JSON pointer ("/spec/strategy"), or null: a missing field fails the comparison
// instead of aborting the test binary.
Json at(const Json& j, const std::string& pointer) {
  const Json::json_pointer p(pointer);
  return j.contains(p) ? j.at(p) : Json();
}

// What every sidecar of the vendor's sets, in both pods.
const char* const kDropAll = R"({"capabilities": {"drop": ["ALL"]}})";
const char* const kDriverContext = R"({"privileged": true,
    "capabilities": {"add": ["SYS_ADMIN"], "drop": ["ALL"]}, "allowPrivilegeEscalation": true})";
const char* const kNodeName = R"({"name": "NODE_ID",
    "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}})";

// requests cpu 10m and memory 20Mi, and a memory limit.
nlohmann::json resources(const char* limit) {
  return plain((std::string(R"({"limits": {"memory": ")") + limit +
                R"("}, "requests": {"cpu": "10m", "memory": "20Mi"}})")
                   .c_str());
}

const std::vector<Json>& objects() {
  static const std::vector<Json> objs = renderExample("csi-driver-nfs");
  return objs;
}

const Json& node() {
  return get(objects(), "DaemonSet", "csi-driver-nfs-node", "kube-system");
}

const Json& controller() {
  return get(objects(), "Deployment", "csi-driver-nfs-controller", "kube-system");
}

// The hostPath behind a container's mount, or "" (an emptyDir, or no such mount).
std::string hostPathAt(const Json& workload, const Json& container, const std::string& path) {
  const Json p = at(volumeAt(workload, container, path), "/hostPath/path");
  return p.is_string() ? p.get<std::string>() : "";
}

// The rules of every (Cluster)Role of `kind` bound to `serviceAccount` (of kube-system), as one.
Json rulesOf(const std::string& kind, const std::string& serviceAccount) {
  const std::string ns = kind == "Role" ? "kube-system" : "";
  Json all = {{"rules", Json::array()}};
  for (const Json* binding : testutil::ofKind(objects(), kind + "Binding")) {
    for (const auto& s : at(*binding, "/subjects")) {
      if (at(s, "/name") == serviceAccount && at(s, "/namespace") == "kube-system") {
        const std::string roleName = at(*binding, "/roleRef/name").get<std::string>();
        const Json& role = get(objects(), kind, roleName, ns);
        for (const auto& r : at(role, "/rules")) {
          all["rules"].push_back(r);
        }
      }
    }
  }
  return all;
}

// deploy/v4.13.4/csi-nfs-driverinfo.yaml
TEST(VendorCsiDriverNfs, CSIDriver) {
  const Json& d = get(objects(), "CSIDriver", "nfs.csi.k8s.io");
  EXPECT_EQ(at(d, "/spec/attachRequired"), false);
  EXPECT_EQ(at(d, "/spec/volumeLifecycleModes"), Json::parse(R"(["Persistent"])"));
  EXPECT_EQ(at(d, "/spec/fsGroupPolicy"), "File");
  // Unset there, so the server's defaults.
  EXPECT_EQ(at(d, "/spec/podInfoOnMount"), false);
  EXPECT_EQ(at(d, "/spec/storageCapacity"), false);
  EXPECT_EQ(at(d, "/spec/requiresRepublish"), false);
  EXPECT_TRUE(at(d, "/spec/tokenRequests").is_null());
  EXPECT_TRUE(at(d, "/spec/seLinuxMount").is_null());
  // kube-system is the vendor's namespace; the operator never creates it.
  EXPECT_TRUE(testutil::ofKind(objects(), "Namespace").empty());
}

// deploy/v4.13.4/csi-nfs-node.yaml: the DaemonSet and its pod.
TEST(VendorCsiDriverNfs, NodePod) {
  const Json& ds = node();
  EXPECT_EQ(plain(at(ds, "/spec/updateStrategy")),
            plain(R"({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}})"));
  // The vendor's pod label: its documentation selects the pods by it.
  EXPECT_EQ(at(ds, "/spec/template/metadata/labels/app"), "csi-nfs-node");
  const Json& pod = podSpec(ds);
  // An NFS mount made from the pod's own network namespace would break with the pod.
  EXPECT_EQ(at(pod, "/hostNetwork"), true);
  EXPECT_EQ(at(pod, "/dnsPolicy"), "ClusterFirstWithHostNet");
  EXPECT_EQ(at(pod, "/priorityClassName"), "system-node-critical");
  EXPECT_EQ(plain(at(pod, "/securityContext")),
            plain(R"({"seccompProfile": {"type": "RuntimeDefault"}})"));
  EXPECT_EQ(plain(at(pod, "/nodeSelector")), plain(R"({"kubernetes.io/os": "linux"})"));
  EXPECT_EQ(at(pod, "/tolerations"), Json::parse(R"([{"operator": "Exists"}])"));
  EXPECT_TRUE(at(pod, "/affinity").is_null());
  EXPECT_EQ(at(pod, "/containers").size(), 3U);
  // rbac-csi-nfs.yaml: csi-nfs-node-sa has no rules, so no token is mounted at all.
  EXPECT_EQ(at(pod, "/serviceAccountName"), "csi-driver-nfs-node");
  EXPECT_EQ(at(pod, "/automountServiceAccountToken"), false);
  EXPECT_TRUE(rulesOf("ClusterRole", "csi-driver-nfs-node")["rules"].empty());
  EXPECT_TRUE(rulesOf("Role", "csi-driver-nfs-node")["rules"].empty());
}

// deploy/v4.13.4/csi-nfs-node.yaml, container nfs.
TEST(VendorCsiDriverNfs, NodeDriverContainer) {
  const Json& ds = node();
  const Json& c = containerOf(ds, "nfs");
  EXPECT_EQ(at(c, "/image"), "registry.k8s.io/sig-storage/nfsplugin:v4.13.4");
  EXPECT_EQ(at(c, "/imagePullPolicy"), "IfNotPresent");
  EXPECT_EQ(at(c, "/args"),
            Json::parse(R"j(["-v=5", "--nodeid=$(NODE_ID)", "--endpoint=$(CSI_ENDPOINT)"])j"));
  EXPECT_EQ(plain(named(at(c, "/env"), "NODE_ID")), plain(kNodeName));
  EXPECT_EQ(envValue(c, "CSI_ENDPOINT"), "unix:///csi/csi.sock");
  EXPECT_EQ(plain(at(c, "/securityContext")), plain(kDriverContext));
  // On the node's loopback, port 29653: the livenessprobe's endpoint.
  EXPECT_EQ(plain(at(c, "/livenessProbe")), plain(R"({
      "httpGet": {"host": "localhost", "path": "/healthz", "port": "healthz"},
      "initialDelaySeconds": 30, "timeoutSeconds": 10, "periodSeconds": 30,
      "failureThreshold": 5})"));
  EXPECT_EQ(at(named(at(c, "/ports"), "healthz"), "/containerPort"), 29653);
  EXPECT_TRUE(at(c, "/readinessProbe").is_null());
  EXPECT_EQ(plain(at(c, "/resources")), resources("300Mi"));

  // The vendor's socket-dir is /var/lib/kubelet/plugins/csi-nfsplugin; ours is named after the
  // driver, and the registrar registers that path.
  EXPECT_EQ(hostPathAt(ds, c, "/csi"), "/var/lib/kubelet/plugins/nfs.csi.k8s.io");
  EXPECT_TRUE(at(mountAt(c, "/csi"), "/mountPropagation").is_null());
  // pods-mount-dir: where the kubelet wants the share mounted, propagated back to the host.
  EXPECT_EQ(at(mountAt(c, "/var/lib/kubelet/pods"), "/mountPropagation"), "Bidirectional");
  EXPECT_EQ(hostPathAt(ds, c, "/var/lib/kubelet/pods"), "/var/lib/kubelet/pods");
}

// deploy/v4.13.4/csi-nfs-node.yaml, containers node-driver-registrar and liveness-probe.
TEST(VendorCsiDriverNfs, NodeSidecars) {
  const Json& ds = node();
  const Json& r = containerOf(ds, "node-driver-registrar");
  EXPECT_EQ(at(r, "/image"), "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.17.0");
  // The vendor's $(DRIVER_REG_SOCK_PATH), in our socket directory; no HTTP endpoint.
  EXPECT_EQ(at(r, "/args"), Json::parse(R"(["--csi-address=/csi/csi.sock",
      "--kubelet-registration-path=/var/lib/kubelet/plugins/nfs.csi.k8s.io/csi.sock", "--v=2"])"));
  EXPECT_TRUE(at(r, "/ports").is_null());
  EXPECT_TRUE(at(r, "/livenessProbe").is_null());
  EXPECT_EQ(plain(named(at(r, "/env"), "KUBE_NODE_NAME")), plain(R"({"name": "KUBE_NODE_NAME",
      "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}})"));
  EXPECT_EQ(plain(at(r, "/securityContext")), plain(kDropAll));
  EXPECT_EQ(plain(at(r, "/resources")), resources("100Mi"));
  EXPECT_EQ(hostPathAt(ds, r, "/csi"), "/var/lib/kubelet/plugins/nfs.csi.k8s.io");
  EXPECT_EQ(hostPathAt(ds, r, "/registration"), "/var/lib/kubelet/plugins_registry");

  const Json& l = containerOf(ds, "liveness-probe");
  EXPECT_EQ(at(l, "/image"), "registry.k8s.io/sig-storage/livenessprobe:v2.19.0");
  EXPECT_EQ(at(l, "/args"), Json::parse(R"(["--csi-address=/csi/csi.sock",
      "--http-endpoint=localhost:29653", "--probe-timeout=3s", "--v=2"])"));
  EXPECT_TRUE(at(l, "/ports").is_null());
  EXPECT_EQ(plain(at(l, "/securityContext")), plain(kDropAll));
  EXPECT_EQ(plain(at(l, "/resources")), resources("100Mi"));
  EXPECT_EQ(hostPathAt(ds, l, "/csi"), "/var/lib/kubelet/plugins/nfs.csi.k8s.io");
}

// deploy/v4.13.4/csi-nfs-controller.yaml: the Deployment and its pod.
TEST(VendorCsiDriverNfs, ControllerPod) {
  const Json& d = controller();
  EXPECT_EQ(at(d, "/spec/replicas"), 1);
  EXPECT_EQ(plain(at(d, "/spec/strategy")), plain(R"({"type": "RollingUpdate",
      "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}})"));
  EXPECT_EQ(at(d, "/spec/template/metadata/labels/app"), "csi-nfs-controller");
  const Json& pod = podSpec(d);
  // The controller mounts the share too, to create and delete volume directories.
  EXPECT_EQ(at(pod, "/hostNetwork"), true);
  EXPECT_EQ(at(pod, "/dnsPolicy"), "ClusterFirstWithHostNet");
  EXPECT_EQ(plain(at(pod, "/nodeSelector")), plain(R"({"kubernetes.io/os": "linux"})"));
  EXPECT_EQ(at(pod, "/priorityClassName"), "system-cluster-critical");
  EXPECT_EQ(plain(at(pod, "/securityContext")),
            plain(R"({"seccompProfile": {"type": "RuntimeDefault"}})"));
  EXPECT_EQ(plain(at(pod, "/tolerations")), plain(R"([
      {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
      {"key": "node-role.kubernetes.io/controlplane", "operator": "Exists",
       "effect": "NoSchedule"},
      {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
       "effect": "NoSchedule"},
      {"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"}])"));
  EXPECT_TRUE(at(pod, "/affinity").is_null());
  EXPECT_EQ(at(pod, "/serviceAccountName"), "csi-driver-nfs-controller");
  EXPECT_NE(at(pod, "/automountServiceAccountToken"), false);
  EXPECT_EQ(at(pod, "/containers").size(), 5U);
  EXPECT_EQ(plain(named(at(pod, "/volumes"), "socket-dir")),
            plain(R"({"name": "socket-dir", "emptyDir": {}})"));
  EXPECT_TRUE(testutil::ofKind(objects(), "PodDisruptionBudget").empty());
}

// deploy/v4.13.4/csi-nfs-controller.yaml, container nfs.
TEST(VendorCsiDriverNfs, ControllerDriverContainer) {
  const Json& d = controller();
  const Json& c = containerOf(d, "nfs");
  EXPECT_EQ(at(c, "/image"), "registry.k8s.io/sig-storage/nfsplugin:v4.13.4");
  EXPECT_EQ(at(c, "/args"),
            Json::parse(R"j(["-v=5", "--nodeid=$(NODE_ID)", "--endpoint=$(CSI_ENDPOINT)"])j"));
  EXPECT_EQ(plain(named(at(c, "/env"), "NODE_ID")), plain(kNodeName));
  EXPECT_EQ(envValue(c, "CSI_ENDPOINT"), "unix:///csi/csi.sock");
  EXPECT_EQ(plain(at(c, "/securityContext")), plain(kDriverContext));
  EXPECT_EQ(plain(at(c, "/livenessProbe")), plain(R"({
      "httpGet": {"host": "localhost", "path": "/healthz", "port": "healthz"},
      "initialDelaySeconds": 30, "timeoutSeconds": 10, "periodSeconds": 30,
      "failureThreshold": 5})"));
  EXPECT_EQ(at(named(at(c, "/ports"), "healthz"), "/containerPort"), 29652);
  EXPECT_EQ(plain(at(c, "/resources")), resources("200Mi"));
  EXPECT_EQ(at(mountAt(c, "/csi"), "/name"), "socket-dir");
  // pods-mount-dir in the controller too, Bidirectional, hostPath type Directory.
  EXPECT_EQ(at(mountAt(c, "/var/lib/kubelet/pods"), "/mountPropagation"), "Bidirectional");
  EXPECT_EQ(plain(volumeAt(d, c, "/var/lib/kubelet/pods")), plain(R"({"name": "pods-mount-dir",
      "hostPath": {"path": "/var/lib/kubelet/pods", "type": "Directory"}})"));
  EXPECT_EQ(at(c, "/volumeMounts").size(), 2U);
}

// deploy/v4.13.4/csi-nfs-controller.yaml, containers csi-provisioner, csi-resizer,
// csi-snapshotter and liveness-probe.
TEST(VendorCsiDriverNfs, ControllerSidecars) {
  const Json& d = controller();
  struct Expected {
    const char* name;
    const char* image;
    const char* args;
    const char* memoryLimit;
  };
  // The vendor's args but --csi-address=$(ADDRESS) (the same socket) and
  // --leader-election-namespace=$(POD_NAMESPACE) (the sidecars' default: their own namespace).
  const Expected sidecars[] = {
      {"csi-provisioner", "registry.k8s.io/sig-storage/csi-provisioner:v6.3.0",
       R"(["--csi-address=/csi/csi.sock", "--leader-election", "-v=2",
           "--extra-create-metadata=true", "--feature-gates=VolumeAttributesClass=false",
           "--timeout=1200s", "--retry-interval-max=30m"])",
       "400Mi"},
      {"csi-resizer", "registry.k8s.io/sig-storage/csi-resizer:v2.2.0",
       R"(["--csi-address=/csi/csi.sock", "--leader-election", "-v=2",
           "-handle-volume-inuse-error=false", "-feature-gates=VolumeAttributesClass=false"])",
       "400Mi"},
      {"csi-snapshotter", "registry.k8s.io/sig-storage/csi-snapshotter:v8.6.0",
       R"(["--csi-address=/csi/csi.sock", "--leader-election", "--v=2", "--timeout=1200s",
           "--retry-interval-max=30m"])",
       "200Mi"},
  };
  for (const auto& s : sidecars) {
    SCOPED_TRACE(s.name);
    const Json& c = containerOf(d, s.name);
    EXPECT_EQ(at(c, "/image"), s.image);
    EXPECT_EQ(at(c, "/imagePullPolicy"), "IfNotPresent");
    EXPECT_EQ(at(c, "/args"), Json::parse(s.args));
    // No HTTP endpoint: on the node's network it would be a node port; the vendor has none.
    EXPECT_TRUE(at(c, "/ports").is_null());
    EXPECT_TRUE(at(c, "/livenessProbe").is_null());
    EXPECT_EQ(plain(at(c, "/securityContext")), plain(kDropAll));
    EXPECT_EQ(plain(at(c, "/resources")), resources(s.memoryLimit));
    EXPECT_EQ(at(mountAt(c, "/csi"), "/name"), "socket-dir");
  }
  const Json& l = containerOf(d, "liveness-probe");
  EXPECT_EQ(at(l, "/image"), "registry.k8s.io/sig-storage/livenessprobe:v2.19.0");
  EXPECT_EQ(at(l, "/args"), Json::parse(R"(["--csi-address=/csi/csi.sock",
      "--http-endpoint=localhost:29652", "--probe-timeout=3s", "--v=2"])"));
  EXPECT_EQ(plain(at(l, "/securityContext")), plain(kDropAll));
  EXPECT_EQ(plain(at(l, "/resources")), resources("100Mi"));
  EXPECT_EQ(at(mountAt(l, "/csi"), "/name"), "socket-dir");
}

// deploy/v4.13.4/rbac-csi-nfs.yaml: nfs-external-provisioner-role and nfs-external-resizer-role,
// both bound to csi-nfs-controller-sa. Ours are the sidecars' upstream rules, one ClusterRole
// each; every rule of the vendor's that a sidecar uses is granted, leases in the namespace.
TEST(VendorCsiDriverNfs, ControllerRbac) {
  const Json cluster = rulesOf("ClusterRole", "csi-driver-nfs-controller");
  struct Rule {
    const char* group;
    const char* resource;
    std::vector<std::string> verbs;
  };
  const Rule rules[] = {
      {"", "persistentvolumes", {"get", "list", "watch", "create", "patch", "delete"}},
      {"", "persistentvolumeclaims", {"get", "list", "watch", "update"}},
      {"", "persistentvolumeclaims/status", {"patch"}},
      {"storage.k8s.io", "storageclasses", {"get", "list", "watch"}},
      {"snapshot.storage.k8s.io", "volumesnapshotclasses", {"get", "list", "watch"}},
      {"snapshot.storage.k8s.io", "volumesnapshots", {"get", "list", "watch"}},
      {"snapshot.storage.k8s.io",
       "volumesnapshotcontents",
       {"get", "list", "watch", "update", "patch"}},
      {"snapshot.storage.k8s.io", "volumesnapshotcontents/status", {"update", "patch"}},
      {"", "events", {"list", "watch", "create", "update", "patch"}},
      {"storage.k8s.io", "csinodes", {"get", "list", "watch"}},
      {"", "nodes", {"get", "list", "watch"}},
  };
  for (const auto& r : rules) {
    EXPECT_TRUE(grants(cluster, r.group, r.resource, r.verbs)) << r.resource;
  }
  // Leases only in the driver's namespace (the vendor grants them cluster-wide).
  EXPECT_FALSE(grants(cluster, "coordination.k8s.io", "leases", {"get"}));
  const Json leases = rulesOf("Role", "csi-driver-nfs-controller");
  EXPECT_TRUE(grants(leases, "coordination.k8s.io", "leases",
                     {"get", "list", "watch", "create", "update"}));
  for (const char* sidecar : {"external-provisioner", "external-resizer", "external-snapshotter"}) {
    const std::string name = std::string("csiop:csi-driver-nfs:") + sidecar;
    const std::string binding = std::string("csiop:csi-driver-nfs:sidecar:") + sidecar;
    EXPECT_EQ(at(get(objects(), "ClusterRoleBinding", binding), "/subjects/0/name"),
              "csi-driver-nfs-controller")
        << name;
    EXPECT_EQ(at(get(objects(), "RoleBinding", name, "kube-system"), "/subjects/0/name"),
              "csi-driver-nfs-controller")
        << name;
  }
  // The vendor's cluster-wide `get` on every Secret is left out: no class of ours names a secret
  // (storageclass.yaml has its provisioner-secret parameters commented out).
  EXPECT_FALSE(grants(cluster, "", "secrets", {"get"}));
  EXPECT_FALSE(grants(leases, "", "secrets", {"get"}));
  // No attacher: attachRequired is false.
  EXPECT_TRUE(testutil::find(objects(), "ClusterRole", "csiop:external-attacher") == nullptr);
}

// deploy/v4.13.4/storageclass.yaml (= deploy/example/storageclass-nfs.yaml),
// deploy/v4.13.4/snapshotclass.yaml (= deploy/example/snapshot/snapshotclass-nfs.yaml)
TEST(VendorCsiDriverNfs, Classes) {
  const Json& sc = get(objects(), "StorageClass", "nfs-csi");
  EXPECT_EQ(at(sc, "/provisioner"), "nfs.csi.k8s.io");
  EXPECT_EQ(plain(at(sc, "/parameters")),
            plain(R"({"server": "nfs-server.default.svc.cluster.local", "share": "/"})"));
  EXPECT_EQ(at(sc, "/reclaimPolicy"), "Delete");
  EXPECT_EQ(at(sc, "/volumeBindingMode"), "Immediate");
  EXPECT_EQ(at(sc, "/allowVolumeExpansion"), true);
  EXPECT_EQ(at(sc, "/mountOptions"), Json::parse(R"(["nfsvers=4.1"])"));
  EXPECT_TRUE(at(sc, "/metadata/annotations").is_null()) << "not the default class";
  EXPECT_EQ(testutil::ofKind(objects(), "StorageClass").size(), 1U);
  const Json& vsc = get(objects(), "VolumeSnapshotClass", "csi-nfs-snapclass");
  EXPECT_EQ(at(vsc, "/driver"), "nfs.csi.k8s.io");
  EXPECT_EQ(at(vsc, "/deletionPolicy"), "Delete");
  EXPECT_TRUE(at(vsc, "/parameters").is_null());
}

} // namespace
} // namespace csiop::vendors
