// examples/aws-ebs.yaml against the Amazon EBS CSI driver's own manifests, v1.64.0: the kustomize
// install the vendor documents (deploy/kubernetes/overlays/stable at ref=release-1.64, commit
// 9767d8523ae16f864f027f90cb952bd0e46c4b93, tag helm-chart-aws-ebs-csi-driver-2.64.0), i.e.
// deploy/kubernetes/base/, the helm chart rendered with its defaults. Every path below is in
// kubernetes-sigs/aws-ebs-csi-driver at that commit. Where our objects differ on purpose (names,
// the socket directory /csi, the kubelet directory mounted as pods/ and plugins/), the test says
// so.
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

const char* const kResources256 =
    R"({"limits": {"memory": "256Mi"}, "requests": {"cpu": "10m", "memory": "40Mi"}})";
const char* const kResources32 =
    R"({"limits": {"memory": "32Mi"}, "requests": {"cpu": "10m", "memory": "32Mi"}})";
const char* const kSidecarContext =
    R"({"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true})";
const char* const kControllerContext = R"({"allowPrivilegeEscalation": false,
    "readOnlyRootFilesystem": true, "seccompProfile": {"type": "RuntimeDefault"}})";

const std::vector<Json>& objects() {
  static const std::vector<Json> objs = renderExample("aws-ebs");
  return objs;
}

const Json& node() {
  return get(objects(), "DaemonSet", "aws-ebs-node", "kube-system");
}

const Json& controller() {
  return get(objects(), "Deployment", "aws-ebs-controller", "kube-system");
}

// The hostPath behind a container's mount, or "" (an emptyDir, or no such mount).
std::string hostPathAt(const Json& workload, const Json& container, const std::string& path) {
  const Json p = at(volumeAt(workload, container, path), "/hostPath/path");
  return p.is_string() ? p.get<std::string>() : "";
}

// The rules of every ClusterRole bound to `serviceAccount` (of kube-system), as one role.
Json clusterRulesOf(const std::string& serviceAccount) {
  Json all = {{"rules", Json::array()}};
  for (const Json* binding : testutil::ofKind(objects(), "ClusterRoleBinding")) {
    for (const auto& s : at(*binding, "/subjects")) {
      if (at(s, "/name") == serviceAccount && at(s, "/namespace") == "kube-system") {
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

// deploy/kubernetes/base/csidriver.yaml
TEST(VendorAwsEbs, CSIDriver) {
  const Json& d = get(objects(), "CSIDriver", "ebs.csi.aws.com");
  EXPECT_EQ(at(d, "/spec/attachRequired"), true);
  EXPECT_EQ(at(d, "/spec/podInfoOnMount"), false);
  EXPECT_EQ(at(d, "/spec/nodeAllocatableUpdatePeriodSeconds"), 10);
  EXPECT_EQ(at(d, "/spec/fsGroupPolicy"), "File");
  // Unset there, so the server's defaults.
  EXPECT_EQ(at(d, "/spec/volumeLifecycleModes"), Json::parse(R"(["Persistent"])"));
  EXPECT_EQ(at(d, "/spec/requiresRepublish"), false);
  EXPECT_EQ(at(d, "/spec/storageCapacity"), false);
  EXPECT_TRUE(at(d, "/spec/seLinuxMount").is_null());
  EXPECT_TRUE(at(d, "/spec/tokenRequests").is_null());
  // kube-system is the vendor's namespace; the operator never creates it.
  EXPECT_TRUE(testutil::ofKind(objects(), "Namespace").empty());
}

// deploy/kubernetes/base/node.yaml: the DaemonSet and its pod.
TEST(VendorAwsEbs, NodePod) {
  const Json& ds = node();
  EXPECT_EQ(plain(at(ds, "/spec/updateStrategy")),
            plain(R"({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}})"));
  // The vendor's pod label (its documentation selects the pods by it).
  EXPECT_EQ(at(ds, "/spec/template/metadata/labels/app"), "ebs-csi-node");
  const Json& pod = podSpec(ds);
  EXPECT_EQ(plain(at(pod, "/nodeSelector")), plain(R"({"kubernetes.io/os": "linux"})"));
  EXPECT_EQ(plain(at(pod, "/affinity")), plain(R"({"nodeAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "eks.amazonaws.com/compute-type", "operator": "NotIn",
                               "values": ["fargate", "auto", "hybrid"]}]}]}}})"));
  EXPECT_EQ(at(pod, "/tolerations"), Json::parse(R"([{"operator": "Exists"}])"));
  EXPECT_EQ(at(pod, "/priorityClassName"), "system-node-critical");
  EXPECT_EQ(at(pod, "/terminationGracePeriodSeconds"), 30);
  EXPECT_NE(at(pod, "/hostNetwork"), true);
  EXPECT_EQ(plain(at(pod, "/securityContext")),
            plain(R"({"fsGroup": 0, "runAsGroup": 0, "runAsNonRoot": false, "runAsUser": 0})"));
  // serviceaccount-csi-node.yaml: a token in the pod (the driver reads and patches its Node).
  EXPECT_EQ(at(pod, "/serviceAccountName"), "aws-ebs-node");
  EXPECT_EQ(at(pod, "/automountServiceAccountToken"), true);
  EXPECT_EQ(at(pod, "/containers").size(), 3U);
}

