// examples/csi-driver-smb.yaml against csi-driver-smb's own manifests, v1.20.3: deploy/v1.20.3/
// in kubernetes-csi/csi-driver-smb (what deploy/install-driver.sh v1.20.3 applies, the Windows
// node plugin in its default csi-proxy mode) and deploy/example/storageclass-smb.yaml. The
// Windows node plugin is checked in full: no Windows node runs in the test clusters.
#include "vendor_facts.hpp"

namespace csiop::vendors {
namespace {

const std::vector<Json>& objects() {
  static const std::vector<Json> objs = renderExample("csi-driver-smb");
  return objs;
}

const Json& windows() {
  return get(objects(), "DaemonSet", "csi-driver-smb-node-windows", "kube-system");
}

// deploy/v1.20.3/csi-smb-driver.yaml
TEST(VendorCsiDriverSmb, CSIDriver) {
  const Json& d = get(objects(), "CSIDriver", "smb.csi.k8s.io");
  EXPECT_EQ(d["spec"]["attachRequired"], false);
  EXPECT_EQ(d["spec"]["podInfoOnMount"], true);
  EXPECT_EQ(d["spec"]["volumeLifecycleModes"],
            Json::parse(R"json(["Persistent", "Ephemeral"])json"));
}

// deploy/v1.20.3/csi-smb-node-windows.yaml: the pod.
TEST(VendorCsiDriverSmb, WindowsPodRunsOnWindowsNodesAsTheNodePluginsAccount) {
  const Json& pod = podSpec(windows());
  EXPECT_EQ(pod["os"], (Json{{"name", "windows"}}));
  EXPECT_EQ(pod["nodeSelector"], (Json{{"kubernetes.io/os", "windows"}}));
  EXPECT_EQ(pod["tolerations"], Json::parse(R"json([{"key": "node.kubernetes.io/os",
      "operator": "Exists", "effect": "NoSchedule"}])json"));
  EXPECT_EQ(pod["priorityClassName"], "system-node-critical");
  EXPECT_EQ(pod["serviceAccountName"], "csi-driver-smb-node");
  EXPECT_FALSE(pod.contains("hostNetwork"));
  EXPECT_FALSE(pod.contains("securityContext")) << "no Linux security fields on Windows";
  EXPECT_EQ(
      windows()["spec"]["updateStrategy"],
      Json::parse(R"json({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}})json"));
  EXPECT_EQ(windows()["spec"]["template"]["metadata"]["labels"]["app"], "csi-smb-node-win");
  // Its own selector: the Linux DaemonSet's pods are not its.
  const Json& linux = get(objects(), "DaemonSet", "csi-driver-smb-node", "kube-system");
  EXPECT_NE(windows()["spec"]["selector"], linux["spec"]["selector"]);
  EXPECT_EQ(podSpec(linux)["nodeSelector"], (Json{{"kubernetes.io/os", "linux"}}));
}

// deploy/v1.20.3/csi-smb-node-windows.yaml: volumes (the vendor's socket directory is
// plugins\smb.csi.k8s.io, as ours).
TEST(VendorCsiDriverSmb, WindowsVolumesAreTheKubeletsDirectoriesAndCsiProxysPipes) {
  const Json volumes = podSpec(windows())["volumes"];
  EXPECT_EQ(named(volumes, "socket-dir")["hostPath"],
            (Json{{"path", "C:\\var\\lib\\kubelet\\plugins\\smb.csi.k8s.io"},
                  {"type", "DirectoryOrCreate"}}));
  EXPECT_EQ(named(volumes, "registration-dir")["hostPath"],
            (Json{{"path", "C:\\var\\lib\\kubelet\\plugins_registry"}, {"type", "Directory"}}));
  EXPECT_EQ(named(volumes, "kubelet-dir")["hostPath"],
            (Json{{"path", "C:\\var\\lib\\kubelet"}, {"type", "Directory"}}));
  for (const char* api : {"filesystem-v1", "smb-v1", "filesystem-v1beta1", "smb-v1beta1"}) {
    EXPECT_EQ(named(volumes, std::string("csi-proxy-") + api)["hostPath"],
              (Json{{"path", std::string("\\\\.\\pipe\\csi-proxy-") + api}}))
        << api;
  }
  EXPECT_EQ(volumes.size(), 7u);
}

// deploy/v1.20.3/csi-smb-node-windows.yaml: container smb.
TEST(VendorCsiDriverSmb, WindowsDriver) {
  const Json& c = containerOf(windows(), "smb");
  EXPECT_EQ(c["image"], "registry.k8s.io/sig-storage/smbplugin:v1.20.3");
  EXPECT_EQ(c["args"], Json::parse(R"json(["--v=5", "--endpoint=$(CSI_ENDPOINT)",
      "--nodeid=$(KUBE_NODE_NAME)", "--remove-smb-mapping-during-unmount=true"])json"));
  EXPECT_EQ(envValue(c, "CSI_ENDPOINT"), "unix://C:\\csi\\csi.sock");
  EXPECT_EQ(named(c["env"], "KUBE_NODE_NAME")["valueFrom"]["fieldRef"]["fieldPath"],
            "spec.nodeName");
  EXPECT_FALSE(c.contains("securityContext")) << "the Linux driver's privilege is not inherited";
  EXPECT_FALSE(c.contains("command"));
  EXPECT_EQ(c["ports"], Json::parse(R"json([{"name": "healthz", "containerPort": 29643,
      "protocol": "TCP"}])json"));
  EXPECT_EQ(c["livenessProbe"], Json::parse(R"json({"httpGet": {"path": "/healthz",
      "port": "healthz"}, "initialDelaySeconds": 60, "timeoutSeconds": 30, "periodSeconds": 30,
      "failureThreshold": 10})json"));
  EXPECT_EQ(c["resources"], Json::parse(R"json({"limits": {"memory": "200Mi"},
      "requests": {"cpu": "10m", "memory": "40Mi"}})json"));
  EXPECT_EQ(mountAt(c, "C:\\csi")["name"], "socket-dir");
  EXPECT_EQ(mountAt(c, "C:\\var\\lib\\kubelet")["name"], "kubelet-dir");
  EXPECT_EQ(mountAt(c, "\\\\.\\pipe\\csi-proxy-smb-v1")["name"], "csi-proxy-smb-v1");
  EXPECT_EQ(mountAt(c, "\\\\.\\pipe\\csi-proxy-filesystem-v1beta1")["name"],
            "csi-proxy-filesystem-v1beta1");
  EXPECT_EQ(c["volumeMounts"].size(), 6u);
  EXPECT_EQ(c["volumeMounts"].dump().find("mountPropagation"), std::string::npos);
}

