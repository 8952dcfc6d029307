// The containers and volumes of the Windows node plugin (spec.windowsNode).
//
// With csi-proxy (the default) the containers are ordinary Windows containers: the driver's
// socket directory (the host's <kubeletDir>\plugins\<driver>) is mounted at C:\csi, the
// kubelet's plugin registry at C:\registration, and the driver reaches the host's disks, SMB
// mappings and filesystem through the named pipes of the csi-proxy APIs it uses. A HostProcess
// pod runs on the host itself: no mounts, the socket at its host path.
#pragma once

#include <string>

#include "meta.hpp"

namespace csiop::render {

inline constexpr const char* kWindowsSocketDir = "C:\\csi";
inline constexpr const char* kWindowsRegistrationDir = "C:\\registration";

// The driver's socket directory as the containers see it.
std::string windowsSocketDir(const Effective& e);

Json windowsDriverContainer(const Effective& e);
Json windowsRegistrarContainer(const Effective& e);
Json windowsLivenessContainer(const Effective& e);
// The pod's volumes: the operator's, then the driver's.
Json windowsNodeVolumes(const Effective& e);

} // namespace csiop::render
