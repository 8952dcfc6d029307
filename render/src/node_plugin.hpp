// The containers and volumes of a node plugin's pod, on Linux and Windows nodes alike: the
// driver, the node-driver-registrar and the livenessprobe. What differs between the OSes comes
// in the pod's NodePluginLayout (node_layouts.hpp).
#pragma once

#include <string>
#include <vector>

#include "container_parts.hpp"

namespace csiop::render {

// Where a node plugin's containers find the driver's socket, the kubelet and the host.
struct NodePluginLayout {
  SocketAccess socket;                   // the sidecars'
  std::string driverEndpoint;            // the driver's CSI_ENDPOINT
  Json driverSecurityContext;            // the driver's when it names none; null: none
  Json driverMounts = Json::array();     // the driver's, before the user's
  std::vector<std::string> registration; // the registrar's args after --csi-address
  Json registrarMounts;                  // null: none
  Json volumes = Json::array();          // the pod's, before the driver's
};

// The driver, the registrar and (if enabled) the livenessprobe, in that order.
Json nodePluginContainers(const api::EffectiveNodePlugin& n, const NodePluginLayout& layout);
// The pod's volumes: the layout's, then the driver's.
Json nodePluginVolumes(const api::EffectiveNodePlugin& n, const NodePluginLayout& layout);

} // namespace csiop::render
