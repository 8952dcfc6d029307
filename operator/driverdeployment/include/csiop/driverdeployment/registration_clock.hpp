// When the kubelet registered a driver on a node, as far as the operator saw it happen: a
// CSINode that begins to list the driver in a watched change is stamped with the time of that
// change. A listing the operator found already there (in the first list, or a CSINode added
// with the driver in it) has no stamp: the epoch. The verified rollout's Registered gate asks
// whether the driver was registered again after a new plugin pod started (verified_rollout.hpp).
//
// A CSINode that lists the driver always has its node ID (spec.drivers[].nodeID is required).
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include <csiop/api/rfc3339.hpp>
#include <csiop/driverdeployment/cached_csi_node.hpp>
#include <csiop/driverdeployment/verified_rollout.hpp>

namespace csiop::driverdeployment {

class RegistrationClock {
public:
  // A CSINode changed (`old` null: added; `updated` null: deleted), seen at `now`.
  void observe(const CachedCSINode* old, const CachedCSINode* updated, api::WallTime now);
  // The registration of `driver` on the node of `csiNode` (null: the node has none yet).
  NodeRegistration of(const CachedCSINode* csiNode, const std::string& driver) const;
  // Stamps kept (one per node and driver seen registering; none once unlisted).
  std::size_t size() const;

private:
  std::map<std::string, std::map<std::string, api::WallTime>> since_; // node -> driver -> when
};

} // namespace csiop::driverdeployment