// deploy/v1.20.3/csi-smb-node-windows.yaml: containers node-driver-registrar, liveness-probe.
TEST(VendorCsiDriverSmb, WindowsSidecars) {
  const Json& r = containerOf(windows(), "node-driver-registrar");
  EXPECT_EQ(r["image"], "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.15.0");
  EXPECT_EQ(r["args"], Json::parse(R"json(["--csi-address=unix://C:\\csi\\csi.sock",
      "--kubelet-registration-path=C:\\var\\lib\\kubelet\\plugins\\smb.csi.k8s.io\\csi.sock",
      "--plugin-registration-path=C:\\registration", "--v=2"])json"));
  EXPECT_FALSE(r.contains("livenessProbe")) << "no HTTP endpoint, as the vendor's";
  EXPECT_FALSE(r.contains("securityContext"));
  EXPECT_EQ(mountAt(r, "C:\\csi")["name"], "socket-dir");
  EXPECT_EQ(mountAt(r, "C:\\registration")["name"], "registration-dir");
  EXPECT_EQ(r["resources"], Json::parse(R"json({"limits": {"memory": "100Mi"},
      "requests": {"cpu": "10m", "memory": "40Mi"}})json"));

  const Json& l = containerOf(windows(), "liveness-probe");
  EXPECT_EQ(l["image"], "registry.k8s.io/sig-storage/livenessprobe:v2.16.0");
  EXPECT_EQ(l["args"], Json::parse(R"json(["--csi-address=unix://C:\\csi\\csi.sock",
      "--http-endpoint=:29643", "--probe-timeout=30s", "--v=2"])json"));
  EXPECT_FALSE(l.contains("securityContext"));
  EXPECT_EQ(mountAt(l, "C:\\csi")["name"], "socket-dir");
  EXPECT_EQ(podSpec(windows())["containers"].size(), 3u);
}

