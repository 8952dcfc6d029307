// The companion objects of a driver: what its pods read or what serves them, owned by the
// DriverDeployment like every other child.
#pragma once

#include <optional>
#include <vector>

#include "meta.hpp"

namespace csiop::render {

std::vector<Json> renderConfigMaps(const Effective& effective);
std::vector<Json> renderServices(const Effective& effective);
std::optional<Json> renderPodDisruptionBudget(const Effective& effective); // of the controller
std::vector<Json> renderVolumeSnapshotClasses(const Effective& effective);
// spec.aggregatedClusterRoles: ClusterRoles for the driver's users.
std::vector<Json> renderAggregatedClusterRoles(const Effective& effective);
// spec.objects, each in the driver's namespace with the operator's labels and owner.
std::vector<Json> renderObjects(const Effective& effective);

} // namespace csiop::render
