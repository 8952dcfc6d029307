// examples/secrets-store.yaml against the Secrets Store CSI Driver's Helm chart at v1.6.0
// (kubernetes-sigs/secrets-store-csi-driver, tag v1.6.0, commit 4960f963), rendered with its
// default values: the CSIDriver, the node plugin DaemonSet and the driver's ClusterRole. File
// names below are under charts/secrets-store-csi-driver/; what the operator does differently on
// purpose is commented in the example.
#include "vendor_facts.hpp"

#include <csiop/api/defaults.hpp>
#include <csiop/render/prerequisites.hpp>

namespace csiop::vendors {
namespace {

constexpr const char* kNamespace = "csi-secrets-store";

const Json& nodePlugin(const std::vector<Json>& objs) {
  return get(objs, "DaemonSet", "secrets-store-node", kNamespace);
}

// templates/csidriver.yaml: enableSecretRotation false, no tokenRequests.
TEST(VendorSecretsStore, CSIDriverIsTheChartsWithRotationOff) {
  const auto objs = renderExample("secrets-store");
  const Json& d = get(objs, "CSIDriver", "secrets-store.csi.k8s.io");
  ASSERT_TRUE(d.is_object());
  const Json& spec = api::member(d, "spec");
  EXPECT_EQ(api::member(spec, "attachRequired"), false);
  EXPECT_EQ(api::member(spec, "podInfoOnMount"), true);
  EXPECT_TRUE(sameJson(api::member(spec, "volumeLifecycleModes"), Json::array({"Ephemeral"})));
  EXPECT_EQ(api::member(spec, "requiresRepublish"), false);
  EXPECT_FALSE(spec.contains("tokenRequests"));
  EXPECT_FALSE(spec.contains("serviceAccountTokenInSecrets"));
  // Unset in the chart: the server's defaults, which the operator writes out.
  EXPECT_EQ(api::member(spec, "storageCapacity"), false);
  EXPECT_EQ(api::member(spec, "fsGroupPolicy"), "ReadWriteOnceWithFSType");
}

// templates/secrets-store-csi-driver.yaml, container secrets-store.
TEST(VendorSecretsStore, DriverContainerArgsPortsProbeAndResources) {
  const auto objs = renderExample("secrets-store");
  const Json& ds = nodePlugin(objs);
  ASSERT_TRUE(ds.is_object());
  const Json& c = containerOf(ds, "secrets-store");
  EXPECT_EQ(api::member(c, "image"), "registry.k8s.io/csi-secrets-store/driver:v1.6.0");
  EXPECT_EQ(api::member(c, "imagePullPolicy"), "IfNotPresent");
  EXPECT_TRUE(sameJson(api::member(c, "args"), Json::parse(R"j([
      "--endpoint=$(CSI_ENDPOINT)", "--nodeid=$(KUBE_NODE_NAME)",
      "--provider-volume=/var/run/secrets-store-csi-providers",
      "--additional-provider-volume-paths=/etc/kubernetes/secrets-store-csi-providers",
      "--metrics-addr=:8095", "--provider-health-check-interval=2m",
      "--max-call-recv-msg-size=4194304"])j")));
  // Neither rotation nor the provider health check: the chart leaves both flags out.
  for (const auto& a : api::member(c, "args")) {
    EXPECT_EQ(a.get<std::string>().find("--enable-secret-rotation"), std::string::npos);
    EXPECT_EQ(a.get<std::string>().find("--provider-health-check="), std::string::npos);
  }
  EXPECT_EQ(envValue(c, "CSI_ENDPOINT"), "unix:///csi/csi.sock");
  EXPECT_EQ(named(api::member(c, "env"), "KUBE_NODE_NAME")["valueFrom"]["fieldRef"]["fieldPath"],
            "spec.nodeName");
  EXPECT_TRUE(sameJson(api::member(c, "securityContext"), Json::parse(R"({"privileged": true})")));
  EXPECT_TRUE(
      sameJson(named(api::member(c, "ports"), "healthz"),
               Json::parse(R"({"name": "healthz", "containerPort": 9808, "protocol": "TCP"})")));
  EXPECT_TRUE(
      sameJson(named(api::member(c, "ports"), "metrics"),
               Json::parse(R"({"name": "metrics", "containerPort": 8095, "protocol": "TCP"})")));
  EXPECT_TRUE(sameJson(api::member(c, "livenessProbe"), Json::parse(R"({
      "httpGet": {"path": "/healthz", "port": "healthz"}, "initialDelaySeconds": 30,
      "timeoutSeconds": 10, "periodSeconds": 15, "failureThreshold": 5})")));
  EXPECT_TRUE(sameJson(api::member(c, "resources"),
                       Json::parse(R"({"limits": {"cpu": "200m", "memory": "200Mi"},
      "requests": {"cpu": "50m", "memory": "100Mi"}})")));
}

// templates/secrets-store-csi-driver.yaml, the secrets-store container's volumeMounts and the
// pod's volumes (plugin-dir, mountpoint-dir, providers-dir, providers-dir-0).
TEST(VendorSecretsStore, DriverMountsThePodsBidirectionallyAndTheProviderSockets) {
  const auto objs = renderExample("secrets-store");
  const Json& ds = nodePlugin(objs);
  ASSERT_TRUE(ds.is_object());
  const Json& c = containerOf(ds, "secrets-store");
  // Where the kubelet finds the socket: /var/lib/kubelet/plugins/<dir>/csi.sock.
  EXPECT_EQ(hostPathAndType(ds, c, "/csi"),
            "/var/lib/kubelet/plugins/secrets-store.csi.k8s.io DirectoryOrCreate");
  const Json pods = mountAt(c, "/var/lib/kubelet/pods");
  EXPECT_EQ(api::member(pods, "mountPropagation"), "Bidirectional");
  EXPECT_EQ(hostPathAndType(ds, c, "/var/lib/kubelet/pods"),
            "/var/lib/kubelet/pods DirectoryOrCreate");
  for (const char* dir :
       {"/var/run/secrets-store-csi-providers", "/etc/kubernetes/secrets-store-csi-providers"}) {
    const Json m = mountAt(c, dir);
    ASSERT_TRUE(m.is_object()) << dir;
    EXPECT_FALSE(m.contains("mountPropagation")) << dir;
    EXPECT_FALSE(m.contains("readOnly")) << dir;
    EXPECT_EQ(hostPathAndType(ds, c, dir), std::string(dir) + " DirectoryOrCreate");
  }
  EXPECT_EQ(api::member(mountAt(c, "/var/run/secrets-store-csi-providers"), "name"),
            "providers-dir");
  EXPECT_EQ(api::member(mountAt(c, "/etc/kubernetes/secrets-store-csi-providers"), "name"),
            "providers-dir-0");
}

// templates/secrets-store-csi-driver.yaml, container node-driver-registrar: no HTTP endpoint,
// no liveness probe, no securityContext.
TEST(VendorSecretsStore, RegistrarAtTheChartsTagWithoutEndpoint) {
  const auto objs = renderExample("secrets-store");
  const Json& ds = nodePlugin(objs);
  ASSERT_TRUE(ds.is_object());
  const Json& r = containerOf(ds, "node-driver-registrar");
  EXPECT_EQ(api::member(r, "image"),
            "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.16.0");
  EXPECT_EQ(api::member(r, "imagePullPolicy"), "IfNotPresent");
  EXPECT_TRUE(sameJson(api::member(r, "args"), Json::parse(R"(["--csi-address=/csi/csi.sock",
      "--kubelet-registration-path=/var/lib/kubelet/plugins/secrets-store.csi.k8s.io/csi.sock",
      "--v=5"])")));
  EXPECT_FALSE(r.contains("livenessProbe"));
  EXPECT_FALSE(r.contains("ports"));
  EXPECT_FALSE(r.contains("lifecycle"));
  EXPECT_TRUE(sameJson(api::member(r, "securityContext"), Json::object()));
  EXPECT_TRUE(sameJson(api::member(r, "resources"),
                       Json::parse(R"({"limits": {"cpu": "100m", "memory": "100Mi"},
      "requests": {"cpu": "10m", "memory": "20Mi"}})")));
  EXPECT_EQ(hostPathAndType(ds, r, "/csi"),
            "/var/lib/kubelet/plugins/secrets-store.csi.k8s.io DirectoryOrCreate");
  EXPECT_EQ(hostPathAndType(ds, r, "/registration"), "/var/lib/kubelet/plugins_registry Directory");
}

// templates/secrets-store-csi-driver.yaml, container liveness-probe (livenessProbe.port 9808,
// logLevel 2).
TEST(VendorSecretsStore, LivenessProbeOnEveryInterfaceWithTheChartsTimeout) {
  const auto objs = renderExample("secrets-store");
  const Json& ds = nodePlugin(objs);
  ASSERT_TRUE(ds.is_object());
  const Json& l = containerOf(ds, "liveness-probe");
  EXPECT_EQ(api::member(l, "image"), "registry.k8s.io/sig-storage/livenessprobe:v2.18.0");
  EXPECT_TRUE(sameJson(api::member(l, "args"), Json::parse(R"(["--csi-address=/csi/csi.sock",
      "--http-endpoint=0.0.0.0:9808", "--probe-timeout=3s", "-v=2"])")));
  EXPECT_TRUE(sameJson(api::member(l, "securityContext"), Json::object()));
  EXPECT_TRUE(sameJson(api::member(l, "resources"),
                       Json::parse(R"({"limits": {"cpu": "100m", "memory": "100Mi"},
      "requests": {"cpu": "10m", "memory": "20Mi"}})")));
  EXPECT_EQ(hostPathAndType(ds, l, "/csi"),
            "/var/lib/kubelet/plugins/secrets-store.csi.k8s.io DirectoryOrCreate");
}

// templates/secrets-store-csi-driver.yaml, the pod and the DaemonSet (values.yaml linux.*).
TEST(VendorSecretsStore, PodRunsEverywhereButVirtualKubeletWithoutPriorityClass) {
  const auto objs = renderExample("secrets-store");
  const Json& ds = nodePlugin(objs);
  ASSERT_TRUE(ds.is_object());
  const Json& pod = podSpec(ds);
  EXPECT_EQ(api::member(pod, "serviceAccountName"), "secrets-store-node");
  EXPECT_EQ(api::member(pod, "automountServiceAccountToken"), true);
  EXPECT_FALSE(pod.contains("priorityClassName"));
  EXPECT_FALSE(pod.contains("hostNetwork"));
  EXPECT_FALSE(pod.contains("hostPID"));
  EXPECT_FALSE(pod.contains("securityContext"));
  EXPECT_TRUE(
      sameJson(api::member(pod, "tolerations"), Json::parse(R"([{"operator": "Exists"}])")));
  EXPECT_TRUE(
      sameJson(api::member(pod, "nodeSelector"), Json::parse(R"({"kubernetes.io/os": "linux"})")));
  EXPECT_TRUE(sameJson(api::member(pod, "affinity"), Json::parse(R"({"nodeAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
        "matchExpressions": [{"key": "type", "operator": "NotIn",
                              "values": ["virtual-kubelet"]}]}]}}})")));
  EXPECT_TRUE(sameJson(
      api::member(api::member(ds, "spec"), "updateStrategy"),
      Json::parse(R"({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}})")));
  EXPECT_EQ(ds["spec"]["template"]["metadata"]["labels"]["app"], "secrets-store-csi-driver");
  std::vector<std::string> names;
  for (const auto& c : api::member(pod, "containers")) {
    names.push_back(c["name"]);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"secrets-store", "node-driver-registrar", "liveness-probe"}));
  EXPECT_FALSE(pod.contains("initContainers"));
}

// templates/role.yaml (secretproviderclasses-role) and templates/role_binding.yaml.
TEST(VendorSecretsStore, DriverRulesAreSecretProviderClassesRole) {
  const auto objs = renderExample("secrets-store");
  const Json& role = get(objs, "ClusterRole", "csiop:secrets-store:node-driver");
  ASSERT_TRUE(role.is_object());
  EXPECT_TRUE(grants(role, "", "events", {"create", "patch"}));
  EXPECT_TRUE(grants(role, "", "pods", {"get", "list", "watch"}));
  EXPECT_TRUE(grants(role, "secrets-store.csi.x-k8s.io", "secretproviderclasses",
                     {"get", "list", "watch"}));
  EXPECT_TRUE(grants(role, "secrets-store.csi.x-k8s.io", "secretproviderclasspodstatuses",
                     {"create", "delete", "get", "list", "patch", "update", "watch"}));
  EXPECT_TRUE(grants(role, "secrets-store.csi.x-k8s.io", "secretproviderclasspodstatuses/status",
                     {"get", "patch", "update"}));
  EXPECT_TRUE(grants(role, "storage.k8s.io", "csidrivers", {"get", "list", "watch"}));
  // Exactly the six rules, the CSIDriver one by name.
  ASSERT_EQ(api::member(role, "rules").size(), 6U);
  EXPECT_TRUE(
      sameJson(role["rules"][5]["resourceNames"], Json::array({"secrets-store.csi.k8s.io"})));
  EXPECT_FALSE(grants(role, "secrets-store.csi.x-k8s.io", "secretproviderclasses", {"create"}));
  const Json& binding = get(objs, "ClusterRoleBinding", "csiop:secrets-store:node-driver");
  ASSERT_TRUE(binding.is_object());
  EXPECT_TRUE(sameJson(binding["subjects"], Json::parse(R"([{"kind": "ServiceAccount",
      "name": "secrets-store-node", "namespace": "csi-secrets-store"}])")));
  // syncSecret.enabled false: nothing may touch Secrets (templates/role-syncsecret.yaml is off).
  for (const char* kind : {"ClusterRole", "Role"}) {
    for (const Json* r : testutil::ofKind(objs, kind)) {
      EXPECT_FALSE(grants(*r, "", "secrets", {"get"})) << (*r)["metadata"]["name"];
    }
  }
}

// A node-only driver: no controller, no StorageClass; the CRDs
// (crds/secrets-store.csi.x-k8s.io_*.yaml, applied by the chart's upgrade-crds hook Job) are
// prerequisites, not objects.
TEST(VendorSecretsStore, NodeOnlyWithTheCRDsAsPrerequisites) {
  const auto objs = renderExample("secrets-store");
  for (const char* kind :
       {"Deployment", "StatefulSet", "StorageClass", "CustomResourceDefinition", "PriorityClass"}) {
    EXPECT_TRUE(testutil::ofKind(objs, kind).empty()) << kind;
  }
  EXPECT_EQ(testutil::find(objs, "ServiceAccount", "secrets-store-controller", kNamespace),
            nullptr);
  const api::Effective e = api::resolve(loadExample("secrets-store"));
  const std::vector<std::string> apis = requiredApisOf(e);
  EXPECT_EQ(apis, (std::vector<std::string>{
                      "secrets-store.csi.x-k8s.io/v1/secretproviderclasses",
                      "secrets-store.csi.x-k8s.io/v1/secretproviderclasspodstatuses"}));
  EXPECT_TRUE(render::requiredPriorityClasses(e).empty());
}

// templates/role-secretproviderclasses-admin.yaml, role-secretproviderclasses-viewer.yaml,
// role-secretproviderclasspodstatuses-viewer.yaml (rbac.install true): the users' roles,
// aggregated into admin/edit and view.
TEST(VendorSecretsStore, UsersRolesAreAggregatedIntoAdminEditAndView) {
  const auto objs = renderExample("secrets-store");
  const Json& admin = get(objs, "ClusterRole", "secretproviderclasses-admin-role");
  EXPECT_EQ(admin["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"], "true");
  EXPECT_EQ(admin["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"], "true");
  EXPECT_FALSE(admin["metadata"]["labels"].contains("rbac.authorization.k8s.io/aggregate-to-view"));
  EXPECT_TRUE(grants(admin, "secrets-store.csi.x-k8s.io", "secretproviderclasses",
                     {"get", "list", "watch", "create", "update", "patch", "delete"}));
  EXPECT_EQ(admin["rules"].size(), 1U);
  for (const char* name :
       {"secretproviderclasses-viewer-role", "secretproviderclasspodstatuses-viewer-role"}) {
    const Json& viewer = get(objs, "ClusterRole", name);
    EXPECT_EQ(viewer["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"], "true")
        << name;
    EXPECT_FALSE(
        viewer["metadata"]["labels"].contains("rbac.authorization.k8s.io/aggregate-to-edit"))
        << name;
    EXPECT_EQ(viewer["rules"][0]["verbs"], Json::parse(R"(["get", "list", "watch"])")) << name;
  }
  EXPECT_EQ(get(objs, "ClusterRole",
                "secretproviderclasspodstatuses-viewer-role")["rules"][0]["resources"],
            Json::array({"secretproviderclasspodstatuses"}));
  // No binding: Kubernetes aggregates them into its own roles.
  for (const Json* b : testutil::ofKind(objs, "ClusterRoleBinding")) {
    EXPECT_EQ((*b)["roleRef"]["name"].get<std::string>().find("secretproviderclass"),
              std::string::npos);
  }
}

} // namespace
} // namespace csiop::vendors
