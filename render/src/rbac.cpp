#include "rbac.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include <csiop/api/json_access.hpp>
#include <csiop/api/secrets.hpp>
#include <csiop/render/render.hpp>

#include "containers.hpp"

namespace csiop::render {
namespace {

using api::Component;

Json rule(const char* group, const char* resource, std::initializer_list<const char*> verbs) {
  Json v = Json::array();
  for (const char* verb : verbs) {
    v.push_back(verb);
  }
  return Json{{"apiGroups", Json::array({group})},
              {"resources", Json::array({resource})},
              {"verbs", std::move(v)}};
}

// The ClusterRole rules of each sidecar, as its upstream deploy/kubernetes/rbac.yaml
// has them for the pinned version.
Json clusterRules(Component c) {
  const auto events = [] {
    return rule("", "events", {"list", "watch", "create", "update", "patch"});
  };
  switch (c) {
  case Component::Provisioner:
    return Json::array({
        rule("", "persistentvolumes", {"get", "list", "watch", "create", "patch", "delete"}),
        rule("", "persistentvolumeclaims", {"get", "list", "watch", "update"}),
        rule("storage.k8s.io", "storageclasses", {"get", "list", "watch"}),
        events(),
        rule("snapshot.storage.k8s.io", "volumesnapshots", {"get", "list", "watch", "update"}),
        rule("snapshot.storage.k8s.io", "volumesnapshotcontents", {"get", "list"}),
        rule("storage.k8s.io", "csinodes", {"get", "list", "watch"}),
        rule("", "nodes", {"get", "list", "watch"}),
        rule("storage.k8s.io", "volumeattachments", {"get", "list", "watch"}),
    });
  case Component::Attacher:
    return Json::array({
        rule("", "persistentvolumes", {"get", "list", "watch", "patch"}),
        rule("storage.k8s.io", "csinodes", {"get", "list", "watch"}),
        rule("storage.k8s.io", "volumeattachments", {"get", "list", "watch", "patch"}),
        rule("storage.k8s.io", "volumeattachments/status", {"patch"}),
    });
  case Component::Resizer:
    return Json::array({
        rule("", "persistentvolumes", {"get", "list", "watch", "patch"}),
        rule("", "persistentvolumeclaims", {"get", "list", "watch"}),
        rule("", "pods", {"get", "list", "watch"}),
        rule("", "persistentvolumeclaims/status", {"patch"}),
        events(),
        rule("storage.k8s.io", "volumeattributesclasses", {"get", "list", "watch"}),
    });
  case Component::Snapshotter:
    return Json::array({
        events(),
        rule("snapshot.storage.k8s.io", "volumesnapshotclasses", {"get", "list", "watch"}),
        rule("snapshot.storage.k8s.io", "volumesnapshotcontents",
             {"get", "list", "watch", "update", "patch"}),
        rule("snapshot.storage.k8s.io", "volumesnapshotcontents/status", {"update", "patch"}),
        rule("groupsnapshot.storage.k8s.io", "volumegroupsnapshotclasses",
             {"get", "list", "watch"}),
        rule("groupsnapshot.storage.k8s.io", "volumegroupsnapshotcontents",
             {"get", "list", "watch", "update", "patch"}),
        rule("groupsnapshot.storage.k8s.io", "volumegroupsnapshotcontents/status",
             {"update", "patch"}),
    });
  case Component::HealthMonitor:
    return Json::array({
        rule("", "persistentvolumes", {"get", "list", "watch"}),
        rule("", "persistentvolumeclaims", {"get", "list", "watch"}),
        rule("", "nodes", {"get", "list", "watch"}),
        rule("", "pods", {"get", "list", "watch"}),
        rule("", "events", {"get", "list", "watch", "create", "patch"}),
    });
  default:
    return Json::array(); // registrar and livenessprobe need no API access
  }
}

// Namespaced rules: leader election, and the provisioner's capacity tracking
// (CSIStorageCapacity objects, plus the GETs that walk from its pod to the
// owning workload: pod -> ReplicaSet -> Deployment, or pod -> StatefulSet).
Json namespacedRules(const api::EffectiveSidecar& s, const Effective& effective) {
  Json rules = Json::array();
  if (s.leaderElection.enabled) {
    rules.push_back(rule("coordination.k8s.io", "leases",
                         {"get", "watch", "list", "delete", "update", "create"}));
  }
  if (s.component == Component::Provisioner && effective.csiDriver.storageCapacity) {
    rules.push_back(rule("storage.k8s.io", "csistoragecapacities",
                         {"get", "list", "watch", "create", "update", "patch", "delete"}));
    rules.push_back(rule("", "pods", {"get"}));
    if (capacityOwnerLevel(effective) == 2) {
      rules.push_back(rule("apps", "replicasets", {"get"}));
    }
  }
  return rules;
}

const char* roleName(Component c) {
  switch (c) {
  case Component::Provisioner:
    return "external-provisioner";
  case Component::Attacher:
    return "external-attacher";
  case Component::Resizer:
    return "external-resizer";
  case Component::Snapshotter:
    return "external-snapshotter";
  case Component::HealthMonitor:
    return "external-health-monitor";
  default:
    return "sidecar";
  }
}

// The sidecars whose upstream rules are a ClusterRole of their own, the same for every driver.
constexpr Component kSharedRoleSidecars[] = {Component::Provisioner, Component::Attacher,
                                             Component::Resizer, Component::Snapshotter,
                                             Component::HealthMonitor};

// "csiop:external-provisioner": two parts, where a DriverDeployment's roles have three
// ("csiop:<name>:<what>", and a name has no colon), so no driver's role can take its name.
std::string sharedRoleName(Component c) {
  return std::string("csiop:") + roleName(c);
}

// The ClusterRole of a sidecar's upstream rules that every driver's binding names: no owner
// (it outlives any one driver), labelled kSharedLabel.
Json sharedRole(Component c) {
  Json labels = {{"app.kubernetes.io/component", "sidecar-rbac"},
                 {"app.kubernetes.io/part-of", api::kManagedBy},
                 {"app.kubernetes.io/managed-by", api::kManagedBy},
                 {api::kSharedLabel, "true"}};
  return Json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
              {"kind", "ClusterRole"},
              {"metadata", {{"name", sharedRoleName(c)}, {"labels", std::move(labels)}}},
              {"rules", clusterRules(c)}};
}

Json subject(const std::string& sa, const std::string& ns) {
  return Json::array({Json{{"kind", "ServiceAccount"}, {"name", sa}, {"namespace", ns}}});
}

void addRole(std::vector<Json>& clusterScoped, std::vector<Json>& namespaced,
             const Effective& effective, const std::string& name, const std::string& ns, Json rules,
             const std::string& sa) {
  const bool cluster = ns.empty();
  Json role = object(effective, "rbac.authorization.k8s.io/v1", cluster ? "ClusterRole" : "Role",
                     name, ns, component::kRbac);
  role["rules"] = std::move(rules);
  Json binding = object(effective, "rbac.authorization.k8s.io/v1",
                        cluster ? "ClusterRoleBinding" : "RoleBinding", name, ns, component::kRbac);
  binding["subjects"] = subject(sa, effective.namespace_);
  binding["roleRef"] = Json{{"apiGroup", "rbac.authorization.k8s.io"},
                            {"kind", cluster ? "ClusterRole" : "Role"},
                            {"name", name}};
  auto& into = cluster ? clusterScoped : namespaced;
  into.push_back(std::move(role));
  into.push_back(std::move(binding));
}

// A sidecar's upstream rules for ServiceAccount `sa`: a ClusterRoleBinding of this driver to the
// sidecar's shared ClusterRole, which goes into `shared` once.
void bindSharedRole(std::vector<Json>& clusterScoped, std::vector<Json>& shared,
                    const Effective& effective, Component c, const std::string& sa) {
  const std::string role = sharedRoleName(c);
  if (std::none_of(shared.begin(), shared.end(),
                   [&](const Json& r) { return r["metadata"]["name"] == role; })) {
    shared.push_back(sharedRole(c));
  }
  // Not the name of the driver's own role of earlier versions ("csiop:<name>:<sidecar>"):
  // a binding's roleRef is immutable, and the new binding is in place before the old one goes.
  Json binding =
      object(effective, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding",
             rbacName(effective, std::string("sidecar:") + roleName(c)), "", component::kRbac);
  binding["subjects"] = subject(sa, effective.namespace_);
  binding["roleRef"] =
      Json{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}};
  clusterScoped.push_back(std::move(binding));
}

