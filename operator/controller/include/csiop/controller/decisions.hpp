// The reconciler's choices that need no I/O: who owns the driver name, what to
// do with the CSIDriver object, and which children to prune.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/annotations.hpp>
#include <csiop/api/types.hpp>
#include <csiop/render/render.hpp>

namespace csiop::controller {

using api::Json;

// The CSIDriver object is the authority on who owns a driver name: the first
// DriverDeployment to create it (its uid in the csiop.dev/owner-uid annotation)
// owns the name, race-free even when the webhook is down or two API servers
// admit at once, because the create of a cluster-scoped name can succeed once.
struct CSIDriverDecision {
  enum class Action {
    Create,   // absent: create it (a create, never an apply, so two owners cannot both win)
    Keep,     // ours and already as desired: no write
    Apply,    // ours, mutable fields differ: server-side apply
    Recreate, // ours, an immutable field differs: delete, then create
    Conflict, // someone else's: touch nothing, report
  };
  Action action = Action::Keep;
  std::string detail; // for Recreate: which fields; for Conflict: who owns it
};

// adopt: the DriverDeployment asks to take over a CSIDriver nobody manages
// (api::kAdoptAnnotation); one managed by another DriverDeployment stays a conflict.
CSIDriverDecision decideCSIDriver(const Json* live, const Json& desired,
                                  const std::string& ownerUid, bool adopt = false);

// Identity of an object: apiVersion's group, kind, namespace, name.
struct ObjectKey {
  std::string group;
  std::string kind;
  std::string namespace_;
  std::string name;

  auto operator<=>(const ObjectKey&) const = default;
  [[nodiscard]] std::string str() const; // "DaemonSet csi-x/x-node"
};
ObjectKey keyOf(const Json& object);

// Whether `object` belongs to the DriverDeployment with `ownerUid`: an owner
// reference (or, for the CSIDriver, the owner annotation) names that uid. A
// label alone is not ownership: labels are easy to copy.
bool ownedBy(const Json& object, const std::string& ownerUid);

// Whether `object` is a child the operator made for the DriverDeployment `ownerUid`: owned by
// it (ownedBy) and written by one of the operator's field managers `managers`. What only the
// operator may delete. Another client's copy of a child (a test suite copying a StorageClass,
// `kubectl get -o yaml | kubectl create`) keeps its labels and owner references, even the
// managedFields it was sent with, but the API server gives every field of a create to its
// creator, so the copy's managedFields name that client alone: it is not the operator's.
bool madeFor(const Json& object, const std::string& ownerUid,
             const std::vector<std::string>& managers);

// Whether metadata.finalizers of `object` lists `finalizer`.
bool hasFinalizer(const Json& object, const char* finalizer);

// Live objects (found by the owner label) that the desired set no longer has
// and that the operator made for this owner (madeFor); never a Namespace.
// Order: workloads first, RBAC after, CSIDriver last. `live` points into the caches; what is
// to be pruned is copied (usually nothing: the live children are not).
std::vector<Json> toPrune(const std::vector<const Json*>& live, const std::vector<Json>& desired,
                          const std::string& ownerUid, const std::vector<std::string>& managers);

// Order in which to delete everything on DriverDeployment deletion: the same
// as pruning everything, so the CSIDriver goes last.
void sortForDeletion(std::vector<Json>& objects);

using api::Flag;
using api::flagAnnotation;
using api::invalidFlagMessage;

// Whether the operator manages a child: csiop.dev/unmanaged absent or "false".
// An unknown value counts as unmanaged (nothing is overwritten) and is reported.
inline bool managed(const Json& child) {
  return flagAnnotation(child, api::kUnmanagedAnnotation) == Flag::No;
}
api::UnmanagedObject unmanagedEntry(const Json& child);

// The order children are applied in; those of one wave go at the same time.
// 0: ServiceAccounts, (Cluster)Roles, StorageClasses and the companion objects
// (with the CSIDriver); 1: the bindings (a binding's role must exist unless the
// binder holds `bind`). The workloads go with wave 0 when the ServiceAccounts
// exist already (`serviceAccountsExist`: applied with the driver name's claim),
// else with wave 1: their pods are refused until their ServiceAccount exists,
// and the controllers would record a failure each time. The workloads do not
// wait for the bindings, which are there one round trip later, before any
// container of theirs has started.
int applyWave(const std::string& kind, bool serviceAccountsExist);
// DaemonSet, Deployment or StatefulSet.
bool isWorkload(const std::string& kind);

} // namespace csiop::controller