// deploy/kubernetes/base/node.yaml, container ebs-plugin.
TEST(VendorAwsEbs, NodeDriverContainer) {
  const Json& ds = node();
  const Json& c = containerOf(ds, "ebs-plugin");
  EXPECT_EQ(at(c, "/image"), "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.64.0");
  EXPECT_EQ(at(c, "/imagePullPolicy"), "IfNotPresent");
  EXPECT_EQ(at(c, "/args"), Json::parse(R"j(["node", "--endpoint=$(CSI_ENDPOINT)",
      "--csi-mount-point-prefix=/var/lib/kubelet/plugins/kubernetes.io/csi/ebs.csi.aws.com/",
      "--logging-format=text", "--v=2"])j"));
  // The vendor's CSI_ENDPOINT is unix:/csi/csi.sock: the same socket.
  EXPECT_EQ(envValue(c, "CSI_ENDPOINT"), "unix:///csi/csi.sock");
  EXPECT_EQ(plain(named(at(c, "/env"), "CSI_NODE_NAME")), plain(R"({"name": "CSI_NODE_NAME",
      "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}})"));
  EXPECT_EQ(plain(named(at(c, "/ports"), "healthz")),
            plain(R"({"name": "healthz", "containerPort": 9808, "protocol": "TCP"})"));
  EXPECT_EQ(plain(at(c, "/livenessProbe")), plain(R"({
      "httpGet": {"path": "/healthz", "port": "healthz"},
      "initialDelaySeconds": 10, "timeoutSeconds": 3, "periodSeconds": 10,
      "failureThreshold": 5})"));
  EXPECT_EQ(plain(at(c, "/readinessProbe")), plain(R"({
      "httpGet": {"path": "/healthz", "port": "healthz"},
      "timeoutSeconds": 3, "periodSeconds": 5, "failureThreshold": 3})"));
  EXPECT_EQ(plain(at(c, "/securityContext")),
            plain(R"({"privileged": true, "readOnlyRootFilesystem": true})"));
  EXPECT_EQ(plain(at(c, "/lifecycle")), plain(R"({"preStop": {"exec": {
      "command": ["/bin/aws-ebs-csi-driver", "pre-stop-hook"]}}})"));
  EXPECT_EQ(plain(at(c, "/resources")), plain(kResources256));

  // The socket in the vendor's plugin-dir.
  EXPECT_EQ(hostPathAt(ds, c, "/csi"), "/var/lib/kubelet/plugins/ebs.csi.aws.com");
  // The vendor mounts all of /var/lib/kubelet Bidirectionally; the driver mounts only below
  // pods/ (NodePublish) and plugins/ (NodeStage under --csi-mount-point-prefix, block volumes),
  // which the operator mounts Bidirectionally at the same paths.
  for (const std::string dir : {"/var/lib/kubelet/pods", "/var/lib/kubelet/plugins"}) {
    EXPECT_EQ(at(mountAt(c, dir), "/mountPropagation"), "Bidirectional") << dir;
    EXPECT_EQ(hostPathAt(ds, c, dir), dir);
  }
  std::string prefix;
  for (const auto& a : at(c, "/args")) {
    if (a.get<std::string>().starts_with("--csi-mount-point-prefix=")) {
      prefix = a.get<std::string>().substr(std::string("--csi-mount-point-prefix=").size());
    }
  }
  EXPECT_TRUE(prefix.starts_with("/var/lib/kubelet/plugins/")) << prefix;
  EXPECT_EQ(hostPathAt(ds, c, "/dev"), "/dev");
  EXPECT_TRUE(at(mountAt(c, "/dev"), "/mountPropagation").is_null());
}

