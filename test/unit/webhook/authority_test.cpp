// What a DriverDeployment makes the operator do, as what its author must hold.
#include <gtest/gtest.h>

#include <algorithm>

#include <csiop/api/load.hpp>
#include <csiop/render/render.hpp>
#include <csiop/webhook/authority.hpp>

#include "review_fixtures.hpp"

namespace csiop::webhook {
namespace {

using testing::example;

std::vector<Requirement> requirementsOf(const Json& dd) {
  const api::Loaded loaded = api::loadDriverDeployment(dd, api::UnknownFields::Ignore);
  EXPECT_TRUE(loaded.ok()) << (loaded.errors.empty() ? "" : loaded.errors.front());
  const auto& object = loaded.objects.front();
  return requirements(object, render::render(object), api::builtinObjectKinds());
}

const Requirement* find(const std::vector<Requirement>& all, std::string_view why) {
  const auto it = std::find_if(all.begin(), all.end(), [&](const Requirement& r) {
    return r.why.find(why) != std::string::npos;
  });
  return it == all.end() ? nullptr : &*it;
}

bool needs(const Requirement& r, std::string_view described) {
  return std::any_of(r.allOf.begin(), r.allOf.end(),
                     [&](const Access& a) { return a.describe() == described; });
}

TEST(Authority, EveryObjectNeedsItsCreateAndWorkloadsNeedPods) {
  const auto all = requirementsOf(example("hostpath.yaml"));
  const Requirement* ds = find(all, "DaemonSet csi-hostpath/hostpath-node");
  ASSERT_NE(ds, nullptr);
  EXPECT_TRUE(needs(*ds, "create daemonsets.apps in namespace csi-hostpath"));
  const Requirement* pods = find(all, "DaemonSet csi-hostpath/hostpath-node runs pods");
  ASSERT_NE(pods, nullptr);
  EXPECT_TRUE(needs(*pods, "create pods in namespace csi-hostpath"));
  const Requirement* driver = find(all, "CSIDriver hostpath.csi.k8s.io");
  ASSERT_NE(driver, nullptr);
  EXPECT_TRUE(needs(*driver, "create csidrivers.storage.k8s.io cluster-wide"));
}

TEST(Authority, ARoleNeedsItsRulesOrEscalate) {
  Json dd = example("hostpath.yaml");
  dd["spec"]["node"]["rbacRules"] =
      Json::parse(R"([{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}])");
  const auto all = requirementsOf(dd);
  const Requirement* role = find(all, "ClusterRole csiop:hostpath:node-driver grants its rules");
  ASSERT_NE(role, nullptr);
  ASSERT_TRUE(role->shortcut);
  EXPECT_EQ(role->shortcut->verb, "escalate");
  EXPECT_EQ(role->shortcut->resource, "clusterroles");
  EXPECT_TRUE(needs(*role, "get nodes cluster-wide"));
  for (const Access& a : role->allOf) {
    EXPECT_TRUE(a.namespace_.empty()) << a.describe(); // a ClusterRole's rules: cluster-wide
  }
}

// A sidecar's shared ClusterRole is not the author's to create, but the driver's binding grants
// its rules: the author holds them, or may bind that role.
TEST(Authority, ASharedSidecarRoleNeedsItsRulesOrBindButNoCreate) {
  const auto all = requirementsOf(example("hostpath.yaml"));
  const Requirement* shared =
      find(all, "ClusterRole csiop:external-provisioner (shared by every driver) is bound");
  ASSERT_NE(shared, nullptr);
  ASSERT_TRUE(shared->shortcut);
  EXPECT_EQ(shared->shortcut->describe(),
            "bind clusterroles.rbac.authorization.k8s.io \"csiop:external-provisioner\" "
            "cluster-wide");
  EXPECT_TRUE(needs(*shared, "create persistentvolumes cluster-wide"));
  for (const Access& a : shared->allOf) {
    EXPECT_TRUE(a.namespace_.empty()) << a.describe();
  }
  for (const Requirement& r : all) {
    EXPECT_FALSE(needs(r, "create clusterroles.rbac.authorization.k8s.io cluster-wide")) << r.why;
  }
}

TEST(Authority, ABindingOfAForeignRoleNeedsBindOrTheRoleItself) {
  Json dd = example("hostpath.yaml");
  dd["spec"]["objects"] = Json::parse(R"([{
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
    "metadata": {"name": "everyone-admin"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                  "name": "system:authenticated"}]}])");
  const auto all = requirementsOf(dd);
  const Requirement* binding =
      find(all, "spec.objects[0]: RoleBinding csi-hostpath/everyone-admin binds");
  ASSERT_NE(binding, nullptr);
  ASSERT_TRUE(binding->shortcut);
  EXPECT_EQ(binding->shortcut->describe(),
            "bind clusterroles.rbac.authorization.k8s.io \"admin\" in namespace csi-hostpath");
  ASSERT_TRUE(binding->rulesOf);
  EXPECT_EQ(binding->rulesOf->name, "admin");
  EXPECT_EQ(binding->rulesOf->namespace_, "csi-hostpath");
  const Requirement* create = find(all, "spec.objects[0]: RoleBinding csi-hostpath/everyone-admin");
  ASSERT_NE(create, nullptr);
  EXPECT_TRUE(
      needs(*create, "create rolebindings.rbac.authorization.k8s.io in namespace csi-hostpath"));
}

