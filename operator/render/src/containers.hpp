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
// no privilege escalation and a read-only root file system.
Json sidecarSecurityContext(const api::EffectiveDriver& driver);

} // namespace csiop::render
