// Pods a workload could not create: a DaemonSet or StatefulSet whose controller's create was
// refused (Pod Security admission, a ResourceQuota, a missing ServiceAccount, an admission
// webhook) says so only in a FailedCreate Event (sergelogvinov/proxmox-csi-plugin#241: "a PSA
// rejection surfaces on the ReplicaSet, not at apply ... stops rollouts quietly"); a Deployment's
// ReplicaSet's refusal is copied to the Deployment's ReplicaFailure condition. This reads both
// into one line per workload for the status, for as long as the workload has fewer pods than it
// wants: a refusal that no longer holds leaves its Event behind for an hour, and is not
// repeated.
//
// Pure: reads the cached workload and the cached FailedCreate Events.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

// The Events the FailedCreate cache keeps (the API server filters on these fields).
inline constexpr const char* kFailedCreateSelector = "type=Warning,reason=FailedCreate";

// `workload`: a DaemonSet, StatefulSet or Deployment as the child cache keeps it (its head: the
// metadata and status; spec.replicas). `events`: the FailedCreate Events whose involved object is
// its kind, namespace and name. A line like `DaemonSet csi/x-node cannot create its pods: pods
// is forbidden: exceeded quota: ...`, or nullopt when it has every pod it wants or nothing says
// why not.
std::optional<std::string> podCreationFailure(const api::Json& workload,
                                              const std::vector<const api::Json*>& events);

// The key the FailedCreate cache indexes an Event by, and a workload is looked up by:
// "<kind>/<namespace>/<name>" of its involved object.
std::string involvedObjectKey(const api::Json& event);
std::string workloadKey(const std::string& kind, const std::string& ns, const std::string& name);

} // namespace csiop::driverdeployment
