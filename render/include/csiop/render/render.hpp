// render: DriverDeployment -> every Kubernetes object a working CSI driver
// needs. Pure and deterministic: the same input gives byte-identical output,
// with no I/O and no clock. The reconciler applies exactly this list, and
// `csi-operator render` prints it.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/annotations.hpp>
#include <csiop/api/types.hpp>

namespace csiop::render {

using api::Json;

// What the cluster is like, as far as rendering cares (from discovery).
struct ClusterFacts {
  // false: the cluster predates storage.k8s.io/v1 CSIDriver, so the driver is
  // registered through the csidrivers.csi.storage.k8s.io (v1alpha1) CRD.
  bool csiDriverV1 = true;
};

// Objects in apply order: Namespace, CSIDriver, ServiceAccounts, RBAC, ConfigMaps,
// node plugin DaemonSet (with placement SinglePod, StatefulSet), controller workload and its
// PodDisruptionBudget, Services, StorageClasses, VolumeSnapshotClasses, then spec.objects. The
// input must be valid (api::validate); render does not re-check it.
std::vector<Json> render(const api::DriverDeployment& object, const ClusterFacts& facts = {});

// The labels and annotations the rendered objects carry (kOwnerLabel and the rest) are the
// API's: csiop/api/annotations.hpp.
std::string ownerSelector(const std::string& driverDeploymentName);

// The objects the operator keeps for every driver at once, labelled api::kSharedLabel: the
// ClusterRole of each sidecar that calls the API, with its upstream rules ("csiop:<sidecar>",
// no owner). render() puts those a driver's bindings name first among its RBAC; the operator
// applies one when it is missing or differs and never deletes it (it outlives any one driver).
std::vector<Json> sharedObjects();
bool isShared(const Json& object);

// A rendered workload is a node plugin's (Linux or Windows), by its component label: a DaemonSet,
// or with placement SinglePod a StatefulSet, as the controller's may be.
bool isNodePlugin(const Json& workload);

} // namespace csiop::render