// Which Secrets one ServiceAccount may `get`: by namespace ("" in a set: any name), and in any
// namespace.
struct SecretGrants {
  std::map<std::string, std::set<std::string>> byNamespace;
  std::set<std::string> anyNamespace;

  void add(const std::optional<std::string>& ns, const std::string& name) {
    if (!ns || api::isTemplated(*ns)) {
      anyNamespace.insert(name);
    } else {
      byNamespace[*ns].insert(name);
    }
  }
};

// Each secret a class names, for the ServiceAccount of the sidecar that reads it: the node
// plugin's for a node-local provisioner, else the controller's (if that sidecar is enabled).
void addSecretReferences(SecretGrants& controller, SecretGrants& node, const Effective& effective,
                         const std::vector<api::SecretReference>& refs) {
  for (const auto& ref : refs) {
    if (!ref.reader || !ref.name || !ref.namespace_) {
      continue;
    }
    SecretGrants* grants = nullptr;
    if (*ref.reader == Component::Provisioner && effective.node.provisioner) {
      grants = &node;
    } else if (const auto* reader =
                   effective.controller ? effective.controller->sidecar(*ref.reader) : nullptr;
               reader != nullptr && reader->enabled) {
      grants = &controller;
    }
    if (grants != nullptr) {
      grants->add(ref.namespace_, api::isTemplated(*ref.name) ? "" : *ref.name);
    }
  }
}

