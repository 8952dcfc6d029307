#include <csiop/webhook/authority.hpp>

#include <set>

#include <csiop/api/json_access.hpp>
#include <csiop/render/render.hpp>

namespace csiop::webhook {
namespace {

using api::member;
using api::metadataField;
using api::stringField;

constexpr const char* kRbacGroup = "rbac.authorization.k8s.io";
constexpr std::string_view kAggregateTo = "rbac.authorization.k8s.io/aggregate-to-";

struct GroupResource {
  std::string group;
  std::string resource;
};

std::string groupOf(const std::string& apiVersion) {
  const auto slash = apiVersion.find('/');
  return slash == std::string::npos ? std::string() : apiVersion.substr(0, slash);
}

// The resource of what render makes beyond spec.objects' kinds (api::builtinObjectKinds() and
// the operator's --object-kind ones, which come with theirs).
std::optional<GroupResource> renderedResource(const std::string& group, const std::string& kind) {
  static const std::map<std::pair<std::string, std::string>, std::string> kResources = {
      {{"", "Namespace"}, "namespaces"},
      {{kRbacGroup, "ClusterRole"}, "clusterroles"},
      {{kRbacGroup, "ClusterRoleBinding"}, "clusterrolebindings"},
      {{"storage.k8s.io", "CSIDriver"}, "csidrivers"},
      {{"csi.storage.k8s.io", "CSIDriver"}, "csidrivers"},
      {{"storage.k8s.io", "StorageClass"}, "storageclasses"},
      {{"snapshot.storage.k8s.io", "VolumeSnapshotClass"}, "volumesnapshotclasses"},
  };
  const auto it = kResources.find({group, kind});
  if (it == kResources.end()) {
    return std::nullopt;
  }
  return GroupResource{group, it->second};
}

std::vector<std::string> strings(const Json& list) {
  std::vector<std::string> out;
  if (list.is_array()) {
    for (const Json& item : list) {
      if (item.is_string()) {
        out.push_back(item.get<std::string>());
      }
    }
  }
  return out;
}

bool isWorkload(const std::string& group, const std::string& kind) {
  return group == "apps" && (kind == "DaemonSet" || kind == "Deployment" || kind == "StatefulSet");
}

std::string objectName(const Json& object) {
  const std::string ns = metadataField(object, "namespace");
  return stringField(object, "kind") + " " + (ns.empty() ? "" : ns + "/") +
         metadataField(object, "name");
}

// "spec.objects[2]: " for an object of spec.objects, else "".
std::string origin(const api::DriverDeployment& dd, const Json& object) {
  const auto& objects = dd.spec.objects;
  if (!objects || !objects->is_array()) {
    return "";
  }
  for (std::size_t i = 0; i < objects->size(); ++i) {
    const Json& own = (*objects)[i];
    if (stringField(own, "kind") == stringField(object, "kind") &&
        metadataField(own, "name") == metadataField(object, "name") &&
        (metadataField(own, "namespace").empty() ||
         metadataField(own, "namespace") == metadataField(object, "namespace"))) {
      return "spec.objects[" + std::to_string(i) + "]: ";
    }
  }
  return "";
}

Access resourceAccess(std::string verb, std::string group, std::string resource,
                      std::string namespace_, std::string name = {}) {
  Access a;
  a.verb = std::move(verb);
  a.group = std::move(group);
  a.resource = std::move(resource);
  a.namespace_ = std::move(namespace_);
  a.name = std::move(name);
  return a;
}

} // namespace

UserInfo userInfoOf(const Json& request) {
  const Json& info = member(request, "userInfo");
  UserInfo user;
  user.username = stringField(info, "username");
  user.uid = stringField(info, "uid");
  user.groups = strings(member(info, "groups"));
  if (const Json& extra = member(info, "extra"); extra.is_object()) {
    for (const auto& [key, values] : extra.items()) {
      user.extra[key] = strings(values);
    }
  }
  return user;
}

std::string Access::describe() const {
  if (!path.empty()) {
    return verb + " " + path;
  }
  std::string out = verb + " " + resource;
  if (!subresource.empty()) {
    out += "/" + subresource;
  }
  if (!group.empty()) {
    out += "." + group;
  }
  if (!name.empty()) {
    out += " \"" + name + "\"";
  }
  out += namespace_.empty() ? " cluster-wide" : " in namespace " + namespace_;
  return out;
}

Json Access::resourceAttributes() const {
  if (!path.empty()) {
    return Json{{"nonResourceAttributes", {{"path", path}, {"verb", verb}}}};
  }
  Json attributes = {{"verb", verb}, {"group", group}, {"resource", resource}};
  if (!subresource.empty()) {
    attributes["subresource"] = subresource;
  }
  if (!namespace_.empty()) {
    attributes["namespace"] = namespace_;
  }
  if (!name.empty()) {
    attributes["name"] = name;
  }
  return Json{{"resourceAttributes", std::move(attributes)}};
}

Access everything() {
  return resourceAccess("*", "*", "*", "");
}

std::vector<Access> accessesOf(const Json& rules, const std::string& namespace_) {
  std::set<Access> out;
  if (!rules.is_array()) {
    return {};
  }
  for (const Json& rule : rules) {
    const auto verbs = strings(member(rule, "verbs"));
    for (const std::string& path : strings(member(rule, "nonResourceURLs"))) {
      for (const std::string& verb : verbs) {
        Access a;
        a.verb = verb;
        a.path = path;
        out.insert(std::move(a));
      }
    }
    auto names = strings(member(rule, "resourceNames"));
    if (names.empty()) {
      names.emplace_back();
    }
    for (const std::string& group : strings(member(rule, "apiGroups"))) {
      for (const std::string& resource : strings(member(rule, "resources"))) {
        const auto slash = resource.find('/');
        for (const std::string& verb : verbs) {
          for (const std::string& name : names) {
            Access a = resourceAccess(verb, group, resource.substr(0, slash), namespace_, name);
            if (slash != std::string::npos) {
              a.subresource = resource.substr(slash + 1);
            }
            out.insert(std::move(a));
          }
        }
      }
    }
  }
  return {out.begin(), out.end()};
}

std::vector<Requirement> requirements(const api::DriverDeployment& dd,
                                      const std::vector<Json>& rendered,
                                      const std::vector<api::ObjectKind>& objectKinds) {
  // The roles this DriverDeployment renders: binding one of them needs what the role grants,
  // which its own requirement already asks for.
  std::set<RoleRef> ownRoles;
  for (const Json& object : rendered) {
    const std::string kind = stringField(object, "kind");
    if (kind == "Role" || kind == "ClusterRole") {
      ownRoles.insert(RoleRef{kind, kind == "Role" ? metadataField(object, "namespace") : "",
                              metadataField(object, "name")});
    }
  }
  std::vector<Requirement> out;
  for (const Json& object : rendered) {
    const std::string kind = stringField(object, "kind");
    const std::string group = groupOf(stringField(object, "apiVersion"));
    const std::string ns = metadataField(object, "namespace");
    const std::string name = metadataField(object, "name");
    const std::string what = origin(dd, object) + objectName(object);
    std::optional<GroupResource> resource = renderedResource(group, kind);
    if (const api::ObjectKind* own = api::findObjectKind(objectKinds, object)) {
      resource = GroupResource{own->group(), own->resource};
    } else if (const api::ObjectKind* builtin =
                   api::findObjectKind(api::builtinObjectKinds(), object)) {
      resource = GroupResource{builtin->group(), builtin->resource};
    }
    if (render::isShared(object)) {
      // A sidecar's ClusterRole of its upstream rules, kept by the operator for every driver:
      // the author creates none, but this driver's binding grants its rules to its
      // ServiceAccount, as binding it oneself would.
      out.push_back(Requirement{what + " (shared by every driver) is bound: it grants its rules",
                                accessesOf(member(object, "rules"), ""),
                                resourceAccess("bind", kRbacGroup, "clusterroles", "", name),
                                {}});
      continue;
    }
    if (!resource) {
      // render makes nothing else; should a kind be added without a resource here, only one who
      // may do everything may have it made.
      out.push_back(Requirement{what + " (a kind the webhook has no resource for)",
                                {everything()},
                                std::nullopt,
                                std::nullopt});
      continue;
    }
    out.push_back(Requirement{
        what, {resourceAccess("create", resource->group, resource->resource, ns)}, {}, {}});
    if (isWorkload(group, kind)) {
      const Json& spec = member(member(member(object, "spec"), "template"), "spec");
      std::string account = stringField(spec, "serviceAccountName");
      out.push_back(Requirement{what + " runs pods" +
                                    (account.empty() ? "" : " as ServiceAccount " + account),
                                {resourceAccess("create", "", "pods", ns)},
                                {},
                                {}});
    }
    if (kind == "Role" || kind == "ClusterRole") {
      out.push_back(Requirement{what + " grants its rules",
                                accessesOf(member(object, "rules"), ns),
                                resourceAccess("escalate", kRbacGroup,
                                               kind == "Role" ? "roles" : "clusterroles", ns, name),
                                {}});
      if (const Json& labels = member(member(object, "metadata"), "labels"); labels.is_object()) {
        for (const auto& [key, value] : labels.items()) {
          if (key.starts_with(kAggregateTo) && value == "true") {
            const std::string into = key.substr(kAggregateTo.size());
            out.push_back(Requirement{
                what + " is aggregated into ClusterRole " + into + " (its holders gain its rules)",
                {resourceAccess("update", kRbacGroup, "clusterroles", "", into)},
                {},
                {}});
          }
        }
      }
    }
    if (kind == "RoleBinding" || kind == "ClusterRoleBinding") {
      const Json& ref = member(object, "roleRef");
      RoleRef role{stringField(ref, "kind"), stringField(ref, "kind") == "Role" ? ns : "",
                   stringField(ref, "name")};
      // A RoleBinding grants a ClusterRole's rules in its own namespace only.
      const std::string where = kind == "RoleBinding" ? ns : "";
      if (ownRoles.contains(role)) {
        continue;
      }
      role.namespace_ = where;
      out.push_back(Requirement{what + " binds " + role.kind + " " + role.name,
                                {},
                                resourceAccess("bind", kRbacGroup,
                                               role.kind == "Role" ? "roles" : "clusterroles",
                                               where, role.name),
                                role});
    }
  }
  return out;
}

} // namespace csiop::webhook