// deploy/kubernetes/base/node.yaml, containers node-driver-registrar and liveness-probe.
TEST(VendorAwsEbs, NodeSidecars) {
  const Json& ds = node();
  const Json& r = containerOf(ds, "node-driver-registrar");
  EXPECT_EQ(at(r, "/image"),
            "public.ecr.aws/csi-components/csi-node-driver-registrar:v2.17.0-eksbuild.5");
  // The vendor's $(ADDRESS) and $(DRIVER_REG_SOCK_PATH), spelled out.
  EXPECT_EQ(at(r, "/args"), Json::parse(R"(["--csi-address=/csi/csi.sock",
      "--kubelet-registration-path=/var/lib/kubelet/plugins/ebs.csi.aws.com/csi.sock",
      "--http-endpoint=0.0.0.0:9809", "--v=2"])"));
  ASSERT_EQ(at(r, "/ports").size(), 1U);
  EXPECT_EQ(at(r, "/ports/0/containerPort"), 9809);
  EXPECT_EQ(at(r, "/livenessProbe/httpGet/path"), "/healthz");
  EXPECT_EQ(at(r, "/livenessProbe/httpGet/port"), at(r, "/ports/0/name"));
  EXPECT_TRUE(at(r, "/livenessProbe/httpGet/host").is_null());
  // sidecars.nodeDriverRegistrar.livenessProbe: 30s, every 90s, 15s timeout (3 failures, the
  // server's default).
  EXPECT_EQ(at(r, "/livenessProbe/initialDelaySeconds"), 30);
  EXPECT_EQ(at(r, "/livenessProbe/periodSeconds"), 90);
  EXPECT_EQ(at(r, "/livenessProbe/timeoutSeconds"), 15);
  EXPECT_EQ(at(r, "/livenessProbe/failureThreshold"), 3);
  EXPECT_EQ(plain(at(r, "/securityContext")), plain(kSidecarContext));
  EXPECT_EQ(plain(at(r, "/resources")), plain(kResources32));
  EXPECT_EQ(hostPathAt(ds, r, "/csi"), "/var/lib/kubelet/plugins/ebs.csi.aws.com");
  EXPECT_EQ(hostPathAt(ds, r, "/registration"), "/var/lib/kubelet/plugins_registry");

  const Json& l = containerOf(ds, "liveness-probe");
  EXPECT_EQ(at(l, "/image"), "public.ecr.aws/csi-components/livenessprobe:v2.19.0-eksbuild.5");
  // The vendor's livenessprobe listens on its default port, 9808, where the driver's probes go.
  EXPECT_EQ(at(l, "/args"),
            Json::parse(R"(["--csi-address=/csi/csi.sock", "--http-endpoint=:9808"])"));
  EXPECT_EQ(plain(at(l, "/securityContext")), plain(kSidecarContext));
  EXPECT_EQ(plain(at(l, "/resources")), plain(kResources32));
  EXPECT_EQ(hostPathAt(ds, l, "/csi"), "/var/lib/kubelet/plugins/ebs.csi.aws.com");
}

// deploy/kubernetes/base/clusterrole-csi-node.yaml, clusterrolebinding-csi-node.yaml
TEST(VendorAwsEbs, NodeRbac) {
  const Json& role = get(objects(), "ClusterRole", "csiop:aws-ebs:node-driver");
  EXPECT_EQ(at(role, "/rules"), Json::parse(R"([
      {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"],
       "verbs": ["get", "list", "watch"]},
      {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]},
      {"apiGroups": [""], "resources": ["nodes"], "verbs": ["patch", "list", "watch"]},
      {"apiGroups": ["storage.k8s.io"], "resources": ["csinodes"], "verbs": ["get"]}])"));
  const Json& binding = get(objects(), "ClusterRoleBinding", "csiop:aws-ebs:node-driver");
  EXPECT_EQ(plain(at(binding, "/subjects")), plain(R"([{"kind": "ServiceAccount",
      "name": "aws-ebs-node", "namespace": "kube-system"}])"));
  // The node reads no Secret (the vendor grants none).
  EXPECT_FALSE(grants(clusterRulesOf("aws-ebs-node"), "", "secrets", {"get"}));
}