void addSecretRoles(std::vector<Json>& clusterScoped, std::vector<Json>& namespaced,
                    const Effective& effective, const SecretGrants& grants, const std::string& role,
                    const std::string& sa) {
  const auto secretRule = [](const std::set<std::string>& names) {
    Json r = rule("", "secrets", {"get"});
    if (!names.contains("")) {
      r["resourceNames"] = Json(names);
    }
    return Json::array({std::move(r)});
  };
  if (!grants.anyNamespace.empty()) {
    addRole(clusterScoped, namespaced, effective, rbacName(effective, role), "",
            secretRule(grants.anyNamespace), sa);
  }
  for (const auto& [ns, names] : grants.byNamespace) {
    addRole(clusterScoped, namespaced, effective, rbacName(effective, role), ns, secretRule(names),
            sa);
  }
}

// Secrets the driver's ServiceAccounts read. The sidecars that read what StorageClass and
// VolumeSnapshotClass parameters name (a node-local provisioner too); spec.secretAccess: those
// an admin's own classes or the driver's configuration name, for either ServiceAccount.
// Exactly the named secret where name and namespace are fixed, the namespace's secrets where
// only the namespace is, and cluster-wide only where the namespace is a ${...} template. Only
// `get`: the sidecars fetch each secret by name and never list.
void secretRoles(std::vector<Json>& clusterScoped, std::vector<Json>& namespaced,
                 const Effective& effective) {
  SecretGrants controller;
  SecretGrants node;
  for (const auto& sc : effective.storageClasses) {
    if (sc.parameters) {
      addSecretReferences(controller, node, effective, api::secretReferences(*sc.parameters));
    }
  }
  for (const auto& c : effective.volumeSnapshotClasses) {
    if (c.parameters) {
      addSecretReferences(controller, node, effective,
                          api::snapshotSecretReferences(*c.parameters));
    }
  }
  for (const auto& access : effective.secretAccess) {
    const std::string ns = access.namespace_.value_or(effective.namespace_);
    const std::vector<std::string> readers =
        access.serviceAccounts.value_or(std::vector<std::string>{"Controller"});
    for (const auto& reader : readers) {
      SecretGrants& grants = reader == "Node" ? node : controller;
      if (!access.names) {
        grants.add(ns, "");
      }
      for (const auto& name : access.names.value_or(std::vector<std::string>{})) {
        grants.add(ns, name);
      }
    }
  }
  if (effective.controller) {
    addSecretRoles(clusterScoped, namespaced, effective, controller, "secrets",
                   controllerServiceAccount(effective));
  }
  addSecretRoles(clusterScoped, namespaced, effective, node, "node-secrets", nodeName(effective));
}

} // namespace

std::vector<Json> renderServiceAccounts(const Effective& effective) {
  std::vector<Json> out;
  Json node = object(effective, "v1", "ServiceAccount", nodeName(effective), effective.namespace_,
                     component::kNode);
  addUserMetadata(node, effective.node.serviceAccount.labels,
                  effective.node.serviceAccount.annotations);
  out.push_back(std::move(node));
  if (effective.hasControllerWorkload()) {
    Json controller = object(effective, "v1", "ServiceAccount", controllerName(effective),
                             effective.namespace_, component::kController);
    addUserMetadata(controller, effective.controller->serviceAccount.labels,
                    effective.controller->serviceAccount.annotations);
    out.push_back(std::move(controller));
  }
  return out;
}

