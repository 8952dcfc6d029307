// What a DriverDeployment makes the operator do, as the permissions its author must hold
// themselves. The operator holds broad rights (it creates workloads, roles and bindings for
// every driver); without this check, whoever may create a DriverDeployment would borrow them
// (a confused deputy): a RoleBinding in kube-system through spec.objects, workloads in any
// namespace running as that namespace's ServiceAccounts, `get secrets` aggregated into
// Kubernetes' view role. Pure: the objects `render` makes in, requirements out; the webhook
// asks the API server (SubjectAccessReviews for the requesting user) whether each holds.
//
// The rules mirror the API server's own for a user doing the same by hand:
// - every object: `create` on its resource, in its namespace (a Namespace: `create
//   namespaces`);
// - a workload: also `create pods` in its namespace (whoever may create pods there may run them
//   as any ServiceAccount of the namespace, the API server's rule);
// - a Role or ClusterRole: `escalate` on it, or every permission it grants (RBAC escalation
//   prevention), in its namespace or cluster-wide;
// - a ClusterRole aggregated into another (rbac.authorization.k8s.io/aggregate-to-X): also
//   `update` on ClusterRole X, whose holders gain its rules;
// - a binding: `bind` on the role it references, or every permission of that role (the
//   webhook reads the role when it is not one this DriverDeployment renders).
// A user allowed everything (`*` on `*`, cluster-wide: a cluster admin) passes at once.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <csiop/api/object_kinds.hpp>
#include <csiop/api/types.hpp>

namespace csiop::webhook {

using api::Json;

// The requesting user, from an AdmissionRequest's userInfo.
struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
  auto operator<=>(const UserInfo&) const = default;
};

UserInfo userInfoOf(const Json& request);

// One SubjectAccessReview's question: a verb on a resource (or a non-resource URL).
struct Access {
  std::string verb;
  std::string group; // "" for the core group
  std::string resource;
  std::string subresource;
  std::string namespace_; // "" : cluster-wide
  std::string name;       // "" : any
  std::string path;       // a non-resource URL ("/healthz"); then only verb counts
  auto operator<=>(const Access&) const = default;
  // As the API server words it: `create rolebindings.rbac.authorization.k8s.io in kube-system`.
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] Json resourceAttributes() const; // SubjectAccessReview spec fields
};

// The role a binding refers to.
struct RoleRef {
  std::string kind;       // Role | ClusterRole
  std::string namespace_; // of the binding, for a Role (and where a ClusterRole's rules count)
  std::string name;
  auto operator<=>(const RoleRef&) const = default;
};

// One thing the author must be able to do. Held when `shortcut` is allowed, or else when every
// access of `allOf` is (and, with `rulesOf`, every permission of that role, read live).
struct Requirement {
  std::string why; // "spec.objects[0]: RoleBinding kube-system/x binds ClusterRole admin"
  std::vector<Access> allOf;
  std::optional<Access> shortcut;
  std::optional<RoleRef> rulesOf;
};

// What the author must hold for the operator to make `rendered` (render's output for `dd`).
// `objectKinds`: the kinds spec.objects may hold (their resources).
std::vector<Requirement> requirements(const api::DriverDeployment& dd,
                                      const std::vector<Json>& rendered,
                                      const std::vector<api::ObjectKind>& objectKinds);

// The accesses a role's rules grant, where the role's grant counts (`namespace_`; "" for a
// ClusterRole bound cluster-wide). Wildcards stay wildcards (a SubjectAccessReview takes them).
std::vector<Access> accessesOf(const Json& rules, const std::string& namespace_);

// `*` on `*` cluster-wide: everything a cluster admin may do.
Access everything();

} // namespace csiop::webhook