// deploy/kubernetes/base/controller.yaml (the Deployment and its pod),
// poddisruptionbudget-controller.yaml
TEST(VendorAwsEbs, ControllerPod) {
  const Json& d = controller();
  EXPECT_EQ(at(d, "/spec/replicas"), 2);
  EXPECT_EQ(plain(at(d, "/spec/strategy")),
            plain(R"({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}})"));
  EXPECT_EQ(at(d, "/spec/template/metadata/labels/app"), "ebs-csi-controller");
  const Json& pod = podSpec(d);
  EXPECT_EQ(plain(at(pod, "/nodeSelector")), plain(R"({"kubernetes.io/os": "linux"})"));
  EXPECT_EQ(at(pod, "/priorityClassName"), "system-cluster-critical");
  // The vendor's anti-affinity selects app=ebs-csi-controller, which the pods carry.
  EXPECT_EQ(plain(at(pod, "/affinity")), plain(R"({
      "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [
          {"key": "eks.amazonaws.com/compute-type", "operator": "NotIn",
           "values": ["fargate", "auto", "hybrid"]}]}}]},
      "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchExpressions": [
          {"key": "app", "operator": "In", "values": ["ebs-csi-controller"]}]},
         "topologyKey": "kubernetes.io/hostname"}}]}})"));
  EXPECT_EQ(plain(at(pod, "/tolerations")), plain(R"([
      {"key": "CriticalAddonsOnly", "operator": "Exists"},
      {"effect": "NoExecute", "operator": "Exists", "tolerationSeconds": 300}])"));
  EXPECT_EQ(plain(at(pod, "/securityContext")), plain(R"({"fsGroup": 1000, "runAsGroup": 1000,
      "runAsNonRoot": true, "runAsUser": 1000})"));
  EXPECT_NE(at(pod, "/hostNetwork"), true);
  EXPECT_EQ(at(pod, "/serviceAccountName"), "aws-ebs-controller");
  EXPECT_NE(at(pod, "/automountServiceAccountToken"), false);
  // The sockets in an emptyDir.
  EXPECT_EQ(plain(named(at(pod, "/volumes"), "socket-dir")),
            plain(R"({"name": "socket-dir", "emptyDir": {}})"));
  EXPECT_EQ(at(pod, "/volumes").size(), 1U);

  const Json& pdb = get(objects(), "PodDisruptionBudget", "aws-ebs-controller", "kube-system");
  EXPECT_EQ(at(pdb, "/spec/maxUnavailable"), 1);
  EXPECT_TRUE(at(pdb, "/spec/minAvailable").is_null());
  const Json labels = at(d, "/spec/template/metadata/labels");
  const Json selector = at(pdb, "/spec/selector/matchLabels");
  EXPECT_FALSE(selector.empty());
  for (const auto& [key, value] : selector.items()) {
    EXPECT_EQ(labels.value(key, Json()), value) << key;
  }
}

