// The mount-safe node plugin rollout (spec.node.updateStrategy.type
// WhenVolumesUnused): the DaemonSet updates OnDelete, and the operator replaces
// an out-of-date node plugin pod itself, only on a node where no running pod
// uses a volume of the driver, or that an admin has drained (cordoned, with
// only pods left that a drain does not evict) or annotated
// csiop.dev/allow-node-plugin-update: "true"; at most maxUnavailable nodes at a
// time. For drivers whose node plugin holds the mounts in its own process
// (FUSE and the like), where a restart would break every volume on the node.
// Pure: the caller passes what the caches hold.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <csiop/api/types.hpp>
#include <csiop/driverdeployment/cached_pod.hpp>

namespace csiop::driverdeployment {

using api::Json;

inline constexpr const char* kAllowNodePluginUpdateAnnotation =
    "csiop.dev/allow-node-plugin-update";

// Pods on one node that use volumes of the driver.
struct NodeVolumeUsers {
  std::vector<std::string> pods;     // "namespace/name"
  std::vector<std::string> blocking; // those a drain would evict (not DaemonSet or static pods)
};

// The running (not finished) pods of each node that use a volume of
// `driverName`: an inline CSI volume of it, or a claim (also a generic
// ephemeral one, <pod>-<volume>) bound to a PersistentVolume of it.
std::map<std::string, NodeVolumeUsers> volumeUsersByNode(const std::string& driverName,
                                                         const std::vector<const Json*>& pvs,
                                                         const std::vector<const CachedPod*>& pods);

struct NodeRolloutInput {
  std::string currentHash;                  // the DaemonSet's newest controller-revision-hash
  std::vector<const CachedPod*> pluginPods; // the DaemonSet's pods
  std::map<std::string, const Json*> nodes; // by name: at least those of pluginPods
  std::map<std::string, NodeVolumeUsers> users;
  std::int32_t maxUnavailable = 1; // resolved against the desired node count, >= 1
  std::int32_t unavailable = 0;    // the DaemonSet's status.numberUnavailable
};

struct NodeWait {
  std::string node;
  std::string reason; // VolumesInUse, MaxUnavailable, InvalidAnnotation
  std::string message;
};

struct Replacement {
  std::string pod;
  std::string uid;
  std::string node;
  std::string why; // for the Event
};

struct NodeRolloutPlan {
  std::int32_t updated = 0;  // plugin pods at the current revision
  std::int32_t outdated = 0; // plugin pods at an older revision
  std::vector<Replacement> replace;
  std::vector<NodeWait> waiting; // sorted by node
};

NodeRolloutPlan planNodeRollout(const NodeRolloutInput& input);

// Whether the node plugin pod on `node` may be replaced now, by the rules above: why it may, or
// the wait (VolumesInUse, InvalidAnnotation) when it may not. `nodes` holds the node's object
// when the cache has it.
struct NodeSafety {
  std::string why;
  std::optional<NodeWait> wait;
};
NodeSafety nodeSafety(const std::string& node, const std::map<std::string, NodeVolumeUsers>& users,
                      const std::map<std::string, const Json*>& nodes);

// The controller-revision-hash of the newest ControllerRevision owned by the
// DaemonSet with `dsUid`, "" if none.
std::string currentRevisionHash(const std::vector<const Json*>& revisions,
                                const std::string& dsUid);

// maxUnavailable ("25%" or 3) of `desired` nodes, rounded up, at least 1.
std::int32_t resolveMaxUnavailable(const Json& value, std::int32_t desired);

} // namespace csiop::driverdeployment
