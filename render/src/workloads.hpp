// The node plugin DaemonSet and the controller plugin Deployment/StatefulSet.
#pragma once

#include "meta.hpp"

namespace csiop::render {

// The node plugin's DaemonSet; with spec.controller.placement NodePlugin the controller sidecars
// are part of it; with SinglePod, they are, and it is a StatefulSet of one replica.
Json renderNodePlugin(const Effective& effective);
// spec.windowsNode: the node plugin of Windows nodes (requires e.windowsNode).
Json renderWindowsNodeDaemonSet(const Effective& effective);
Json renderControllerWorkload(const Effective& effective); // requires e.hasControllerWorkload()

} // namespace csiop::render
