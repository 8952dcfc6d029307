// The node plugin's driver container and the kubelet's directory. The operator mounts the
// kubelet's pods and plugins directories into it (Bidirectional: the driver's mounts there must
// reach the kubelet). A driver mount of the kubelet's directory itself, or of one above it,
// lies over those: some vendors mount the whole directory (JuiceFS reads the kubelet's root from
// that volume), and two Bidirectional mounts of one host tree, one inside the other, propagate
// each new mount back onto the host's tree once more (a mount table that grows with every pod).
// So such a mount is taken only in the one form that serves the same paths with the same
// propagation: hostPath D mounted at D, Bidirectional; the operator then leaves its own two out.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace csiop::api {

enum class KubeletMount {
  Beside,   // neither at nor above the kubelet's directory
  Covers,   // hostPath D at D, Bidirectional, D the kubelet's directory or above it
  Overlays, // at or above the kubelet's directory in any other form: refused
};

// How `mount` (a VolumeMount of the driver container, whose volumes are `volumes`) relates to
// the kubelet's directory `kubeletDir` (absolute, no trailing slash).
KubeletMount kubeletMountOf(const nlohmann::ordered_json& mount,
                            const nlohmann::ordered_json& volumes, const std::string& kubeletDir);

} // namespace csiop::api
