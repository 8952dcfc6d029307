// A pod as the pod cache keeps it: a struct of the fields that are read, not a JSON tree. The
// cache holds every pod of every driver's workloads (a node plugin pod per node per driver: 25,000
// on 5,000 nodes with 5 drivers) and every pod with a volume; as a cut-down JSON tree a healthy
// pod took 2.7 KiB of heap (every object a vector, every string its own allocation), as this
// struct a few hundred bytes.
//
// Read by the status (podProblems: why a pod does not run), the node plugin rollouts (revision,
// readiness and since when, creation, node, owner) and the volume decisions (volumes, node, phase,
// whether a drain evicts it).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <csiop/api/rfc3339.hpp>
#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

using api::Json;

struct CachedPod {
  // A container that waits, with why (ImagePullBackOff, CrashLoopBackOff, ...).
  struct WaitingContainer {
    std::string name;
    std::string reason;
    std::string message;
    bool init = false; // of initContainerStatuses
    bool operator==(const WaitingContainer&) const = default;
  };
  // A container that has restarted: how often, and how its last run ended (lastState.terminated),
  // the evidence of why a registrar does not register (registration_problems.hpp).
  struct RestartedContainer {
    std::string name;
    std::int32_t restarts = 0;
    std::int32_t exitCode = 0;
    std::string reason;  // Error, OOMKilled, Completed
    std::string message; // the termination message, at most kMaxTerminationMessage bytes
    api::WallTime finished{};
    bool init = false;
    bool operator==(const RestartedContainer&) const = default;
  };
  static constexpr std::size_t kMaxTerminationMessage = 512;
  // A volume the volume decisions read: a claim, a generic ephemeral volume (its claim is
  // <pod>-<volume>) or an inline CSI volume.
  struct Volume {
    std::string name;
    std::string claimName; // persistentVolumeClaim.claimName
    std::string csiDriver; // csi.driver
    bool ephemeral = false;
    bool operator==(const Volume&) const = default;
  };

  std::string namespace_;
  std::string name;
  std::string uid;
  bool deleting = false; // metadata.deletionTimestamp is set
  std::string owner;     // the owner label: the DriverDeployment ("" : not a workload's)
  // label controller-revision-hash (a DaemonSet's or StatefulSet's revision), else
  // pod-template-hash (a Deployment's ReplicaSet's)
  std::string revisionHash;
  std::string controllerUid; // the uid of the controller ownerReference
  bool drainLeaves = false;  // owned by a DaemonSet or a Node (a mirror pod): a drain leaves it
  std::string nodeName;
  std::string phase;
  bool ready = false;         // condition Ready is True
  api::WallTime created{};    // metadata.creationTimestamp (the epoch if unreadable)
  api::WallTime readySince{}; // condition Ready's lastTransitionTime, when ready
  // condition PodScheduled is False for reason Unschedulable: its message.
  std::optional<std::string> unschedulable;
  std::vector<WaitingContainer> waiting;     // init containers first
  std::vector<RestartedContainer> restarted; // restartCount > 0 only; init containers first
  std::vector<Volume> volumes;

  bool operator==(const CachedPod&) const = default;
  // A pod that has finished (Succeeded or Failed) holds no volume any more.
  bool terminated() const { return phase == "Succeeded" || phase == "Failed"; }
  bool usesVolumes() const { return !volumes.empty(); }
  // A container waits in CrashLoopBackOff: "<container>: <message>"; "" if none does.
  std::string crashLoop() const;
  // The container `name` if it has restarted, else nullptr.
  const RestartedContainer* restartedContainer(const std::string& name) const;
  // The CSI drivers of its inline volumes.
  std::vector<std::string> inlineDrivers() const;
  // "namespace/name".
  std::string key() const { return namespace_ + "/" + name; }
};

// A workload's pod: it carries the owner label (the pod templates set it).
bool workloadPod(const Json& pod);
// A pod with a claim, generic ephemeral or CSI volume: what the volume decisions read.
bool usesReadVolumes(const Json& pod);
// workloadPod() or usesReadVolumes().
bool keptInPodCache(const Json& pod);
// What the pod cache keeps of a pod (whole, or as its field mask builds it: podFields()).
CachedPod decodePod(const Json& pod);

} // namespace csiop::driverdeployment
