// Where each OS's node plugin keeps the driver's socket and reaches the kubelet and the host.
//
// On Linux the socket is at /csi in the pod, the driver is privileged and mounts the kubelet's
// pods and plugins directories with Bidirectional propagation, and /dev.
//
// On Windows, with csi-proxy (the default), the containers are ordinary Windows containers: the
// driver's socket directory (the host's <kubeletDir>\plugins\<driver>) is mounted at C:\csi, the
// kubelet's plugin registry at C:\registration, and the driver reaches the host's disks, SMB
// mappings and filesystem through the named pipes of the csi-proxy APIs it uses. A HostProcess
// pod runs on the host itself: no mounts, the socket at its host path.
#pragma once

#include "node_plugin.hpp"

namespace csiop::render {

inline constexpr const char* kWindowsSocketDir = "C:\\csi";
inline constexpr const char* kWindowsRegistrationDir = "C:\\registration";

// spec.node.
NodePluginLayout linuxNodeLayout(const Effective& effective);
// spec.windowsNode (requires e.windowsNode).
NodePluginLayout windowsNodeLayout(const Effective& effective);

} // namespace csiop::render