// deploy/kubernetes/base/controller.yaml, container ebs-plugin.
TEST(VendorAwsEbs, ControllerDriverContainer) {
  const Json& d = controller();
  const Json& c = containerOf(d, "ebs-plugin");
  EXPECT_EQ(at(c, "/image"), "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.64.0");
  EXPECT_EQ(at(c, "/args"), Json::parse(R"j(["controller", "--endpoint=$(CSI_ENDPOINT)",
      "--batching=true", "--logging-format=text", "--user-agent-extra=kustomize", "--v=2"])j"));
  EXPECT_EQ(envValue(c, "CSI_ENDPOINT"), "unix:///csi/csi.sock");
  for (const char* expected : {
           R"({"name": "CSI_NODE_NAME",
               "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}})",
           R"({"name": "AWS_ACCESS_KEY_ID", "valueFrom": {"secretKeyRef":
               {"name": "aws-secret", "key": "key_id", "optional": true}}})",
           R"({"name": "AWS_SECRET_ACCESS_KEY", "valueFrom": {"secretKeyRef":
               {"name": "aws-secret", "key": "access_key", "optional": true}}})",
           R"({"name": "AWS_EC2_ENDPOINT", "valueFrom": {"configMapKeyRef":
               {"name": "aws-meta", "key": "endpoint", "optional": true}}})",
           R"({"name": "AWS_SAGEMAKER_ENDPOINT", "valueFrom": {"configMapKeyRef":
               {"name": "aws-meta", "key": "sagemaker_endpoint", "optional": true}}})"}) {
    const auto want = plain(expected);
    EXPECT_EQ(plain(named(at(c, "/env"), want["name"].get<std::string>())), want);
  }
  EXPECT_EQ(at(c, "/env").size(), 7U) << "the vendor's five, CSI_ENDPOINT and KUBE_NODE_NAME";
  EXPECT_EQ(plain(named(at(c, "/ports"), "healthz")),
            plain(R"({"name": "healthz", "containerPort": 9808, "protocol": "TCP"})"));
  EXPECT_EQ(plain(at(c, "/livenessProbe")), plain(R"({
      "httpGet": {"path": "/healthz", "port": "healthz"},
      "initialDelaySeconds": 10, "timeoutSeconds": 60, "periodSeconds": 10,
      "failureThreshold": 10})"));
  EXPECT_EQ(plain(at(c, "/readinessProbe")), plain(R"({
      "httpGet": {"path": "/healthz", "port": "healthz"},
      "initialDelaySeconds": 10, "timeoutSeconds": 60, "periodSeconds": 10,
      "failureThreshold": 5})"));
  EXPECT_EQ(plain(at(c, "/securityContext")), plain(kControllerContext));
  EXPECT_EQ(plain(at(c, "/resources")), plain(kResources256));
  EXPECT_EQ(at(mountAt(c, "/csi"), "/name"), "socket-dir");
  EXPECT_EQ(at(c, "/volumeMounts").size(), 1U);
}

// deploy/kubernetes/base/controller.yaml, containers csi-provisioner, csi-attacher,
// csi-snapshotter, csi-resizer and liveness-probe.
TEST(VendorAwsEbs, ControllerSidecars) {
  const Json& d = controller();
  struct Expected {
    const char* name;
    const char* image;
    const char* args;
    const char* env;
  };
  const Expected sidecars[] = {
      {"csi-provisioner", "public.ecr.aws/csi-components/csi-provisioner:v6.3.0-eksbuild.4",
       R"(["--csi-address=/csi/csi.sock", "--leader-election", "--timeout=60s", "--v=2",
           "--feature-gates=Topology=true", "--extra-create-metadata", "--default-fstype=ext4",
           "--kube-api-qps=20", "--kube-api-burst=100", "--worker-threads=100",
           "--retry-interval-max=30m"])",
       R"([{"name": "ENABLE_VAC_FALLBACK", "value": "true"}])"},
      {"csi-attacher", "public.ecr.aws/csi-components/csi-attacher:v4.12.0-eksbuild.5",
       R"(["--csi-address=/csi/csi.sock", "--leader-election", "--timeout=6m", "--v=2",
           "--kube-api-qps=20", "--kube-api-burst=100", "--worker-threads=100",
           "--retry-interval-max=5m", "--feature-gates=MutableCSINodeAllocatableCount=true"])",
       "null"},
      {"csi-snapshotter", "public.ecr.aws/csi-components/csi-snapshotter:v8.6.0-eksbuild.5",
       R"(["--csi-address=/csi/csi.sock", "--leader-election", "--v=2", "--extra-create-metadata",
           "--kube-api-qps=20", "--kube-api-burst=100", "--worker-threads=100",
           "--retry-interval-max=30m"])",
       "null"},
      {"csi-resizer", "public.ecr.aws/csi-components/csi-resizer:v2.2.1-eksbuild.3",
       R"(["--csi-address=/csi/csi.sock", "--leader-election", "--timeout=60s",
           "--extra-modify-metadata", "--v=2", "--handle-volume-inuse-error=false",
           "--kube-api-qps=20", "--kube-api-burst=100", "--workers=100",
           "--retry-interval-max=30m"])",
       R"([{"name": "ENABLE_VAC_FALLBACK", "value": "true"}])"},
  };
  for (const auto& s : sidecars) {
    SCOPED_TRACE(s.name);
    const Json& c = containerOf(d, s.name);
    EXPECT_EQ(at(c, "/image"), s.image);
    EXPECT_EQ(at(c, "/imagePullPolicy"), "IfNotPresent");
    EXPECT_EQ(at(c, "/args"), Json::parse(s.args));
    EXPECT_EQ(plain(at(c, "/env")), plain(s.env));
    // No metrics endpoint, no leader-election liveness probe: the vendor runs neither.
    EXPECT_TRUE(at(c, "/ports").is_null());
    EXPECT_TRUE(at(c, "/livenessProbe").is_null());
    EXPECT_EQ(plain(at(c, "/securityContext")), plain(kControllerContext));
    EXPECT_EQ(plain(at(c, "/resources")), plain(kResources256));
    EXPECT_EQ(at(mountAt(c, "/csi"), "/name"), "socket-dir");
  }
  EXPECT_EQ(at(podSpec(d), "/containers").size(), 6U);

  const Json& l = containerOf(d, "liveness-probe");
  EXPECT_EQ(at(l, "/image"), "public.ecr.aws/csi-components/livenessprobe:v2.19.0-eksbuild.5");
  EXPECT_EQ(at(l, "/args"), Json::parse(R"(["--csi-address=/csi/csi.sock",
      "--http-endpoint=:9808", "--probe-timeout=60s"])"));
  EXPECT_EQ(plain(at(l, "/securityContext")), plain(kSidecarContext));
  EXPECT_EQ(plain(at(l, "/resources")), plain(kResources32));
  EXPECT_EQ(at(mountAt(l, "/csi"), "/name"), "socket-dir");
}

