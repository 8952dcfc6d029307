// The chart's RBAC against what the operator renders (no cluster needed, only helm):
// - the operator holds every rule it grants to sidecars (the API server refuses to let it grant
//   more than it holds), for every example and for a DriverDeployment with every sidecar;
// - it may manage every kind of object it renders, with the verbs its reconciler uses;
// - no wildcard anywhere, and the secrets knobs do what values.yaml says.
// The e2e suite e2e.helm then runs the operator with these rules against a real API server.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <csiop/api/load.hpp>
#include <csiop/kube/resource.hpp>
#include <csiop/render/render.hpp>

#include "helm_template.hpp"

namespace csiop {
namespace {

namespace fs = std::filesystem;
using api::Json;
using test::helmTemplate;
using test::kNamespace;
using test::readFile;

const std::string kServiceAccount = "csiop-csi-operator";

// One permission: verb on group/resource (resource may carry a /subresource), optionally
// limited to a namespace and to names.
struct Rule {
  std::set<std::string> groups, resources, verbs, names;
  std::string namespace_; // "" : cluster-wide (a ClusterRole)
};

std::vector<Rule> rulesOf(const Json& role) {
  std::vector<Rule> out;
  const std::string ns = role["kind"] == "Role" ? role["metadata"].value("namespace", "") : "";
  for (const auto& r : role.value("rules", Json::array())) {
    Rule rule;
    for (const auto& g : r.value("apiGroups", Json::array()))
      rule.groups.insert(g.get<std::string>());
    for (const auto& x : r.value("resources", Json::array()))
      rule.resources.insert(x.get<std::string>());
    for (const auto& v : r.value("verbs", Json::array()))
      rule.verbs.insert(v.get<std::string>());
    for (const auto& n : r.value("resourceNames", Json::array()))
      rule.names.insert(n.get<std::string>());
    rule.namespace_ = ns;
    out.push_back(std::move(rule));
  }
  return out;
}

// The rules the chart binds to the operator's ServiceAccount.
std::vector<Rule> operatorRules(const std::vector<Json>& chart) {
  std::map<std::string, const Json*> roles; // "Kind/namespace/name"
  for (const Json& o : chart) {
    if (o["kind"] == "ClusterRole" || o["kind"] == "Role") {
      roles[o["kind"].get<std::string>() + "/" + o["metadata"].value("namespace", "") + "/" +
            o["metadata"]["name"].get<std::string>()] = &o;
    }
  }
  std::vector<Rule> out;
  for (const Json& b : chart) {
    if (b["kind"] != "ClusterRoleBinding" && b["kind"] != "RoleBinding") {
      continue;
    }
    bool toOperator = false;
    for (const auto& s : b["subjects"]) {
      toOperator |= s["kind"] == "ServiceAccount" && s["name"] == kServiceAccount &&
                    s["namespace"] == kNamespace;
    }
    const std::string refKind = b["roleRef"]["kind"];
    const std::string ns = refKind == "Role" ? b["metadata"].value("namespace", "") : "";
    const auto role =
        roles.find(refKind + "/" + ns + "/" + b["roleRef"]["name"].get<std::string>());
    if (!toOperator || role == roles.end()) {
      continue;
    }
    for (Rule r : rulesOf(*role->second)) {
      if (b["kind"] == "RoleBinding") {
        r.namespace_ = b["metadata"]["namespace"];
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

bool covers(const std::vector<Rule>& held, const std::string& group, const std::string& resource,
            const std::string& verb, const std::string& ns, const std::string& name) {
  for (const Rule& r : held) {
    const bool where = r.namespace_.empty() || r.namespace_ == ns;
    const bool which = r.names.empty() || (!name.empty() && r.names.contains(name));
    if (where && which && r.groups.contains(group) && r.resources.contains(resource) &&
        r.verbs.contains(verb)) {
      return true;
    }
  }
  return false;
}

// Every (group, resource, verb, name) the rendered roles grant that `held` does not cover.
std::vector<std::string> uncovered(const std::vector<Rule>& held,
                                   const std::vector<Json>& objects) {
  std::vector<std::string> missing;
  for (const Json& o : objects) {
    if (o["kind"] != "ClusterRole" && o["kind"] != "Role") {
      continue;
    }
    for (const Rule& r : rulesOf(o)) {
      const std::set<std::string> names = r.names.empty() ? std::set<std::string>{""} : r.names;
      for (const auto& g : r.groups)
        for (const auto& res : r.resources)
          for (const auto& v : r.verbs)
            for (const auto& n : names)
              if (!covers(held, g, res, v, r.namespace_, n))
                missing.push_back(o["metadata"]["name"].get<std::string>() + ": " + v + " " +
                                  (g.empty() ? "" : g + "/") + res + (n.empty() ? "" : "/" + n) +
                                  (r.namespace_.empty() ? "" : " in " + r.namespace_));
    }
  }
  return missing;
}

std::vector<fs::path> driverDeployments() {
  std::vector<fs::path> files = {fs::path(CSIOP_SOURCE_DIR) /
                                 "test/chart/testdata/every-sidecar.yaml"};
  for (const auto& e : fs::directory_iterator(fs::path(CSIOP_SOURCE_DIR) / "examples")) {
    if (e.is_regular_file()) {
      files.push_back(e.path());
    }
  }
  return files;
}

// The chart's rules with the values a DriverDeployment's driver needs: examples/<name>.yaml's
// own rules are in examples/operator-values/<name>.yaml, if it grants its driver any.
std::vector<Rule> heldFor(const fs::path& file) {
  const fs::path values = file.parent_path() / "operator-values" / file.filename();
  return operatorRules(fs::exists(values) ? helmTemplate("-f '" + values.string() + "'")
                                          : helmTemplate());
}

std::vector<Json> renderFile(const fs::path& file) {
  const auto loaded = api::loadDriverDeployments(readFile(file));
  EXPECT_TRUE(loaded.errors.empty()) << file;
  std::vector<Json> out;
  for (const auto& dd : loaded.objects) {
    for (Json& o : render::render(dd)) {
      out.push_back(std::move(o));
    }
  }
  return out;
}

TEST(ChartRbac, TheOperatorHoldsEveryRuleItGrants) {
  for (const auto& file : driverDeployments()) {
    const auto held = heldFor(file);
    ASSERT_FALSE(held.empty());
    const auto missing = uncovered(held, renderFile(file));
    EXPECT_TRUE(missing.empty()) << file.filename() << " grants what the chart does not give the "
                                 << "operator:\n  " << testing::PrintToString(missing);
  }
}

TEST(ChartRbac, TheOperatorMayManageEveryKindItRenders) {
  const auto held = operatorRules(helmTemplate());
  namespace r = kube::resources;
  const std::vector<const kube::ResourceRef*> known = {
      &r::namespaces,   &r::serviceaccounts,      &r::daemonsets,           &r::deployments,
      &r::statefulsets, &r::clusterroles,         &r::clusterrolebindings,  &r::roles,
      &r::rolebindings, &r::csidrivers,           &r::storageclasses,       &r::configmaps,
      &r::services,     &r::poddisruptionbudgets, &r::volumesnapshotclasses};
  std::set<std::string> kinds;
  for (const auto& file : driverDeployments()) {
    for (const Json& o : renderFile(file)) {
      kinds.insert(o["kind"].get<std::string>());
    }
  }
  for (const auto& kind : kinds) {
    const kube::ResourceRef* ref = nullptr;
    for (const auto* k : known) {
      if (k->kind == kind) {
        ref = k;
      }
    }
    ASSERT_NE(ref, nullptr) << "the operator renders " << kind << ", unknown to this test";
    // What the reconciler does with each kind (operator/driverdeployment/src/reconciler.cpp).
    const std::vector<std::string> verbs =
        kind == "Namespace" ? std::vector<std::string>{"list", "watch", "create"}
        : kind == "CSIDriver"
            ? std::vector<std::string>{"list", "watch", "create", "patch", "delete"}
            : std::vector<std::string>{"get", "list", "watch", "create", "patch", "delete"};
    for (const auto& verb : verbs) {
      EXPECT_TRUE(covers(held, ref->group, ref->resource, verb, "any-namespace", "any-name"))
          << verb << " " << ref->resource;
    }
  }
  // Its own API, the CSINode registrations, Events, its CRD.
  EXPECT_TRUE(covers(held, "csiop.dev", "driverdeployments", "watch", "", ""));
  EXPECT_TRUE(covers(held, "csiop.dev", "driverdeployments", "patch", "", "dd"));
  EXPECT_TRUE(covers(held, "csiop.dev", "driverdeployments/status", "update", "", "dd"));
  EXPECT_TRUE(covers(held, "storage.k8s.io", "csinodes", "watch", "", ""));
  // Read, for the status, deletion protection and the node plugin rollout (caches.cpp).
  for (const auto* ref : {&r::pods, &r::persistentvolumes, &r::volumeattachments, &r::nodes,
                          &r::controllerrevisions}) {
    for (const char* verb : {"list", "watch"}) {
      EXPECT_TRUE(covers(held, ref->group, ref->resource, verb, "", ""))
          << verb << " " << ref->resource;
    }
  }
  // Node plugin pods replaced one by one (WhenVolumesUnused).
  EXPECT_TRUE(covers(held, "", "pods", "delete", "any-namespace", "any-name"));
  // The registrar's log of a node where the driver is not registered (registration.cpp).
  EXPECT_TRUE(covers(held, "", "pods/log", "get", "any-namespace", "any-name"));
  // Referenced configuration, read by name (config hashes); ConfigMaps are companion objects
  // too (cached by the owner label, so listed and watched), Secrets never.
  EXPECT_TRUE(covers(held, "", "configmaps", "get", "any-namespace", "any-name"));
  EXPECT_TRUE(covers(held, "", "secrets", "get", "any-namespace", "any-name"));
  for (const auto* ref :
       {&r::configmaps, &r::services, &r::poddisruptionbudgets, &r::volumesnapshotclasses}) {
    for (const char* verb : {"list", "watch", "create", "patch", "delete"}) {
      EXPECT_TRUE(covers(held, ref->group, ref->resource, verb, "", ""))
          << verb << " " << ref->resource;
    }
  }
  EXPECT_FALSE(covers(held, "", "secrets", "list", "any-namespace", ""));
  EXPECT_TRUE(covers(held, "", "events", "create", "default", ""));
  // A namespace's Pod Security level, read before a workload is created in it (pod_security.cpp).
  EXPECT_TRUE(covers(held, "", "namespaces", "get", "", "csi-any"));
  // The FailedCreate Events of the workloads (caches.cpp).
  for (const char* verb : {"list", "watch"}) {
    EXPECT_TRUE(covers(held, "", "events", verb, "", "")) << verb << " events";
  }
  EXPECT_TRUE(covers(held, "apiextensions.k8s.io", "customresourcedefinitions", "patch", "",
                     "driverdeployments.csiop.dev"));
  EXPECT_FALSE(covers(held, "apiextensions.k8s.io", "customresourcedefinitions", "patch", "",
                      "other.example.com"));
  EXPECT_TRUE(covers(held, "coordination.k8s.io", "leases", "update", kNamespace, "csiop"));
}

TEST(ChartRbac, NoWildcardsNoEscalateNoBind) {
  for (const Rule& r : operatorRules(helmTemplate())) {
    for (const auto* set : {&r.groups, &r.resources, &r.verbs}) {
      EXPECT_FALSE(set->contains("*"));
    }
    EXPECT_FALSE(r.verbs.contains("escalate"));
    EXPECT_FALSE(r.verbs.contains("bind"));
    EXPECT_FALSE(r.verbs.contains("impersonate"));
    if (r.resources.contains("secrets")) {
      EXPECT_EQ(r.verbs, std::set<std::string>{"get"}) << "secrets: get by name only";
    }
  }
}

TEST(ChartRbac, SecretsCanBeNarrowedToNamespacesOrDenied) {
  const auto narrowed =
      operatorRules(helmTemplate("--set 'rbac.secrets.namespaces={csi-every,other}'"));
  EXPECT_TRUE(covers(narrowed, "", "secrets", "get", "csi-every", "provisioner-secret"));
  EXPECT_TRUE(covers(narrowed, "", "secrets", "get", "other", "x"));
  EXPECT_FALSE(covers(narrowed, "", "secrets", "get", "kube-system", "x"));

  const auto none = operatorRules(helmTemplate("--set rbac.secrets.enabled=false"));
  EXPECT_FALSE(covers(none, "", "secrets", "get", "csi-every", "provisioner-secret"));
  const auto missing =
      uncovered(none, renderFile(fs::path(CSIOP_SOURCE_DIR) / "examples/nfs.yaml"));
  ASSERT_EQ(missing.size(), 1u) << testing::PrintToString(missing);
  EXPECT_NE(missing[0].find("get secrets/nfs-mount-options in csi-nfs"), std::string::npos)
      << missing[0];
}

TEST(ChartRbac, DriverNamespacesNarrowWhatTheOperatorWrites) {
  const auto held = operatorRules(helmTemplate("--set 'rbac.driverNamespaces={csi-every,other}'"));
  namespace r = kube::resources;
  for (const auto* ref :
       {&r::serviceaccounts, &r::configmaps, &r::services, &r::daemonsets, &r::deployments,
        &r::statefulsets, &r::roles, &r::rolebindings, &r::poddisruptionbudgets}) {
    for (const char* verb : {"create", "patch", "delete"}) {
      EXPECT_TRUE(covers(held, ref->group, ref->resource, verb, "csi-every", "x"))
          << verb << " " << ref->resource;
      EXPECT_TRUE(covers(held, ref->group, ref->resource, verb, "other", "x"))
          << verb << " " << ref->resource;
      EXPECT_FALSE(covers(held, ref->group, ref->resource, verb, "kube-system", "x"))
          << verb << " " << ref->resource << " outside the driver namespaces";
    }
    // The informers still read every namespace.
    for (const char* verb : {"get", "list", "watch"}) {
      EXPECT_TRUE(covers(held, ref->group, ref->resource, verb, "kube-system", ""))
          << verb << " " << ref->resource;
    }
  }
  EXPECT_TRUE(covers(held, "", "pods", "delete", "csi-every", "x"));
  EXPECT_FALSE(covers(held, "", "pods", "delete", "kube-system", "x"));
  EXPECT_TRUE(covers(held, "", "pods/log", "get", "csi-every", "x"));
  EXPECT_FALSE(covers(held, "", "pods/log", "get", "kube-system", "x"));
  EXPECT_TRUE(covers(held, "coordination.k8s.io", "leases", "update", "csi-every", "x"));
  EXPECT_FALSE(covers(held, "coordination.k8s.io", "leases", "update", "kube-system", "x"));
  EXPECT_FALSE(covers(held, "coordination.k8s.io", "leases", "update", "kube-node-lease", "x"));
  EXPECT_FALSE(covers(held, "", "namespaces", "create", "", "x"));
  // Still everything a driver in those namespaces needs granted.
  const auto missing = uncovered(
      held, renderFile(fs::path(CSIOP_SOURCE_DIR) / "test/chart/testdata/every-sidecar.yaml"));
  EXPECT_TRUE(missing.empty()) << testing::PrintToString(missing);
  // And the operator is told, so its webhook refuses the others.
  const auto chart = helmTemplate("--set 'rbac.driverNamespaces={csi-every,other}'");
  for (const Json& o : chart) {
    if (o["kind"] == "Deployment") {
      const auto args = o["spec"]["template"]["spec"]["containers"][0]["args"].dump();
      EXPECT_NE(args.find("--driver-namespace=csi-every"), std::string::npos) << args;
      EXPECT_NE(args.find("--driver-namespace=other"), std::string::npos) << args;
    }
  }
}

TEST(ChartRbac, PodLogsCanBeDenied) {
  const auto held = operatorRules(helmTemplate("--set rbac.podLogs=false"));
  EXPECT_FALSE(covers(held, "", "pods/log", "get", "any-namespace", "any-name"));
  const auto scoped = operatorRules(
      helmTemplate("--set rbac.podLogs=false --set 'rbac.driverNamespaces={csi-every}'"));
  EXPECT_FALSE(covers(scoped, "", "pods/log", "get", "csi-every", "x"));
}

TEST(ChartRbac, TheWebhookMayAskTheApiServer) {
  const auto held = operatorRules(helmTemplate());
  EXPECT_TRUE(covers(held, "authorization.k8s.io", "subjectaccessreviews", "create", "", ""));
  EXPECT_TRUE(covers(held, "csiop.dev", "driverdeployments", "get", "", "dd"));
  EXPECT_TRUE(covers(held, "rbac.authorization.k8s.io", "clusterroles", "get", "", "admin"));
  EXPECT_TRUE(covers(held, "rbac.authorization.k8s.io", "roles", "get", "ns", "r"));
}

TEST(ChartRbac, WithoutChartCrdsTheOperatorGetsNoCrdAccess) {
  const auto chart = helmTemplate("--set crds.install=false");
  for (const Json& o : chart) {
    EXPECT_NE(o["kind"], "CustomResourceDefinition");
    if (o["kind"] == "Deployment") {
      const auto args = o["spec"]["template"]["spec"]["containers"][0]["args"].dump();
      EXPECT_NE(args.find("--no-install-crds"), std::string::npos) << args;
    }
  }
  EXPECT_FALSE(covers(operatorRules(chart), "apiextensions.k8s.io", "customresourcedefinitions",
                      "patch", "", "driverdeployments.csiop.dev"));
}

TEST(ChartRbac, GrantableRulesExtendWhatDriversMayBeGiven) {
  const fs::path values = fs::path(testing::TempDir()) / "grantable-values.yaml";
  std::ofstream(values)
      << "rbac:\n  grantableRules:\n"
         "    - {apiGroups: [\"\"], resources: [endpoints], verbs: [get, list]}\n";
  const auto held = operatorRules(helmTemplate("-f '" + values.string() + "'"));
  EXPECT_TRUE(covers(held, "", "endpoints", "list", "", ""));
  EXPECT_FALSE(covers(held, "", "endpoints", "create", "", ""));
}

} // namespace
} // namespace csiop