// deploy/v1.20.3/csi-smb-node.yaml: the Linux node plugin on the node's network, its probe on
// the node's loopback, the registrar without an endpoint.
TEST(VendorCsiDriverSmb, LinuxNodePlugin) {
  const Json& ds = get(objects(), "DaemonSet", "csi-driver-smb-node", "kube-system");
  const Json& pod = podSpec(ds);
  EXPECT_EQ(pod["hostNetwork"], true);
  EXPECT_EQ(pod["dnsPolicy"], "ClusterFirstWithHostNet");
  EXPECT_EQ(pod["securityContext"],
            Json::parse(R"json({"seccompProfile": {"type": "RuntimeDefault"}})json"));
  const Json& d = containerOf(ds, "smb");
  EXPECT_EQ(d["args"], Json::parse(R"json(["--v=5", "--endpoint=$(CSI_ENDPOINT)",
      "--nodeid=$(KUBE_NODE_NAME)"])json"));
  EXPECT_EQ(d["securityContext"], Json::parse(R"json({"privileged": true,
      "capabilities": {"drop": ["ALL"]}})json"));
  EXPECT_EQ(d["livenessProbe"]["httpGet"], Json::parse(R"json({"path": "/healthz",
      "port": "healthz", "host": "localhost"})json"));
  EXPECT_EQ(mountAt(d, "/var/lib/kubelet/pods")["mountPropagation"], "Bidirectional");
  const Json& l = containerOf(ds, "liveness-probe");
  EXPECT_EQ(l["args"], Json::parse(R"json(["--csi-address=/csi/csi.sock",
      "--http-endpoint=localhost:29643", "--probe-timeout=3s", "--v=2"])json"));
  const Json& r = containerOf(ds, "node-driver-registrar");
  EXPECT_EQ(r["image"], "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.17.0");
  EXPECT_FALSE(r.contains("ports"));
}

// deploy/v1.20.3/csi-smb-controller.yaml
TEST(VendorCsiDriverSmb, Controller) {
  const Json& w = get(objects(), "Deployment", "csi-driver-smb-controller", "kube-system");
  const Json& pod = podSpec(w);
  EXPECT_EQ(pod["hostNetwork"], true);
  EXPECT_EQ(pod["priorityClassName"], "system-cluster-critical");
  const Json& d = containerOf(w, "smb");
  EXPECT_EQ(d["args"], Json::parse(R"json(["--v=5", "--endpoint=$(CSI_ENDPOINT)",
      "--metrics-address=0.0.0.0:29644"])json"));
  EXPECT_EQ(named(d["ports"], "metrics")["containerPort"], 29644);
  const Json& p = containerOf(w, "csi-provisioner");
  EXPECT_EQ(p["args"], Json::parse(R"json(["--csi-address=/csi/csi.sock", "--leader-election",
      "-v=2", "--extra-create-metadata=true", "--retry-interval-max=30m"])json"));
  const Json& r = containerOf(w, "csi-resizer");
  EXPECT_EQ(r["args"], Json::parse(R"json(["--csi-address=/csi/csi.sock", "--leader-election",
      "-v=2", "-handle-volume-inuse-error=false"])json"));
  EXPECT_FALSE(pod["containers"].dump().find("csi-attacher") != std::string::npos);
  // The provisioner reads the class's secret: `get` on exactly it, not every Secret.
  const Json& secrets = get(objects(), "Role", "csiop:csi-driver-smb:secrets", "default");
  EXPECT_EQ(secrets["rules"], Json::parse(R"json([{"apiGroups": [""], "resources": ["secrets"],
      "verbs": ["get"], "resourceNames": ["smbcreds"]}])json"));
}

// deploy/example/storageclass-smb.yaml
TEST(VendorCsiDriverSmb, StorageClass) {
  const Json& sc = get(objects(), "StorageClass", "smb");
  EXPECT_EQ(sc["provisioner"], "smb.csi.k8s.io");
  EXPECT_EQ(sc["parameters"]["source"], "//smb-server.default.svc.cluster.local/share");
  EXPECT_EQ(sc["parameters"]["csi.storage.k8s.io/node-stage-secret-name"], "smbcreds");
  EXPECT_EQ(sc["allowVolumeExpansion"], true);
  EXPECT_EQ(sc["mountOptions"], Json::parse(R"json(["dir_mode=0777", "file_mode=0777", "uid=1001",
      "gid=1001", "noperm", "mfsymlinks", "cache=strict", "noserverino"])json"));
}

} // namespace
} // namespace csiop::vendors
