// Which API resource a request is about, and the resources the operator manages.
#pragma once

#include <string>
#include <utility>

namespace csiop::kube {

struct ResourceRef {
  // Not an aggregate, so that a ResourceRef{...} temporary inside a co_await is safe with
  // GCC 12 (see "Options" in client.hpp).
  ResourceRef() = default;
  ResourceRef(std::string group_, std::string version_, std::string resource_, std::string kind_,
              bool namespaced_)
      : group(std::move(group_)), version(std::move(version_)), resource(std::move(resource_)),
        kind(std::move(kind_)), namespaced(namespaced_) {}

  std::string group = {};    // "" for the core group
  std::string version = {};  // "v1"
  std::string resource = {}; // plural, lower case: "configmaps"
  std::string kind = {};     // "ConfigMap"
  bool namespaced = true;

  std::string apiVersion() const { return group.empty() ? version : group + "/" + version; }
  bool operator==(const ResourceRef&) const = default;
};

namespace resources {
// core/v1
inline const ResourceRef namespaces{"", "v1", "namespaces", "Namespace", false};
inline const ResourceRef serviceaccounts{"", "v1", "serviceaccounts", "ServiceAccount", true};
inline const ResourceRef configmaps{"", "v1", "configmaps", "ConfigMap", true};
inline const ResourceRef secrets{"", "v1", "secrets", "Secret", true};
inline const ResourceRef events{"", "v1", "events", "Event", true};
inline const ResourceRef nodes{"", "v1", "nodes", "Node", false};
inline const ResourceRef pods{"", "v1", "pods", "Pod", true};
inline const ResourceRef persistentvolumes{"", "v1", "persistentvolumes", "PersistentVolume",
                                           false};
inline const ResourceRef persistentvolumeclaims{"", "v1", "persistentvolumeclaims",
                                                "PersistentVolumeClaim", true};
inline const ResourceRef services{"", "v1", "services", "Service", true};
// policy/v1
inline const ResourceRef poddisruptionbudgets{"policy", "v1", "poddisruptionbudgets",
                                              "PodDisruptionBudget", true};
// scheduling.k8s.io/v1
inline const ResourceRef priorityclasses{"scheduling.k8s.io", "v1", "priorityclasses",
                                         "PriorityClass", false};
// snapshot.storage.k8s.io/v1 (CRDs of external-snapshotter: served only where installed)
inline const ResourceRef volumesnapshotclasses{
    "snapshot.storage.k8s.io", "v1", "volumesnapshotclasses", "VolumeSnapshotClass", false};
// apps/v1
inline const ResourceRef daemonsets{"apps", "v1", "daemonsets", "DaemonSet", true};
inline const ResourceRef deployments{"apps", "v1", "deployments", "Deployment", true};
inline const ResourceRef statefulsets{"apps", "v1", "statefulsets", "StatefulSet", true};
inline const ResourceRef replicasets{"apps", "v1", "replicasets", "ReplicaSet", true};
inline const ResourceRef controllerrevisions{"apps", "v1", "controllerrevisions",
                                             "ControllerRevision", true};
// rbac.authorization.k8s.io/v1
inline const ResourceRef clusterroles{"rbac.authorization.k8s.io", "v1", "clusterroles",
                                      "ClusterRole", false};
inline const ResourceRef clusterrolebindings{"rbac.authorization.k8s.io", "v1",
                                             "clusterrolebindings", "ClusterRoleBinding", false};
inline const ResourceRef roles{"rbac.authorization.k8s.io", "v1", "roles", "Role", true};
inline const ResourceRef rolebindings{"rbac.authorization.k8s.io", "v1", "rolebindings",
                                      "RoleBinding", true};
// storage.k8s.io/v1
inline const ResourceRef csidrivers{"storage.k8s.io", "v1", "csidrivers", "CSIDriver", false};
inline const ResourceRef csinodes{"storage.k8s.io", "v1", "csinodes", "CSINode", false};
inline const ResourceRef storageclasses{"storage.k8s.io", "v1", "storageclasses", "StorageClass",
                                        false};
inline const ResourceRef volumeattachments{"storage.k8s.io", "v1", "volumeattachments",
                                           "VolumeAttachment", false};
// csi.storage.k8s.io/v1alpha1: the CSIDriver CRD of Kubernetes 1.12-1.13
inline const ResourceRef legacyCsidrivers{"csi.storage.k8s.io", "v1alpha1", "csidrivers",
                                          "CSIDriver", false};
// apiextensions.k8s.io/v1
inline const ResourceRef customresourcedefinitions{
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};
// coordination.k8s.io/v1
inline const ResourceRef leases{"coordination.k8s.io", "v1", "leases", "Lease", true};
// csiop.dev/v1alpha1 (the operator's own CRD; cluster-scoped)
inline const ResourceRef driverdeployments{"csiop.dev", "v1alpha1", "driverdeployments",
                                           "DriverDeployment", false};
} // namespace resources

} // namespace csiop::kube