// deploy/kubernetes/base/clusterrole-{provisioner,attacher,resizer,snapshotter}.yaml and their
// bindings, role-leases.yaml, rolebinding-leases.yaml. The vendor's rules are the sidecars'
// upstream ones ("BEGIN AUTOGENERATED RULES"), plus one of its own for the provisioner.
TEST(VendorAwsEbs, ControllerRbac) {
  EXPECT_EQ(at(get(objects(), "ClusterRole", "csiop:external-provisioner"), "/rules"),
            Json::parse(R"([
      {"apiGroups": [""], "resources": ["persistentvolumes"],
       "verbs": ["get", "list", "watch", "create", "patch", "delete"]},
      {"apiGroups": [""], "resources": ["persistentvolumeclaims"],
       "verbs": ["get", "list", "watch", "update"]},
      {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"],
       "verbs": ["get", "list", "watch"]},
      {"apiGroups": [""], "resources": ["events"],
       "verbs": ["list", "watch", "create", "update", "patch"]},
      {"apiGroups": ["snapshot.storage.k8s.io"], "resources": ["volumesnapshots"],
       "verbs": ["get", "list", "watch", "update"]},
      {"apiGroups": ["snapshot.storage.k8s.io"], "resources": ["volumesnapshotcontents"],
       "verbs": ["get", "list"]},
      {"apiGroups": ["storage.k8s.io"], "resources": ["csinodes"],
       "verbs": ["get", "list", "watch"]},
      {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
      {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"],
       "verbs": ["get", "list", "watch"]}])"));
  EXPECT_EQ(at(get(objects(), "ClusterRole", "csiop:external-attacher"), "/rules"), Json::parse(R"([
      {"apiGroups": [""], "resources": ["persistentvolumes"],
       "verbs": ["get", "list", "watch", "patch"]},
      {"apiGroups": ["storage.k8s.io"], "resources": ["csinodes"],
       "verbs": ["get", "list", "watch"]},
      {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments"],
       "verbs": ["get", "list", "watch", "patch"]},
      {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattachments/status"],
       "verbs": ["patch"]}])"));
  EXPECT_EQ(at(get(objects(), "ClusterRole", "csiop:external-resizer"), "/rules"), Json::parse(R"([
      {"apiGroups": [""], "resources": ["persistentvolumes"],
       "verbs": ["get", "list", "watch", "patch"]},
      {"apiGroups": [""], "resources": ["persistentvolumeclaims"],
       "verbs": ["get", "list", "watch"]},
      {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
      {"apiGroups": [""], "resources": ["persistentvolumeclaims/status"], "verbs": ["patch"]},
      {"apiGroups": [""], "resources": ["events"],
       "verbs": ["list", "watch", "create", "update", "patch"]},
      {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattributesclasses"],
       "verbs": ["get", "list", "watch"]}])"));
  EXPECT_EQ(at(get(objects(), "ClusterRole", "csiop:external-snapshotter"), "/rules"),
            Json::parse(R"([
      {"apiGroups": [""], "resources": ["events"],
       "verbs": ["list", "watch", "create", "update", "patch"]},
      {"apiGroups": ["snapshot.storage.k8s.io"], "resources": ["volumesnapshotclasses"],
       "verbs": ["get", "list", "watch"]},
      {"apiGroups": ["snapshot.storage.k8s.io"], "resources": ["volumesnapshotcontents"],
       "verbs": ["get", "list", "watch", "update", "patch"]},
      {"apiGroups": ["snapshot.storage.k8s.io"], "resources": ["volumesnapshotcontents/status"],
       "verbs": ["update", "patch"]},
      {"apiGroups": ["groupsnapshot.storage.k8s.io"], "resources": ["volumegroupsnapshotclasses"],
       "verbs": ["get", "list", "watch"]},
      {"apiGroups": ["groupsnapshot.storage.k8s.io"],
       "resources": ["volumegroupsnapshotcontents"],
       "verbs": ["get", "list", "watch", "update", "patch"]},
      {"apiGroups": ["groupsnapshot.storage.k8s.io"],
       "resources": ["volumegroupsnapshotcontents/status"], "verbs": ["update", "patch"]}])"));
  // clusterrole-provisioner.yaml's "Extra rule: VAC rules not present in upstream example".
  const Json all = clusterRulesOf("aws-ebs-controller");
  EXPECT_TRUE(grants(all, "storage.k8s.io", "volumeattributesclasses", {"get"}));
  EXPECT_FALSE(grants(all, "", "secrets", {"get"})) << "the vendor grants no Secret";
  for (const char* sidecar :
       {"external-provisioner", "external-attacher", "external-resizer", "external-snapshotter"}) {
    const std::string name = std::string("csiop:aws-ebs:") + sidecar;
    const std::string binding = std::string("csiop:aws-ebs:sidecar:") + sidecar;
    EXPECT_EQ(at(get(objects(), "ClusterRoleBinding", binding), "/subjects/0/name"),
              "aws-ebs-controller")
        << name;
    // role-leases.yaml: leases in the driver's namespace, these verbs.
    EXPECT_TRUE(grants(get(objects(), "Role", name, "kube-system"), "coordination.k8s.io", "leases",
                       {"get", "watch", "list", "delete", "update", "create"}))
        << name;
    EXPECT_EQ(at(get(objects(), "RoleBinding", name, "kube-system"), "/subjects/0/name"),
              "aws-ebs-controller")
        << name;
  }
}

// examples/kubernetes/dynamic-provisioning/manifests/storageclass.yaml,
// examples/kubernetes/snapshot/manifests/classes/snapshotclass.yaml
TEST(VendorAwsEbs, Classes) {
  const Json& sc = get(objects(), "StorageClass", "ebs-sc");
  EXPECT_EQ(at(sc, "/provisioner"), "ebs.csi.aws.com");
  EXPECT_EQ(at(sc, "/volumeBindingMode"), "WaitForFirstConsumer");
  for (const char* unset : {"/parameters", "/reclaimPolicy", "/allowVolumeExpansion",
                            "/mountOptions", "/allowedTopologies", "/metadata/annotations"}) {
    EXPECT_TRUE(at(sc, unset).is_null()) << unset;
  }
  EXPECT_EQ(testutil::ofKind(objects(), "StorageClass").size(), 1U);
  const Json& vsc = get(objects(), "VolumeSnapshotClass", "csi-aws-vsc");
  EXPECT_EQ(at(vsc, "/driver"), "ebs.csi.aws.com");
  EXPECT_EQ(at(vsc, "/deletionPolicy"), "Delete");
  EXPECT_TRUE(at(vsc, "/parameters").is_null());
}

} // namespace
} // namespace csiop::vendors
