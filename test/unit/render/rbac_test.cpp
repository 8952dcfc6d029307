// RBAC of each sidecar against the upstream rules (deploy/kubernetes/rbac.yaml
// of the pinned sidecar versions, as listed in csi-facts): every rule present,
// nothing unrelated, nothing cluster-wide that could be namespaced.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "../common/render_test_util.hpp"

namespace csiop {
namespace {

using api::Json;
using testutil::dd;
using testutil::find;
using testutil::load;
using testutil::ofKind;

// "group/resource: verb,verb" (verbs sorted), one per rule.
std::set<std::string> rulesOf(const Json& role) {
  std::set<std::string> out;
  for (const auto& r : role["rules"]) {
    std::set<std::string> verbs(r["verbs"].begin(), r["verbs"].end());
    std::string v;
    for (const auto& verb : verbs) {
      v += (v.empty() ? "" : ",") + verb;
    }
    for (const auto& g : r["apiGroups"]) {
      for (const auto& res : r["resources"]) {
        std::string key = g.get<std::string>() + "/" + res.get<std::string>() + ": " + v;
        if (r.contains("resourceNames")) {
          key += " " + r["resourceNames"].dump();
        }
        out.insert(key);
      }
    }
  }
  return out;
}

struct SidecarCase {
  const char* field;
  const char* role;
  std::set<std::string> rules;
};

const SidecarCase kSidecars[] = {
    {"provisioner",
     "external-provisioner",
     {"/persistentvolumes: create,delete,get,list,patch,watch",
      "/persistentvolumeclaims: get,list,update,watch",
      "storage.k8s.io/storageclasses: get,list,watch", "/events: create,list,patch,update,watch",
      "snapshot.storage.k8s.io/volumesnapshots: get,list,update,watch",
      "snapshot.storage.k8s.io/volumesnapshotcontents: get,list",
      "storage.k8s.io/csinodes: get,list,watch", "/nodes: get,list,watch",
      "storage.k8s.io/volumeattachments: get,list,watch"}},
    {"attacher",
     "external-attacher",
     {"/persistentvolumes: get,list,patch,watch", "storage.k8s.io/csinodes: get,list,watch",
      "storage.k8s.io/volumeattachments: get,list,patch,watch",
      "storage.k8s.io/volumeattachments/status: patch"}},
    {"resizer",
     "external-resizer",
     {"/persistentvolumes: get,list,patch,watch", "/persistentvolumeclaims: get,list,watch",
      "/pods: get,list,watch", "/persistentvolumeclaims/status: patch",
      "/events: create,list,patch,update,watch",
      "storage.k8s.io/volumeattributesclasses: get,list,watch"}},
    {"snapshotter",
     "external-snapshotter",
     {"/events: create,list,patch,update,watch",
      "snapshot.storage.k8s.io/volumesnapshotclasses: get,list,watch",
      "snapshot.storage.k8s.io/volumesnapshotcontents: get,list,patch,update,watch",
      "snapshot.storage.k8s.io/volumesnapshotcontents/status: patch,update",
      "groupsnapshot.storage.k8s.io/volumegroupsnapshotclasses: get,list,watch",
      "groupsnapshot.storage.k8s.io/volumegroupsnapshotcontents: get,list,patch,update,watch",
      "groupsnapshot.storage.k8s.io/volumegroupsnapshotcontents/status: patch,update"}},
    {"healthMonitor",
     "external-health-monitor",
     {"/persistentvolumes: get,list,watch", "/persistentvolumeclaims: get,list,watch",
      "/nodes: get,list,watch", "/pods: get,list,watch", "/events: create,get,list,patch,watch"}},
};

std::string only(const std::string& field) {
  const bool attacher = field == "attacher";
  std::string spec = std::string("  csiDriver: {attachRequired: ") + (attacher ? "true" : "false") +
                     "}\n  controller:\n";
  if (field != "provisioner") {
    spec += "    provisioner: {enabled: false}\n";
  }
  if (!attacher) {
    spec += "    " + field + ": {enabled: true}\n";
  }
  return dd(spec);
}

TEST(Rbac, EachSidecarGetsExactlyItsUpstreamRules) {
  for (const auto& c : kSidecars) {
    SCOPED_TRACE(c.field);
    const auto objs = render::render(load(only(c.field)));
    const auto roles = ofKind(objs, "ClusterRole");
    ASSERT_EQ(roles.size(), 1u);
    // The sidecar's shared ClusterRole, bound by this driver's binding.
    EXPECT_EQ((*roles[0])["metadata"]["name"], std::string("csiop:") + c.role);
    EXPECT_TRUE(render::isShared(*roles[0]));
    EXPECT_EQ(rulesOf(*roles[0]), c.rules);
    const Json& binding =
        *find(objs, "ClusterRoleBinding", std::string("csiop:demo:sidecar:") + c.role);
    EXPECT_EQ(binding["roleRef"]["name"], std::string("csiop:") + c.role);
    EXPECT_EQ(binding["subjects"], Json::parse(R"([{"kind": "ServiceAccount",
      "name": "demo-controller", "namespace": "csi-demo"}])"));
    EXPECT_FALSE(render::isShared(binding));
    EXPECT_TRUE(ofKind(objs, "Role").empty()) << "single replica: no leases";
  }
}

TEST(Rbac, ASidecarsClusterRoleIsTheSameObjectForEveryDriverAndOwnedByNone) {
  const auto a = render::render(load(dd("  controller: {attacher: {enabled: true}}\n", "alpha")));
  const auto b = render::render(load(dd("  controller: {resizer: {enabled: true}}\n", "beta")));
  const Json& roleA = *find(a, "ClusterRole", "csiop:external-provisioner");
  EXPECT_EQ(roleA, *find(b, "ClusterRole", "csiop:external-provisioner"));
  EXPECT_FALSE(roleA["metadata"].contains("ownerReferences"));
  EXPECT_FALSE(roleA["metadata"]["labels"].contains(api::kOwnerLabel));
  EXPECT_EQ(roleA["metadata"]["labels"][api::kSharedLabel], "true");
  // Every shared ClusterRole is one of sharedObjects(), as rendered.
  const auto shared = render::sharedObjects();
  for (const auto& objs : {a, b}) {
    for (const Json* role : ofKind(objs, "ClusterRole")) {
      EXPECT_NE(std::find(shared.begin(), shared.end(), *role), shared.end()) << role->dump();
    }
  }
  // Each driver has bindings of its own, to its ServiceAccount.
  EXPECT_EQ((*find(b, "ClusterRoleBinding",
                   "csiop:beta:sidecar:external-provisioner"))["subjects"][0]["name"],
            "beta-controller");
  EXPECT_EQ(find(a, "ClusterRole", "csiop:external-resizer"), nullptr);
}

TEST(Rbac, OnlyTheOperatorsOwnClusterRolesAreShared) {
  // A user's label on a class or an extra object does not make it shared.
  const auto objs = render::render(load(dd(R"(  storageClasses:
  - name: fast
    labels: {csiop.dev/shared: "true"}
  objects:
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: Role
    metadata: {name: extra, labels: {csiop.dev/shared: "true"}}
    rules: []
)")));
  EXPECT_FALSE(render::isShared(*find(objs, "StorageClass", "fast")));
  EXPECT_FALSE(render::isShared(*find(objs, "Role", "extra", "csi-demo")));
}

TEST(Rbac, NodePluginNeedsNoneUnlessGrantedRules) {
  auto objs = render::render(load(dd("  csiDriver: {attachRequired: false}\n")));
  EXPECT_TRUE(ofKind(objs, "ClusterRole").empty());
  objs = render::render(load(dd("  csiDriver: {attachRequired: false}\n"
                                "  node: {rbacRules: [{apiGroups: [''], resources: [nodes], "
                                "verbs: [get]}]}\n")));
  const Json& role = *find(objs, "ClusterRole", "csiop:demo:node-driver");
  EXPECT_EQ(rulesOf(role), (std::set<std::string>{"/nodes: get"}));
  EXPECT_EQ((*find(objs, "ClusterRoleBinding", "csiop:demo:node-driver"))["subjects"][0]["name"],
            "demo-node");
  EXPECT_EQ((*find(objs, "DaemonSet", "demo-node",
                   "csi-demo"))["spec"]["template"]["spec"]["automountServiceAccountToken"],
            true);
}

TEST(Rbac, NamespacedRulesAreARoleInTheDriversNamespace) {
  const auto objs = render::render(load(dd(R"(  csiDriver: {attachRequired: false}
  node:
    namespacedRbacRules: [{apiGroups: [''], resources: [configmaps], verbs: [get, watch]}]
  controller:
    provisioner: {enabled: false}
    namespacedRbacRules: [{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get]}]
)")));
  EXPECT_TRUE(ofKind(objs, "ClusterRole").empty());
  const Json& node = *find(objs, "Role", "csiop:demo:node-driver", "csi-demo");
  EXPECT_EQ(rulesOf(node), (std::set<std::string>{"/configmaps: get,watch"}));
  EXPECT_EQ((*find(objs, "RoleBinding", "csiop:demo:node-driver", "csi-demo"))["subjects"][0],
            (Json{{"kind", "ServiceAccount"}, {"name", "demo-node"}, {"namespace", "csi-demo"}}));
  const Json& ctrl = *find(objs, "Role", "csiop:demo:controller-driver", "csi-demo");
  EXPECT_EQ(rulesOf(ctrl), (std::set<std::string>{"coordination.k8s.io/leases: get"}));
  EXPECT_EQ((*find(objs, "RoleBinding", "csiop:demo:controller-driver",
                   "csi-demo"))["subjects"][0]["name"],
            "demo-controller");
  // A driver granted rules in its namespace only gets an API token too.
  EXPECT_EQ((*find(objs, "DaemonSet", "demo-node",
                   "csi-demo"))["spec"]["template"]["spec"]["automountServiceAccountToken"],
            true);
}

std::string withSecrets(const std::string& params, const std::string& controller = "{}") {
  return dd("  controller: " + controller +
            "\n  storageClasses:\n  - name: a\n    parameters: " + params + "\n");
}

TEST(Rbac, NoSecretAccessWithoutSecretParameters) {
  const auto objs = render::render(load(withSecrets("{type: x}")));
  for (const auto* kind : {"ClusterRole", "Role"}) {
    for (const Json* r : ofKind(objs, kind)) {
      EXPECT_EQ(rulesOf(*r).count("/secrets: get"), 0u);
      EXPECT_EQ(r->dump().find("secrets"), std::string::npos) << r->dump();
    }
  }
}

TEST(Rbac, FixedSecretIsReadableByNameInItsNamespaceOnly) {
  const auto objs = render::render(
      load(withSecrets("{csi.storage.k8s.io/provisioner-secret-name: creds, "
                       "csi.storage.k8s.io/provisioner-secret-namespace: vault, "
                       "csi.storage.k8s.io/controller-publish-secret-name: pub, "
                       "csi.storage.k8s.io/controller-publish-secret-namespace: vault}")));
  const Json& role = *find(objs, "Role", "csiop:demo:secrets", "vault");
  EXPECT_EQ(rulesOf(role), (std::set<std::string>{R"(/secrets: get ["creds","pub"])"}));
  EXPECT_EQ(find(objs, "ClusterRole", "csiop:demo:secrets"), nullptr);
  EXPECT_EQ((*find(objs, "RoleBinding", "csiop:demo:secrets", "vault"))["subjects"][0]["namespace"],
            "csi-demo");
}

TEST(Rbac, TemplatedNamespaceNeedsClusterWideGet) {
  const auto objs = render::render(
      load(withSecrets("{csi.storage.k8s.io/provisioner-secret-name: '${pvc.name}', "
                       "csi.storage.k8s.io/provisioner-secret-namespace: '${pvc.namespace}'}")));
  EXPECT_EQ(rulesOf(*find(objs, "ClusterRole", "csiop:demo:secrets")),
            (std::set<std::string>{"/secrets: get"}));
}

TEST(Rbac, TemplatedNameInAFixedNamespace) {
  const auto objs = render::render(
      load(withSecrets("{csi.storage.k8s.io/controller-expand-secret-name: '${pvc.name}', "
                       "csi.storage.k8s.io/controller-expand-secret-namespace: tenants}",
                       "{resizer: {enabled: true}}")));
  EXPECT_EQ(rulesOf(*find(objs, "Role", "csiop:demo:secrets", "tenants")),
            (std::set<std::string>{"/secrets: get"}));
}

TEST(Rbac, SecretsOnlyForSidecarsThatRunAndReadThem) {
  // The resizer is off, and node-stage secrets are read by the kubelet.
  const auto objs =
      render::render(load(withSecrets("{csi.storage.k8s.io/controller-expand-secret-name: a, "
                                      "csi.storage.k8s.io/controller-expand-secret-namespace: x, "
                                      "csi.storage.k8s.io/node-stage-secret-name: b, "
                                      "csi.storage.k8s.io/node-stage-secret-namespace: x}")));
  EXPECT_EQ(find(objs, "Role", "csiop:demo:secrets", "x"), nullptr);
  EXPECT_EQ(find(objs, "ClusterRole", "csiop:demo:secrets"), nullptr);
}

} // namespace
} // namespace csiop
