// The kinds of object a DriverDeployment's spec.objects may hold: namespaced kinds the
// operator is allowed to create (the chart's RBAC grants them), never a cluster-scoped one, so
// that a DriverDeployment cannot make the operator a cluster admin.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <csiop/api/field_error.hpp>
#include <csiop/api/types.hpp>

namespace csiop::api {

struct ObjectKind {
  std::string apiVersion; // "v1", "apps/v1", "monitoring.coreos.com/v1"
  std::string kind;       // "Deployment"
  std::string resource;   // "deployments"

  [[nodiscard]] std::string group() const;   // "" for the core group
  [[nodiscard]] std::string version() const; // "v1"
  bool operator==(const ObjectKind&) const = default;
};

// An API resource as "GROUP/VERSION/RESOURCE", or "VERSION/RESOURCE" for the core group.
struct GroupVersionResource {
  std::string group; // "" for the core group
  std::string version;
  std::string resource;
};

// The parts of such a text, or nullopt when it has fewer than two parts or an empty resource
// (their formats are the caller's to check).
std::optional<GroupVersionResource> parseGroupVersionResource(std::string_view text);

// What every operator may create: the namespaced kinds it creates for every driver anyway
// (ServiceAccount, Role, RoleBinding, DaemonSet, Deployment, StatefulSet) and its companion
// kinds (ConfigMap, Service, PodDisruptionBudget). Secrets are not among them: a Secret written
// into a DriverDeployment would be readable by everyone who can read DriverDeployments.
const std::vector<ObjectKind>& builtinObjectKinds();

// "apiVersion,Kind,resource", e.g. "monitoring.coreos.com/v1,ServiceMonitor,servicemonitors"
// (the operator's --object-kind flag). nullopt with `error` set when malformed.
std::optional<ObjectKind> parseObjectKind(std::string_view text, std::string& error);

// api::builtinObjectKinds() and the kinds `texts` name (parseObjectKind), or nullopt with
// `error` set: a malformed one, or a kind whose name another apiVersion already has (the
// operator caches each kind of child by its name).
std::optional<std::vector<ObjectKind>> objectKindsWith(const std::vector<std::string>& texts,
                                                       std::string& error);

// The kind of `object` among `allowed`, or nullptr.
const ObjectKind* findObjectKind(const std::vector<ObjectKind>& allowed, const Json& object);

// spec.objects[i] whose apiVersion and kind are not among `allowed`, each as an error that
// names the kinds this operator may create.
ErrorList checkObjectKinds(const DriverDeployment& object, const std::vector<ObjectKind>& allowed);

} // namespace csiop::api
