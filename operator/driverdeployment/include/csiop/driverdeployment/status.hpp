// The DriverDeployment's status, computed from what the reconcile observed.
// Pure: the caller passes the time, so a status that did not change compares
// equal and causes no write.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <csiop/api/types.hpp>
#include <csiop/driverdeployment/volume_health.hpp>

namespace csiop::driverdeployment {

namespace condition {
inline constexpr const char* kReady = "Ready";
inline constexpr const char* kProgressing = "Progressing";
inline constexpr const char* kDegraded = "Degraded";
inline constexpr const char* kDriverNameConflict = "DriverNameConflict";
inline constexpr const char* kCSIDriverRecreated = "CSIDriverRecreated";
inline constexpr const char* kPaused = "Paused";
inline constexpr const char* kDeletionBlocked = "DeletionBlocked";
inline constexpr const char* kRolloutFailed = "RolloutFailed";
inline constexpr const char* kOperatorUpdateHeld = "OperatorUpdateHeld";
inline constexpr const char* kVolumesFailing = "VolumesFailing";
inline constexpr const char* kApiWarnings = "APIWarnings";
} // namespace condition

// What a reconcile found.
struct Observed {
  std::int64_t generation = 0;
  // The driver name is held by someone else: who, for the message. Nothing
  // else is applied while this is set.
  std::optional<std::string> conflictWith;
  // Errors applying children (one line each); empty when all applied.
  std::vector<std::string> applyErrors;
  // What the API server warned of when it took the children's last writes ("Kind ns/name:
  // text": a field it dropped or did not know, a deprecated API): the APIWarnings condition.
  std::vector<std::string> apiWarnings;
  // The node DaemonSet's status (absent: not created yet).
  struct Workload {
    bool observedCurrent = false; // status.observedGeneration == metadata.generation
    std::int32_t desired = 0;
    std::int32_t updated = 0;
    std::int32_t ready = 0;
  };
  std::optional<Workload> nodes;
  // updateStrategy WhenVolumesUnused or a verified rollout: the operator's own rollout of the
  // node plugin.
  struct NodeUpdate {
    std::int32_t updated = 0;  // plugin pods of the current revision
    std::int32_t outdated = 0; // plugin pods of an older one
    std::vector<api::NodeWaiting> waiting;
  };
  std::optional<NodeUpdate> nodeUpdate;
  // spec.rollout type Verified: each node plugin's rollout (status.rollout).
  std::optional<api::RolloutsStatus> rollout;
  std::optional<Workload> controller; // absent for node-only drivers or not created yet
  bool hasController = false;         // the spec wants a controller workload
  std::int32_t registered = 0;        // CSINodes that list the driver
  // Nodes where the plugin runs and the driver is not registered, with the reason and the
  // evidence (registration_problems.hpp), sorted by node: status.nodes.waiting, and the
  // RegistrationFailing condition.
  std::vector<api::NodeWaiting> unregistered;
  // spec.startupTaint: the nodes that still carry it (the driver not registered there yet).
  std::optional<std::int32_t> held;
  // Workloads that cannot create their pods, and why (pod_creation.hpp): one line each.
  std::vector<std::string> podCreationFailures;
  // The driver's volumes that fail (volume_health.hpp); nullopt when not looked at.
  std::optional<VolumeHealth> volumeHealth;
  // Why pods of the node plugin or controller do not run (podProblems()): an
  // image that cannot be pulled, a crash loop, an unschedulable pod.
  std::vector<std::string> podProblems;
  // Set when this reconcile deleted and recreated the CSIDriver because an
  // immutable field changed (the message says which).
  std::optional<std::string> csiDriverRecreated;
  // spec.paused: nothing was written for the DriverDeployment.
  bool paused = false;
  // metadata.deletionTimestamp is set.
  bool deleting = false;
  // The deletion waits for these volumes of the driver (describe(VolumeUsage)).
  std::optional<std::string> deletionBlocked;
  // Children left alone for csiop.dev/unmanaged.
  std::vector<api::UnmanagedObject> unmanaged;
  // Annotations with values the operator does not understand (one line each).
  std::vector<std::string> annotationProblems;
  // Referenced ConfigMaps and Secrets that do not exist or cannot be read (one line each).
  std::vector<std::string> configProblems;
  // APIs and PriorityClasses the driver needs that the cluster lacks (one line each).
  std::vector<std::string> missingPrerequisites;
  // Each workload as last written (status.workloads).
  std::vector<api::WorkloadRendering> workloads;
  // spec.operatorUpdates Manual: what the running operator would change in the workloads on its
  // own account, and holds (the condition's message); unset when nothing is held.
  std::optional<std::string> operatorUpdateHeld;
};

// A new status from the observation, carrying over lastTransitionTime of
// conditions whose status did not change (metav1 semantics). `now` is RFC 3339.
api::DriverDeploymentStatus
computeStatus(const Observed& observed, const std::optional<api::DriverDeploymentStatus>& previous,
              const std::string& now);

// The status of a pass that observed nothing but the DriverDeployment itself: the previous
// status, observed at this generation, with the Paused and DeletionBlocked conditions.
// pausedStatus: spec.paused (nothing else is looked at while paused).
api::DriverDeploymentStatus pausedStatus(const Observed& observed,
                                         const std::optional<api::DriverDeploymentStatus>& previous,
                                         const std::string& now);
// invalidSpecStatus: a spec that fails validation (`errors`, one line each): also Ready=False
// and Degraded=True, reason InvalidSpec, the errors as the message.
api::DriverDeploymentStatus
invalidSpecStatus(const Observed& observed,
                  const std::optional<api::DriverDeploymentStatus>& previous,
                  const std::vector<std::string>& errors, const std::string& now);

// The Paused and DeletionBlocked conditions alone (computeStatus() sets them
// too): for the reconciles that observe nothing else, a paused one.
void setLifecycleConditions(const Observed& observed, std::vector<api::Condition>& conditions,
                            const std::string& now);

// Sets (or replaces) a condition the way meta.SetStatusCondition does.
void setCondition(std::vector<api::Condition>& conditions, api::Condition c);
const api::Condition* findCondition(const std::vector<api::Condition>& conditions,
                                    const std::string& type);
// Whether `status` has condition `type` with status True.
bool conditionTrue(const std::optional<api::DriverDeploymentStatus>& status, const char* type);

} // namespace csiop::driverdeployment
