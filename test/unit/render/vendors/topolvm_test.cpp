// examples/topolvm.yaml against TopoLVM's Helm chart topolvm-chart-v17.1.0 (topolvm/topolvm,
// commit 83e3dcee, appVersion 0.41.0) rendered with its default values as release `topolvm` in
// topolvm-system: the CSIDriver, topolvm-controller, topolvm-node, lvmd with its ConfigMap, the
// StorageClass, the driver's RBAC. File names below are under charts/topolvm/templates/; what
// the operator does differently on purpose is commented in the example.
#include "vendor_facts.hpp"

#include <csiop/api/defaults.hpp>
#include <csiop/render/prerequisites.hpp>

namespace csiop::vendors {
namespace {

constexpr const char* kNamespace = "topolvm-system";
constexpr const char* kImage = "ghcr.io/topolvm/topolvm-with-sidecar:0.41.0@sha256:"
                               "5faf5b94557516ae0f6fa7d329a5a4305e22aa2dc464af7641b31f2aca618036";
constexpr const char* kNoPrivilegeEscalation =
    R"({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}})";

// The name of a binding's only subject, or "" (and a failure).
std::string subjectOf(const Json& binding) {
  const Json& subjects = api::member(binding, "subjects");
  EXPECT_EQ(subjects.size(), 1U) << binding.dump();
  return subjects.size() == 1 ? api::member(subjects[0], "name").get<std::string>() : std::string();
}

// controller/csidriver.yaml (storageCapacityTracking.enabled true).
TEST(VendorTopoLvm, CSIDriverTracksCapacityWithoutAttach) {
  const auto objs = renderExample("topolvm");
  const Json& d = get(objs, "CSIDriver", "topolvm.io");
  ASSERT_TRUE(d.is_object());
  const Json& spec = api::member(d, "spec");
  EXPECT_EQ(api::member(spec, "storageCapacity"), true);
  EXPECT_EQ(api::member(spec, "attachRequired"), false);
  EXPECT_EQ(api::member(spec, "podInfoOnMount"), true);
  EXPECT_TRUE(sameJson(api::member(spec, "volumeLifecycleModes"), Json::array({"Persistent"})));
  // Unset in the chart: the server's defaults, which the operator writes out.
  EXPECT_EQ(api::member(spec, "fsGroupPolicy"), "ReadWriteOnceWithFSType");
  EXPECT_EQ(api::member(spec, "requiresRepublish"), false);
  EXPECT_FALSE(spec.contains("tokenRequests"));
}

// node/daemonset.yaml, container topolvm-node (lvmdEmbedded false: lvmd over its socket).
TEST(VendorTopoLvm, NodeDriverTalksToLvmdAndMountsThePodsBidirectionally) {
  const auto objs = renderExample("topolvm");
  const Json& ds = get(objs, "DaemonSet", "topolvm-node", kNamespace);
  ASSERT_TRUE(ds.is_object());
  const Json& c = containerOf(ds, "topolvm-node");
  EXPECT_EQ(api::member(c, "image"), kImage);
  EXPECT_TRUE(sameJson(api::member(c, "command"), Json::array({"/topolvm-node"})));
  EXPECT_TRUE(sameJson(
      api::member(c, "args"),
      Json::array({"--csi-socket=/csi/csi.sock", "--lvmd-socket=/run/topolvm/lvmd.sock"})));
  EXPECT_FALSE(testutil::hasArg(c, "--embed-lvmd"));
  EXPECT_EQ(named(api::member(c, "env"), "NODE_NAME")["valueFrom"]["fieldRef"]["fieldPath"],
            "spec.nodeName");
  EXPECT_TRUE(sameJson(api::member(c, "securityContext"), Json::parse(R"({"privileged": true})")));
  EXPECT_TRUE(
      sameJson(named(api::member(c, "ports"), "healthz"),
               Json::parse(R"({"name": "healthz", "containerPort": 9808, "protocol": "TCP"})")));
  EXPECT_TRUE(
      sameJson(named(api::member(c, "ports"), "metrics"),
               Json::parse(R"({"name": "metrics", "containerPort": 8080, "protocol": "TCP"})")));
  // livenessProbe.topolvm_node: 10s, 3s, every 60s; failureThreshold unset (3).
  EXPECT_TRUE(sameJson(api::member(c, "livenessProbe"), Json::parse(R"({
      "httpGet": {"path": "/healthz", "port": "healthz"}, "initialDelaySeconds": 10,
      "timeoutSeconds": 3, "periodSeconds": 60, "failureThreshold": 3})")));
  EXPECT_TRUE(sameJson(api::member(c, "resources"), Json::object()));
  // Mounts: lvmd-socket-dir, pod-volumes-dir and csi-plugin-dir (Bidirectional; the operator
  // mounts all of <kubelet>/plugins), devices-dir, and the CSI socket.
  EXPECT_EQ(hostPathAndType(ds, c, "/run/topolvm"), "/run/topolvm DirectoryOrCreate");
  EXPECT_FALSE(mountAt(c, "/run/topolvm").contains("mountPropagation"));
  EXPECT_EQ(api::member(mountAt(c, "/var/lib/kubelet/pods"), "mountPropagation"), "Bidirectional");
  EXPECT_EQ(hostPathAndType(ds, c, "/var/lib/kubelet/pods"),
            "/var/lib/kubelet/pods DirectoryOrCreate");
  EXPECT_EQ(api::member(mountAt(c, "/var/lib/kubelet/plugins"), "mountPropagation"),
            "Bidirectional");
  EXPECT_EQ(hostPathAndType(ds, c, "/var/lib/kubelet/plugins"),
            "/var/lib/kubelet/plugins Directory");
  EXPECT_EQ(hostPathAndType(ds, c, "/dev"), "/dev Directory");
  EXPECT_EQ(hostPathAndType(ds, c, "/csi"),
            "/var/lib/kubelet/plugins/topolvm.io DirectoryOrCreate");
}

// node/daemonset.yaml, containers csi-registrar and liveness-probe: the sidecars of the bundled
// image, started by command; the registrar's preStop hook and probe timings.
TEST(VendorTopoLvm, NodeSidecarsRunFromTheBundledImage) {
  const auto objs = renderExample("topolvm");
  const Json& ds = get(objs, "DaemonSet", "topolvm-node", kNamespace);
  ASSERT_TRUE(ds.is_object());
  const Json& r = containerOf(ds, "node-driver-registrar");
  EXPECT_EQ(api::member(r, "image"), kImage);
  EXPECT_TRUE(sameJson(api::member(r, "command"), Json::array({"/csi-node-driver-registrar"})));
  EXPECT_TRUE(sameJson(api::member(r, "args"), Json::parse(R"(["--csi-address=/csi/csi.sock",
      "--kubelet-registration-path=/var/lib/kubelet/plugins/topolvm.io/csi.sock",
      "--http-endpoint=:9809"])")));
  EXPECT_EQ(api::member(named(api::member(r, "ports"), "registrar"), "containerPort"), 9809);
  EXPECT_TRUE(sameJson(api::member(r, "livenessProbe"), Json::parse(R"({
      "httpGet": {"path": "/healthz", "port": "registrar"}, "initialDelaySeconds": 10,
      "timeoutSeconds": 3, "periodSeconds": 60, "failureThreshold": 3})")));
  EXPECT_TRUE(
      sameJson(api::member(r, "lifecycle"), Json::parse(R"({"preStop": {"exec": {"command": [
      "/bin/sh", "-c", "rm -rf /registration/topolvm.io /registration/topolvm.io-reg.sock"]}}})")));
  EXPECT_TRUE(sameJson(api::member(r, "securityContext"), Json::object()));
  EXPECT_TRUE(sameJson(api::member(r, "resources"), Json::object()));
  EXPECT_EQ(hostPathAndType(ds, r, "/registration"), "/var/lib/kubelet/plugins_registry Directory");
  EXPECT_EQ(hostPathAndType(ds, r, "/csi"),
            "/var/lib/kubelet/plugins/topolvm.io DirectoryOrCreate");

  const Json& l = containerOf(ds, "liveness-probe");
  EXPECT_EQ(api::member(l, "image"), kImage);
  EXPECT_TRUE(sameJson(api::member(l, "command"), Json::array({"/livenessprobe"})));
  EXPECT_TRUE(sameJson(api::member(l, "args"),
                       Json::array({"--csi-address=/csi/csi.sock", "--http-endpoint=:9808"})));
  EXPECT_TRUE(sameJson(api::member(l, "securityContext"), Json::object()));
  EXPECT_TRUE(sameJson(api::member(l, "resources"), Json::object()));
  EXPECT_EQ(testutil::containerNames(ds),
            (std::vector<std::string>{"topolvm-node", "node-driver-registrar", "liveness-probe"}));
}

// node/daemonset.yaml, the pod: no priority class, toleration, hostPID or update strategy; the
// metrics annotation; node/serviceaccount.yaml.
TEST(VendorTopoLvm, NodePodIsTheChartsDefaults) {
  const auto objs = renderExample("topolvm");
  const Json& ds = get(objs, "DaemonSet", "topolvm-node", kNamespace);
  ASSERT_TRUE(ds.is_object());
  const Json& pod = podSpec(ds);
  EXPECT_EQ(api::member(pod, "serviceAccountName"), "topolvm-node");
  EXPECT_EQ(api::member(pod, "automountServiceAccountToken"), true);
  EXPECT_FALSE(pod.contains("priorityClassName"));
  EXPECT_FALSE(pod.contains("tolerations"));
  EXPECT_FALSE(pod.contains("affinity"));
  EXPECT_FALSE(pod.contains("hostPID"));
  EXPECT_FALSE(pod.contains("hostNetwork"));
  EXPECT_FALSE(pod.contains("securityContext"));
  EXPECT_FALSE(pod.contains("initContainers"));
  EXPECT_FALSE(api::member(ds, "spec").contains("updateStrategy"));
  EXPECT_EQ(ds["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"], "metrics");
  EXPECT_NE(testutil::find(objs, "ServiceAccount", "topolvm-node", kNamespace), nullptr);
}

// controller/deployment.yaml, the pod and container topolvm-controller (leader election on,
// webhooks off), controller/serviceaccount.yaml.
TEST(VendorTopoLvm, ControllerRunsTwoReplicasOnDistinctNodesAsUser10000) {
  const auto objs = renderExample("topolvm");
  const Json& d = get(objs, "Deployment", "topolvm-controller", kNamespace);
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(api::member(api::member(d, "spec"), "replicas"), 2);
  EXPECT_FALSE(api::member(d, "spec").contains("strategy")); // the server's RollingUpdate
  const Json& pod = podSpec(d);
  EXPECT_EQ(api::member(pod, "serviceAccountName"), "topolvm-controller");
  EXPECT_TRUE(sameJson(api::member(pod, "securityContext"),
                       Json::parse(R"({"runAsUser": 10000, "runAsGroup": 10000})")));
  EXPECT_FALSE(pod.contains("priorityClassName"));
  EXPECT_FALSE(pod.contains("tolerations"));
  EXPECT_FALSE(pod.contains("terminationGracePeriodSeconds"));
  const Json& anti = api::member(api::member(pod, "affinity"), "podAntiAffinity");
  ASSERT_EQ(api::member(anti, "requiredDuringSchedulingIgnoredDuringExecution").size(), 1U);
  EXPECT_FALSE(anti.contains("preferredDuringSchedulingIgnoredDuringExecution"));
  const Json& term = anti["requiredDuringSchedulingIgnoredDuringExecution"][0];
  EXPECT_EQ(api::member(term, "topologyKey"), "kubernetes.io/hostname");
  // The term selects exactly the controller's pods.
  EXPECT_TRUE(sameJson(term["labelSelector"]["matchLabels"], d["spec"]["selector"]["matchLabels"]));
  EXPECT_TRUE(sameJson(api::member(pod, "volumes"),
                       Json::parse(R"([{"name": "socket-dir", "emptyDir": {}}])")));
  EXPECT_EQ(testutil::containerNames(d),
            (std::vector<std::string>{"topolvm-controller", "csi-provisioner", "csi-resizer",
                                      "csi-snapshotter", "liveness-probe"}));

  const Json& c = containerOf(d, "topolvm-controller");
  EXPECT_EQ(api::member(c, "image"), kImage);
  EXPECT_TRUE(sameJson(api::member(c, "command"), Json::array({"/topolvm-controller"})));
  EXPECT_TRUE(sameJson(
      api::member(c, "args"),
      Json::array({"--csi-socket=/csi/csi.sock", "--leader-election-namespace=topolvm-system",
                   "--enable-webhooks=false"})));
  EXPECT_FALSE(testutil::hasArg(c, "--leader-election=false"));
  EXPECT_TRUE(sameJson(api::member(c, "securityContext"), Json::parse(kNoPrivilegeEscalation)));
  for (const auto& [name, port] : {std::pair{"webhook", 9443}, std::pair{"healthz", 9808},
                                   std::pair{"readyz", 8081}, std::pair{"metrics", 8080}}) {
    EXPECT_EQ(api::member(named(api::member(c, "ports"), name), "containerPort"), port) << name;
  }
  EXPECT_TRUE(sameJson(api::member(c, "readinessProbe"), Json::parse(R"({
      "httpGet": {"path": "/readyz", "port": "readyz", "scheme": "HTTP"}})")));
  EXPECT_TRUE(sameJson(api::member(c, "livenessProbe"), Json::parse(R"({
      "httpGet": {"path": "/healthz", "port": "healthz"}, "initialDelaySeconds": 10,
      "timeoutSeconds": 3, "periodSeconds": 60, "failureThreshold": 3})")));
  EXPECT_TRUE(sameJson(api::member(c, "resources"), Json::object()));
  EXPECT_EQ(api::member(mountAt(c, "/csi"), "name"), "socket-dir");
  EXPECT_NE(testutil::find(objs, "ServiceAccount", "topolvm-controller", kNamespace), nullptr);
}

// controller/deployment.yaml, containers csi-provisioner, csi-resizer, csi-snapshotter and
// liveness-probe: the bundled image, leader election in the release namespace, their ports.
TEST(VendorTopoLvm, ControllerSidecarsElectLeadersAndTrackCapacity) {
  const auto objs = renderExample("topolvm");
  const Json& d = get(objs, "Deployment", "topolvm-controller", kNamespace);
  ASSERT_TRUE(d.is_object());
  struct Sidecar {
    const char* container;
    const char* command;
    int port;
  };
  for (const Sidecar& s : {Sidecar{"csi-provisioner", "/csi-provisioner", 9809},
                           Sidecar{"csi-resizer", "/csi-resizer", 9810},
                           Sidecar{"csi-snapshotter", "/csi-snapshotter", 9811}}) {
    const Json& c = containerOf(d, s.container);
    EXPECT_EQ(api::member(c, "image"), kImage) << s.container;
    EXPECT_TRUE(sameJson(api::member(c, "command"), Json::array({s.command}))) << s.container;
    for (const std::string& arg :
         {std::string("--csi-address=/csi/csi.sock"), std::string("--leader-election"),
          std::string("--leader-election-namespace=topolvm-system"),
          "--http-endpoint=:" + std::to_string(s.port)}) {
      EXPECT_TRUE(testutil::hasArg(c, arg)) << s.container << " " << arg;
    }
    ASSERT_EQ(api::member(c, "ports").size(), 1U) << s.container;
    EXPECT_EQ(c["ports"][0]["containerPort"], s.port) << s.container;
    EXPECT_TRUE(sameJson(api::member(c, "securityContext"), Json::parse(kNoPrivilegeEscalation)))
        << s.container;
    EXPECT_TRUE(sameJson(api::member(c, "resources"), Json::object())) << s.container;
    EXPECT_EQ(api::member(mountAt(c, "/csi"), "name"), "socket-dir") << s.container;
    EXPECT_FALSE(c.contains("livenessProbe")) << s.container << ": the chart probes no sidecar";
  }
  const Json& p = containerOf(d, "csi-provisioner");
  for (const char* arg :
       {"--feature-gates=Topology=true", "--enable-capacity", "--capacity-ownerref-level=2"}) {
    EXPECT_TRUE(testutil::hasArg(p, arg)) << arg;
  }
  EXPECT_EQ(named(api::member(p, "env"), "NAMESPACE")["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.namespace");
  EXPECT_EQ(named(api::member(p, "env"), "POD_NAME")["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.name");

  const Json& l = containerOf(d, "liveness-probe");
  EXPECT_EQ(api::member(l, "image"), kImage);
  EXPECT_TRUE(sameJson(api::member(l, "command"), Json::array({"/livenessprobe"})));
  EXPECT_TRUE(sameJson(api::member(l, "args"),
                       Json::array({"--csi-address=/csi/csi.sock", "--http-endpoint=:9808"})));
  EXPECT_TRUE(sameJson(api::member(l, "securityContext"), Json::parse(kNoPrivilegeEscalation)));
}

// controller/poddisruptionbudget.yaml and controller/service.yaml.
TEST(VendorTopoLvm, ControllerHasItsDisruptionBudgetAndWebhookService) {
  const auto objs = renderExample("topolvm");
  const Json& d = get(objs, "Deployment", "topolvm-controller", kNamespace);
  const Json& pdb = get(objs, "PodDisruptionBudget", "topolvm-controller", kNamespace);
  const Json& svc = get(objs, "Service", "topolvm-controller", kNamespace);
  ASSERT_TRUE(d.is_object() && pdb.is_object() && svc.is_object());
  EXPECT_EQ(api::member(api::member(pdb, "spec"), "maxUnavailable"), 1);
  EXPECT_FALSE(api::member(pdb, "spec").contains("minAvailable"));
  EXPECT_TRUE(sameJson(pdb["spec"]["selector"], d["spec"]["selector"]));
  EXPECT_TRUE(sameJson(svc["spec"]["selector"], d["spec"]["selector"]["matchLabels"]));
  EXPECT_EQ(api::member(api::member(svc, "spec"), "type"), "ClusterIP");
  EXPECT_TRUE(
      sameJson(api::member(api::member(svc, "spec"), "ports"), Json::parse(R"([{"name": "webhook",
      "port": 443, "protocol": "TCP", "targetPort": "webhook"}])")));
}

// node/clusterrole.yaml (<namespace>:node) and controller/clusterroles.yaml
// (<namespace>:controller), controller/roles.yaml (leader-election), with their bindings.
TEST(VendorTopoLvm, DriverRulesAreTheChartsNodeAndControllerRoles) {
  const auto objs = renderExample("topolvm");
  const Json& node = get(objs, "ClusterRole", "csiop:topolvm:node-driver");
  ASSERT_TRUE(node.is_object());
  EXPECT_TRUE(grants(node, "", "nodes", {"get", "list", "watch", "update", "patch"}));
  for (const char* r : {"logicalvolumes", "logicalvolumes/status"}) {
    EXPECT_TRUE(grants(node, "topolvm.io", r,
                       {"get", "list", "watch", "create", "update", "delete", "patch"}))
        << r;
  }
  EXPECT_TRUE(grants(node, "storage.k8s.io", "csidrivers", {"get", "list", "watch"}));
  EXPECT_EQ(api::member(node, "rules").size(), 3U);
  EXPECT_EQ(subjectOf(get(objs, "ClusterRoleBinding", "csiop:topolvm:node-driver")),
            "topolvm-node");

  const Json& ctl = get(objs, "ClusterRole", "csiop:topolvm:controller-driver");
  ASSERT_TRUE(ctl.is_object());
  EXPECT_TRUE(grants(ctl, "", "nodes", {"get", "list", "patch", "update", "watch"}));
  EXPECT_TRUE(
      grants(ctl, "", "persistentvolumeclaims", {"delete", "get", "list", "update", "watch"}));
  EXPECT_TRUE(grants(ctl, "", "pods", {"get", "list", "update", "watch"}));
  EXPECT_TRUE(grants(ctl, "storage.k8s.io", "csidrivers", {"get", "list", "watch"}));
  EXPECT_TRUE(grants(ctl, "storage.k8s.io", "storageclasses", {"get", "list", "watch"}));
  EXPECT_TRUE(grants(ctl, "topolvm.io", "logicalvolumes",
                     {"create", "delete", "get", "list", "patch", "update", "watch"}));
  EXPECT_TRUE(grants(ctl, "topolvm.io", "logicalvolumes/status", {"get", "patch", "update"}));
  EXPECT_FALSE(grants(ctl, "topolvm.io", "logicalvolumes/status", {"create"}));
  EXPECT_EQ(api::member(ctl, "rules").size(), 6U);
  EXPECT_EQ(subjectOf(get(objs, "ClusterRoleBinding", "csiop:topolvm:controller-driver")),
            "topolvm-controller");

  const Json& election = get(objs, "Role", "csiop:topolvm:controller-driver", kNamespace);
  ASSERT_TRUE(election.is_object());
  for (const char* group : {"", "coordination.k8s.io"}) {
    for (const char* r : {"configmaps", "leases"}) {
      EXPECT_TRUE(grants(election, group, r,
                         {"get", "list", "watch", "create", "update", "patch", "delete"}))
          << group << " " << r;
    }
  }
  EXPECT_TRUE(grants(election, "", "events", {"create", "patch"}));
  EXPECT_EQ(subjectOf(get(objs, "RoleBinding", "csiop:topolvm:controller-driver", kNamespace)),
            "topolvm-controller");
}

// controller/clusterroles.yaml and controller/roles.yaml: the chart's copies of the sidecars'
// upstream rules (external-provisioner-runner, -resizer-runner, -snapshotter-runner,
// external-provisioner-cfg) are the operator's own, bound to topolvm-controller.
TEST(VendorTopoLvm, SidecarRulesCoverTheChartsCopies) {
  const auto objs = renderExample("topolvm");
  const Json& prov = get(objs, "ClusterRole", "csiop:external-provisioner");
  ASSERT_TRUE(prov.is_object());
  EXPECT_TRUE(
      grants(prov, "", "persistentvolumes", {"get", "list", "watch", "create", "patch", "delete"}));
  EXPECT_TRUE(grants(prov, "", "persistentvolumeclaims", {"get", "list", "watch", "update"}));
  EXPECT_TRUE(grants(prov, "", "events", {"list", "watch", "create", "update", "patch"}));
  EXPECT_TRUE(grants(prov, "snapshot.storage.k8s.io", "volumesnapshots",
                     {"get", "list", "watch", "update"}));
  EXPECT_TRUE(grants(prov, "snapshot.storage.k8s.io", "volumesnapshotcontents", {"get", "list"}));
  for (const char* r : {"storageclasses", "csinodes", "volumeattachments"}) {
    EXPECT_TRUE(grants(prov, "storage.k8s.io", r, {"get", "list", "watch"})) << r;
  }
  EXPECT_TRUE(grants(prov, "", "nodes", {"get", "list", "watch"}));

  const Json& resizer = get(objs, "ClusterRole", "csiop:external-resizer");
  ASSERT_TRUE(resizer.is_object());
  EXPECT_TRUE(grants(resizer, "", "persistentvolumes", {"get", "list", "watch", "patch"}));
  EXPECT_TRUE(grants(resizer, "", "persistentvolumeclaims/status", {"patch"}));
  EXPECT_TRUE(grants(resizer, "", "pods", {"get", "list", "watch"}));
  EXPECT_TRUE(
      grants(resizer, "storage.k8s.io", "volumeattributesclasses", {"get", "list", "watch"}));

  const Json& snap = get(objs, "ClusterRole", "csiop:external-snapshotter");
  ASSERT_TRUE(snap.is_object());
  EXPECT_TRUE(grants(snap, "snapshot.storage.k8s.io", "volumesnapshotcontents",
                     {"get", "list", "watch", "update", "patch"}));
  EXPECT_TRUE(grants(snap, "snapshot.storage.k8s.io", "volumesnapshotcontents/status",
                     {"update", "patch"}));
  EXPECT_TRUE(grants(snap, "groupsnapshot.storage.k8s.io", "volumegroupsnapshotcontents",
                     {"get", "list", "watch", "update", "patch"}));

  const Json& cfg = get(objs, "Role", "csiop:topolvm:external-provisioner", kNamespace);
  ASSERT_TRUE(cfg.is_object());
  EXPECT_TRUE(grants(cfg, "storage.k8s.io", "csistoragecapacities",
                     {"get", "list", "watch", "create", "update", "patch", "delete"}));
  EXPECT_TRUE(grants(cfg, "", "pods", {"get"}));
  EXPECT_TRUE(grants(cfg, "apps", "replicasets", {"get"}));
  EXPECT_TRUE(grants(cfg, "coordination.k8s.io", "leases",
                     {"get", "watch", "list", "delete", "update", "create"}));
  for (const char* sidecar : {"external-provisioner", "external-resizer", "external-snapshotter"}) {
    const std::string name = std::string("csiop:topolvm:") + sidecar;
    const std::string binding = std::string("csiop:topolvm:sidecar:") + sidecar;
    const Json& b = get(objs, "ClusterRoleBinding", binding);
    ASSERT_TRUE(b.is_object()) << sidecar;
    EXPECT_EQ(subjectOf(b), "topolvm-controller") << sidecar;
    EXPECT_TRUE(
        grants(get(objs, "Role", name, kNamespace), "coordination.k8s.io", "leases", {"update"}))
        << sidecar;
  }
}

// lvmd/configmap.yaml, lvmd/serviceaccount.yaml and lvmd/daemonset.yaml (lvmd.managed true).
TEST(VendorTopoLvm, LvmdRunsAsItsOwnDaemonSetWithItsConfig) {
  const auto objs = renderExample("topolvm");
  const Json& cm = get(objs, "ConfigMap", "topolvm-lvmd-0", kNamespace);
  ASSERT_TRUE(cm.is_object());
  EXPECT_EQ(cm["data"]["lvmd.yaml"], "socket-name: /run/topolvm/lvmd.sock\n"
                                     "device-classes:\n"
                                     "  - default: true\n"
                                     "    name: ssd\n"
                                     "    spare-gb: 10\n"
                                     "    volume-group: myvg1\n");
  EXPECT_EQ(cm["metadata"]["labels"]["idx"], "0");
  EXPECT_NE(testutil::find(objs, "ServiceAccount", "topolvm-lvmd", kNamespace), nullptr);

  const Json& ds = get(objs, "DaemonSet", "topolvm-lvmd-0", kNamespace);
  ASSERT_TRUE(ds.is_object());
  const Json& pod = podSpec(ds);
  EXPECT_EQ(api::member(pod, "serviceAccountName"), "topolvm-lvmd");
  EXPECT_EQ(api::member(pod, "hostPID"), true);
  EXPECT_FALSE(pod.contains("tolerations"));
  EXPECT_FALSE(pod.contains("nodeSelector"));
  EXPECT_FALSE(pod.contains("priorityClassName"));
  EXPECT_EQ(ds["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"], "metrics");
  // The selector picks the template's pods.
  const Json& podMeta = api::member(api::member(api::member(ds, "spec"), "template"), "metadata");
  for (const auto& [k, v] : ds["spec"]["selector"]["matchLabels"].items()) {
    EXPECT_EQ(api::member(api::member(podMeta, "labels"), k.c_str()), v) << k;
  }
  EXPECT_EQ(testutil::containerNames(ds), std::vector<std::string>{"lvmd"});
  const Json& c = containerOf(ds, "lvmd");
  EXPECT_EQ(api::member(c, "image"), kImage);
  EXPECT_TRUE(sameJson(api::member(c, "command"), Json::array({"/lvmd"})));
  EXPECT_FALSE(c.contains("args"));
  EXPECT_TRUE(sameJson(api::member(c, "securityContext"), Json::parse(R"({"privileged": true})")));
  EXPECT_TRUE(sameJson(api::member(c, "livenessProbe"), Json::parse(R"({
      "exec": {"command": ["/lvmd", "health"]}, "initialDelaySeconds": 10,
      "timeoutSeconds": 3, "periodSeconds": 60})")));
  EXPECT_TRUE(
      sameJson(named(api::member(c, "ports"), "metrics"),
               Json::parse(R"({"name": "metrics", "containerPort": 8080, "protocol": "TCP"})")));
  EXPECT_EQ(hostPathAndType(ds, c, "/dev"), "/dev Directory");
  EXPECT_EQ(hostPathAndType(ds, c, "/run/topolvm"), "/run/topolvm DirectoryOrCreate");
  EXPECT_TRUE(
      sameJson(volumeAt(ds, c, "/etc/topolvm"),
               Json::parse(R"({"name": "config", "configMap": {"name": "topolvm-lvmd-0"}})")));
}

// storageclass.yaml (storageClasses[0]: topolvm-provisioner).
TEST(VendorTopoLvm, StorageClassIsXfsWaitingForTheConsumer) {
  const auto objs = renderExample("topolvm");
  const Json& sc = get(objs, "StorageClass", "topolvm-provisioner");
  ASSERT_TRUE(sc.is_object());
  EXPECT_EQ(api::member(sc, "provisioner"), "topolvm.io");
  EXPECT_TRUE(sameJson(api::member(sc, "parameters"),
                       Json::parse(R"({"csi.storage.k8s.io/fstype": "xfs"})")));
  EXPECT_EQ(api::member(sc, "volumeBindingMode"), "WaitForFirstConsumer");
  EXPECT_EQ(api::member(sc, "allowVolumeExpansion"), true);
  EXPECT_FALSE(sc.contains("mountOptions"));
  EXPECT_FALSE(api::member(sc, "metadata").contains("annotations")); // isDefaultClass false
  EXPECT_NE(api::member(sc, "reclaimPolicy"), "Retain");
  EXPECT_EQ(testutil::ofKind(objs, "StorageClass").size(), 1U);
}

// crds/topolvm.io_logicalvolumes.yaml and priorityclass.yaml are not the operator's to create;
// the LogicalVolume API and the snapshotter's are prerequisites.
TEST(VendorTopoLvm, CRDsArePrerequisitesNotObjects) {
  const auto objs = renderExample("topolvm");
  for (const char* kind : {"CustomResourceDefinition", "PriorityClass",
                           "MutatingWebhookConfiguration", "Certificate", "Issuer"}) {
    EXPECT_TRUE(testutil::ofKind(objs, kind).empty()) << kind;
  }
  const api::Effective e = api::resolve(loadExample("topolvm"));
  const std::vector<std::string> apis = requiredApisOf(e);
  EXPECT_EQ(apis, (std::vector<std::string>{"snapshot.storage.k8s.io/v1/volumesnapshotclasses",
                                            "snapshot.storage.k8s.io/v1/volumesnapshotcontents",
                                            "topolvm.io/v1/logicalvolumes"}));
  EXPECT_TRUE(render::requiredPriorityClasses(e).empty());
}

} // namespace
} // namespace csiop::vendors
