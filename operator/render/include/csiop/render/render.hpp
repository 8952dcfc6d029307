// render: DriverDeployment -> every Kubernetes object a working CSI driver
// needs. Pure and deterministic: the same input gives byte-identical output,
// with no I/O and no clock. The reconciler applies exactly this list, and
// `csi-operator render` prints it.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::render {

using api::Json;

// What the cluster is like, as far as rendering cares (from discovery).
struct ClusterFacts {
  // false: the cluster predates storage.k8s.io/v1 CSIDriver, so the driver is
  // registered through the csidrivers.csi.storage.k8s.io (v1alpha1) CRD.
  bool csiDriverV1 = true;
};

// Objects in apply order: Namespace, CSIDriver, ServiceAccounts, RBAC,
// DaemonSet, controller workload, StorageClasses. The input must be valid
// (api::validate); render does not re-check it.
std::vector<Json> render(const api::DriverDeployment& object, const ClusterFacts& facts = {});

// Labels that every rendered object carries, and the selector that finds all
// objects owned by one DriverDeployment (for pruning).
inline constexpr const char* kOwnerLabel = "csiop.dev/driverdeployment";
inline constexpr const char* kOwnerUidAnnotation = "csiop.dev/owner-uid";
inline constexpr const char* kManagedBy = "csi-operator";
// On a DriverDeployment: "true" lets it take over a CSIDriver of its driver
// name that csi-operator does not manage (installed by hand or another tool).
inline constexpr const char* kAdoptAnnotation = "csiop.dev/adopt-csidriver";
// On a DriverDeployment: "true" deletes it (and its driver) even while volumes
// of the driver are in use.
inline constexpr const char* kForceDeleteAnnotation = "csiop.dev/force-delete";
// On a child: "true" makes the operator leave that object alone (no apply, no
// prune; orphaned when the DriverDeployment goes) until it is removed.
inline constexpr const char* kUnmanagedAnnotation = "csiop.dev/unmanaged";

std::string ownerSelector(const std::string& driverDeploymentName);

} // namespace csiop::render
