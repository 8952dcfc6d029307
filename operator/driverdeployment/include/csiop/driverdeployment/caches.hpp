// The informer caches the reconciler reads: every DriverDeployment, every
// CSIDriver (foreign ones decide name conflicts), every CSINode (registration),
// every Namespace (created if missing, never owned), the children of each
// kind, selected by the owner label, and the pods of the workloads (the owner
// label too: the status says why a pod does not run). For the volumes of each
// driver (deletion protection): every PersistentVolume and VolumeAttachment, and,
// only while a decision needs them, the other pods that have volumes
// (podsWithVolumes, on demand). Pods are kept as typed entries (CachedPod).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <csiop/api/object_kinds.hpp>
#include <csiop/driverdeployment/pod_lookups.hpp>
#include <csiop/driverdeployment/typed_caches.hpp>
#include <csiop/driverdeployment/volume_usage.hpp>
#include <csiop/runtime/informer.hpp>
#include <csiop/runtime/on_demand_cache.hpp>

namespace csiop::driverdeployment {

using runtime::Informer;

// Indexes of the caches (Informer::byIndex), so that a reconcile reads what concerns its
// DriverDeployment without walking every cached object: the per-event work stays flat as
// nodes, pods and DriverDeployments grow.
// - kByOwner: the owner label's value (the DriverDeployment's name), on every cache selected
//   by it (children, pods, controllerRevisions) and on the CSIDrivers;
// - kByDriver: spec.driverName of a DriverDeployment; each driver registered in a CSINode; the
//   attacher of a VolumeAttachment; the driver a volume Event concerns;
// - kUsesVolumes: "true" on the pods that have a volume the volume decisions read;
// - kByTaint: each taint key of a Node; spec.startupTaint.key of a DriverDeployment.
inline constexpr const char* kByOwner = "owner";
inline constexpr const char* kByTaint = "taint";
inline constexpr const char* kByDriver = "driver";
inline constexpr const char* kUsesVolumes = "volumes";
// How long the pods kept on demand (the workloads', the others with volumes) are kept after the
// last decision that needed them; a decision that waits on them (a deletion, a rollout, a stall
// to explain) asks again sooner than that.
inline constexpr std::chrono::seconds kOnDemandPodsIdle{120};
// kByWorkload: on the FailedCreate Events, "<kind>/<namespace>/<name>" of the involved object
// (pod_creation.hpp).
inline constexpr const char* kByWorkload = "workload";

// The owner label's value: the DriverDeployment an object was made for ("" : none).
std::string ownerLabelOf(const Json& object);
// The pod caches' index functions: kByOwner (the pod's owner label) and kUsesVolumes.
std::vector<std::string> podOwner(const CachedPod& pod);
std::vector<std::string> volumeUserIndex(const CachedPod& pod);

// What the many-object caches build of each object as it is parsed (kube/field_mask.hpp): what
// their transforms and entries read (a CachedPod's fields, a Node's name, annotation and
// unschedulable, a CSINode's drivers) and nothing else.
kube::FieldMask podFields();
kube::FieldMask nodeFields();
kube::FieldMask csiNodeFields();
kube::FieldMask failedCreateFields();
kube::FieldMask volumeEventFields();
// What the children's caches build: a child's metadata (but the field sets of its managedFields
// entries, a third of a workload, which the store cuts to who manages what anyway:
// runtime::managerSummary) and status as trees, every other member as its text (a
// CachedChild's head and body).
kube::FieldMask childFields();
// The transform of the Node cache.
bool cutDownNode(Json& node);

struct Caches {
  // csiDriverResource: storage.k8s.io/v1 csidrivers, or the legacy CRD's. `objectKinds`: the
  // kinds spec.objects may hold beyond api::builtinObjectKinds() (the --object-kind flags);
  // each gets a cache of its own, and may be a CRD that is not installed.
  Caches(kube::Client& client, const kube::ResourceRef& csiDriverResource,
         const std::vector<api::ObjectKind>& objectKinds = {});