TEST(Authority, TheOperatorsOwnBindingsNeedOnlyTheirRoles) {
  for (const Requirement& r : requirementsOf(example("hostpath.yaml"))) {
    EXPECT_FALSE(r.rulesOf) << r.why; // every binding refers to a role rendered with it
  }
}

TEST(Authority, AggregationNeedsUpdateOnTheRoleItFeeds) {
  Json dd = example("hostpath.yaml");
  dd["spec"]["aggregatedClusterRoles"] = Json::parse(R"([{"name": "hostpath-secrets-viewer",
    "aggregateTo": ["view"],
    "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}])");
  const auto all = requirementsOf(dd);
  const Requirement* into = find(all, "is aggregated into ClusterRole view");
  ASSERT_NE(into, nullptr);
  EXPECT_TRUE(needs(*into, "update clusterroles.rbac.authorization.k8s.io \"view\" cluster-wide"));
  const Requirement* rules = find(all, "hostpath-secrets-viewer grants its rules");
  ASSERT_NE(rules, nullptr);
  EXPECT_TRUE(needs(*rules, "get secrets cluster-wide"));
}

TEST(Authority, SecretAccessNeedsTheSecretsInTheirNamespace) {
  Json dd = example("hostpath.yaml");
  dd["spec"]["secretAccess"] = Json::parse(R"([{"namespace": "kube-system"}])");
  bool found = false;
  for (const Requirement& r : requirementsOf(dd)) {
    found = found || needs(r, "get secrets in namespace kube-system");
  }
  EXPECT_TRUE(found);
}

TEST(Authority, RulesExpandIntoAccessesWithSubresourcesNamesAndUrls) {
  const Json rules = Json::parse(R"([
    {"apiGroups": ["", "storage.k8s.io"], "resources": ["pods", "volumeattachments/status"],
     "verbs": ["get", "patch"], "resourceNames": ["a"]},
    {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])");
  const auto accesses = accessesOf(rules, "ns");
  EXPECT_EQ(accesses.size(), 9u);
  std::vector<std::string> described;
  for (const Access& a : accesses) {
    described.push_back(a.describe());
  }
  EXPECT_NE(std::find(described.begin(), described.end(),
                      "patch volumeattachments/status.storage.k8s.io \"a\" in namespace ns"),
            described.end());
  EXPECT_NE(std::find(described.begin(), described.end(), "get /metrics"), described.end());
  EXPECT_TRUE(accessesOf(Json("not rules"), "").empty());
}

TEST(Authority, UserInfoIsReadWithItsGroupsAndExtra) {
  const Json request = Json::parse(R"({"userInfo": {"username": "alice", "uid": "u-1",
    "groups": ["dev", "system:authenticated"], "extra": {"scopes": ["a", "b"]}}})");
  const UserInfo user = userInfoOf(request);
  EXPECT_EQ(user.username, "alice");
  EXPECT_EQ(user.uid, "u-1");
  EXPECT_EQ(user.groups.size(), 2u);
  EXPECT_EQ(user.extra.at("scopes").size(), 2u);
  EXPECT_EQ(userInfoOf(Json::object()).username, "");
}

TEST(Authority, SubjectAccessReviewAttributes) {
  Access a;
  a.verb = "create";
  a.group = "apps";
  a.resource = "daemonsets";
  a.namespace_ = "kube-system";
  EXPECT_EQ(
      a.resourceAttributes().dump(),
      R"({"resourceAttributes":{"verb":"create","group":"apps","resource":"daemonsets","namespace":"kube-system"}})");
}

} // namespace
} // namespace csiop::webhook