std::vector<Json> renderRbac(const Effective& effective) {
  std::vector<Json> shared;
  std::vector<Json> clusterScoped;
  std::vector<Json> namespaced;
  if (!effective.node.rbacRules.empty()) {
    addRole(clusterScoped, namespaced, effective, rbacName(effective, "node-driver"), "",
            effective.node.rbacRules, nodeName(effective));
  }
  if (!effective.node.namespacedRbacRules.empty()) {
    addRole(clusterScoped, namespaced, effective, rbacName(effective, "node-driver"),
            effective.namespace_, effective.node.namespacedRbacRules, nodeName(effective));
  }
  if (effective.node.provisioner) {
    // The node-local provisioner: the external-provisioner rules for the node plugin's
    // ServiceAccount; with capacity, its CSIStorageCapacity objects and the GET of its own pod
    // (whose owner, the DaemonSet, owns them). No leader election.
    const std::string name = rbacName(effective, roleName(Component::Provisioner));
    bindSharedRole(clusterScoped, shared, effective, Component::Provisioner, nodeName(effective));
    if (effective.csiDriver.storageCapacity) {
      addRole(clusterScoped, namespaced, effective, name, effective.namespace_,
              Json::array({rule("storage.k8s.io", "csistoragecapacities",
                                {"get", "list", "watch", "create", "update", "patch", "delete"}),
                           rule("", "pods", {"get"})}),
              nodeName(effective));
    }
  }
  if (effective.controller) {
    const std::string sa = controllerServiceAccount(effective);
    if (!effective.controller->rbacRules.empty()) {
      addRole(clusterScoped, namespaced, effective, rbacName(effective, "controller-driver"), "",
              effective.controller->rbacRules, sa);
    }
    if (!effective.controller->namespacedRbacRules.empty()) {
      addRole(clusterScoped, namespaced, effective, rbacName(effective, "controller-driver"),
              effective.namespace_, effective.controller->namespacedRbacRules, sa);
    }
    for (const auto& s : effective.controller->sidecars) {
      if (!s.enabled) {
        continue;
      }
      const std::string name = rbacName(effective, roleName(s.component));
      if (std::find(std::begin(kSharedRoleSidecars), std::end(kSharedRoleSidecars), s.component) !=
          std::end(kSharedRoleSidecars)) {
        bindSharedRole(clusterScoped, shared, effective, s.component, sa);
      }
      Json rules = namespacedRules(s, effective);
      if (!rules.empty()) {
        addRole(clusterScoped, namespaced, effective, name, effective.namespace_, std::move(rules),
                sa);
      }
    }
  }
  secretRoles(clusterScoped, namespaced, effective);
  // spec.additionalNamespaces: a Role in each for the pods that use it.
  for (const auto& n : effective.additionalNamespaces) {
    if (n.nodeRbacRules && !n.nodeRbacRules->empty()) {
      addRole(clusterScoped, namespaced, effective, rbacName(effective, "node-driver"), n.name,
              *n.nodeRbacRules, nodeName(effective));
    }
    if (effective.controller && n.controllerRbacRules && !n.controllerRbacRules->empty()) {
      addRole(clusterScoped, namespaced, effective, rbacName(effective, "controller-driver"),
              n.name, *n.controllerRbacRules, controllerServiceAccount(effective));
    }
  }
  clusterScoped.insert(clusterScoped.end(), std::make_move_iterator(namespaced.begin()),
                       std::make_move_iterator(namespaced.end()));
  shared.insert(shared.end(), std::make_move_iterator(clusterScoped.begin()),
                std::make_move_iterator(clusterScoped.end()));
  return shared;
}

std::vector<Json> sharedObjects() {
  std::vector<Json> out;
  for (Component c : kSharedRoleSidecars) {
    out.push_back(sharedRole(c));
  }
  return out;
}

bool isShared(const Json& object) {
  // The label alone could be a user's (spec.objects, a class's labels): a shared object is also
  // a ClusterRole without the owner label, which nothing else render makes is.
  const Json& labels = api::member(api::member(object, "metadata"), "labels");
  return api::stringField(labels, api::kSharedLabel) == "true" &&
         !labels.contains(api::kOwnerLabel) && api::stringField(object, "kind") == "ClusterRole";
}

} // namespace csiop::render
