// Containers of the node and controller pods.
#pragma once

#include <string>

#include "container_parts.hpp"

namespace csiop::render {

inline constexpr const char* kSocketDir = "/csi";
inline constexpr const char* kSocketPath = "/csi/csi.sock";
inline constexpr const char* kSocketEndpoint = "unix:///csi/csi.sock"; // the driver's

// The driver's socket in a Linux pod: kSocketPath, in the socket-dir volume.
SocketAccess linuxSocket();
// The livenessprobe sidecar, beside the driver of a node plugin or controller pod.
Json livenessContainer(const api::EffectiveProbe& probe, const SocketAccess& socket);
// A controller sidecar, in the controller pod or (placement NodePlugin) the node plugin's.
// Every sidecar runs with its own securityContext (unprivileged by default), whatever the
// driver's: on SELinux hosts that enforce, a sidecar may need seLinuxOptions type spc_t
// (or privileged) to use a socket that a privileged driver created; the user says so.
Json sidecarContainer(const Effective& effective, const api::EffectiveSidecar& s);

// external-provisioner beside the driver on every node (--node-deployment): it provisions
// (and publishes the capacity of) its own node only, without leader election.
Json nodeProvisionerContainer(const Effective& effective, const api::EffectiveNodeProvisioner& p);

Json socketMount();

// How many owner references the provisioner follows from its pod to the workload
// that owns its CSIStorageCapacity objects: 1 for a StatefulSet or the node plugin
// DaemonSet, 2 for a Deployment (pod -> ReplicaSet -> Deployment).
int capacityOwnerLevel(const Effective& effective);

} // namespace csiop::render
