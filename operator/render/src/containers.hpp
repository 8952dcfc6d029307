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
Json sidecarContainer(const Effective& e, const api::EffectiveSidecar& s);

Json socketMount();

// allowPrivilegeEscalation false, read-only root: for containers that need no privilege.
Json restrictedSecurityContext();

} // namespace csiop::render