  Informer driverDeployments;
  Informer csiDrivers;
  CSINodeInformer csiNodes; // the names of the drivers registered
  Informer namespaces;
  // The workloads' pods (the owner label, through the pod templates; the API server selects
  // them, so nobody else's pods reach the operator through this watch); index kByOwner, and
  // kUsesVolumes for those with volumes. Never written. Kept only while a decision needs them
  // (podsOnDemand, pod_reads.hpp): the workloads' status counts them otherwise.
  PodInformer pods;
  runtime::OnDemandCache podsOnDemand;
  // Every other pod with a claim, generic ephemeral or CSI volume (index kUsesVolumes), kept
  // only while a decision needs them (podsWithVolumesOnDemand): a deletion's check for inline
  // volumes, a node plugin rollout that waits for volumes, the status of a failing mount, the
  // webhook's review of a DELETE. Listing them means hearing every pod of the cluster, so they
  // are not heard otherwise.
  PodInformer podsWithVolumes;
  runtime::OnDemandCache podsWithVolumesOnDemand;
  // The pods a volume Event names that no cache holds, when their volume may be an inline one
  // of a managed driver: a GET each, bounded (pod_lookups.hpp).
  PodLookups podLookups;
  Informer persistentVolumes;
  Informer volumeAttachments;
  // For the WhenVolumesUnused node plugin rollout and spec.startupTaint: every Node, cut down to
  // its name, whether it is cordoned, the operator's annotation and its taints (index kByTaint);
  // the node DaemonSets' revisions (owner label), without their data.
  Informer nodes;
  Informer controllerRevisions;
  // The Warning Events of reason FailedCreate, every namespace, filtered by the API server (the
  // cluster's other Events cost nothing here), cut down to their involved object, message and
  // times; index kByWorkload. Why a DaemonSet or StatefulSet has fewer pods than it wants.
  Informer failedCreates;
  // The Warning Events of the driver's volumes failing (volume_health.hpp), one watch per reason
  // the API server filters (ProvisioningFailed, FailedAttachVolume, FailedMount: the cluster's
  // other Events, and these reasons' Events of other objects than claims and pods, cost nothing
  // here beyond their own), cut down like failedCreates; index kByDriver: the driver of the
  // external-provisioner that wrote it, or of the volume it names (a PersistentVolume's
  // spec.csi.driver, or an inline volume of the pod), "" when not known yet (a later sighting
  // of the Event files it again).
  Informer provisioningFailures;
  Informer attachFailures;
  Informer mountFailures;
  // The objects the operator keeps for every driver at once (api::kSharedLabel: each sidecar's
  // ClusterRole), applied again when one is deleted or changed.
  Informer sharedRoles;
  // One per child kind: the kinds every driver gets, the companion kinds (ConfigMap, Service,
  // PodDisruptionBudget, VolumeSnapshotClass: served only where its CRD is installed), and
  // those of `objectKinds`.
  std::vector<std::unique_ptr<ChildInformer>> children;

  // Every kind spec.objects may hold here: api::builtinObjectKinds() and `objectKinds`.
  const std::vector<api::ObjectKind>& objectKinds() const { return objectKinds_; }
  // The cache of a child kind ("DaemonSet"), or nullptr.
  ChildInformer* child(const std::string& kind);
  // The resource of a kind the operator writes (children, CSIDriver, Namespace), or nullptr.
  const kube::ResourceRef* resourceOf(const std::string& kind);
  // Every cache run from the start (to run, stop and measure), and those of JSON trees (all but
  // CSINodes and the children). The pods are run on demand (onDemand()).
  std::vector<runtime::RunnableCache*> all();
  std::vector<runtime::OnDemandCache*> onDemand() {
    return {&podsOnDemand, &podsWithVolumesOnDemand};
  }
  // Every cache that holds pods (to measure).
  std::vector<runtime::RunnableCache*> podCaches() { return {&pods, &podsWithVolumes}; }
  std::vector<Informer*> objectCaches();
  // The DriverDeployments of driver `driverName` (one, unless a conflict is being reported).
  std::vector<const Json*> driverDeploymentsOf(const std::string& driverName) const;
  // How many nodes list driver `driverName` in their CSINode.
  std::size_t nodesRegistering(const std::string& driverName) const;
  // What of driver `driverName` is in use (deletion protection; the reconciler and the webhook).
  VolumeUsage volumesOf(const std::string& driverName,
                        const std::optional<SmokeTestOwner>& owner = std::nullopt) const;
  // The driver a volume Event concerns (the index kByDriver of the volume Events).
  std::string driverOfVolumeEvent(const Json& event) const;
  // The pods with a claim, generic ephemeral or CSI volume: the workloads' and, while it runs,
  // podsWithVolumes'.
  std::vector<const CachedPod*> volumeUsers() const;
  // Runs both pod caches volumeUsers() reads until they have synced, at most `timeout` each:
  // whether they have.
  boost::asio::awaitable<bool> demandVolumeUsers(runtime::Clock::Duration timeout);
  // A cached pod (a workload's, one with volumes while they are kept, or one looked up for a
  // volume Event), or nullptr.
  const CachedPod* pod(const std::string& ns, const std::string& name) const;
  // Whether the CSIDriver `driverName` lists the Ephemeral lifecycle mode: only then may a pod
  // have an inline volume of it (the kubelet mounts none for a driver that does not).
  bool servesInlineVolumes(const std::string& driverName) const;
  // Whether a managed driver (a DriverDeployment's) serves inline volumes.
  bool anyManagedDriverServesInlineVolumes() const;
  bool synced();

private:
  // A volume Event whose driver is not known: if it is a pod's that may be an inline volume of a
  // managed driver, the pod is looked up (the next sighting finds its driver).
  void wantPodOfVolumeEvent(const Json& event);

  std::vector<api::ObjectKind> objectKinds_;
};

} // namespace csiop::driverdeployment
