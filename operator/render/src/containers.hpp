// Containers of the node and controller pods.
#pragma once

#include <string>

#include "meta.hpp"

namespace csiop::render {

inline constexpr const char* kDriverContainer = "csi-driver";
inline constexpr const char* kSocketDir = "/csi";
inline constexpr const char* kSocketPath = "/csi/csi.sock";

// The CSI driver; `nodePlugin` adds the node mounts and the node defaults.
Json driverContainer(const Effective& e, const api::EffectiveDriver& d,
                     const api::EffectiveProbe& probe, bool nodePlugin);
Json registrarContainer(const Effective& e);
Json livenessContainer(const api::EffectiveProbe& probe, const Json& securityContext);
Json sidecarContainer(const Effective& e, const api::EffectiveSidecar& s,
                      const Json& securityContext);

Json socketMount();

// The security context of the sidecars that dial the driver's socket: privileged
// when the driver is (as upstream does it: on SELinux hosts only a privileged
// container may use a socket that a privileged container created), otherwise
// no privilege escalation and a read-only root file system. In the node plugin
// (`nodePlugin`) a driver without a securityContext of its own is privileged.
Json sidecarSecurityContext(const api::EffectiveDriver& driver, bool nodePlugin);

// How many owner references the provisioner follows from its pod to the workload
// that owns its CSIStorageCapacity objects: 1 for a StatefulSet or the node plugin
// DaemonSet, 2 for a Deployment (pod -> ReplicaSet -> Deployment).
int capacityOwnerLevel(const Effective& e);

} // namespace csiop::render
