// The companion objects of a driver: what its pods read or what serves them, owned by the
// DriverDeployment like every other child.
#pragma once

#include <optional>
#include <vector>

#include "meta.hpp"

namespace csiop::render {

std::vector<Json> renderConfigMaps(const Effective& e);
std::vector<Json> renderServices(const Effective& e);
std::optional<Json> renderPodDisruptionBudget(const Effective& e); // of the controller
std::vector<Json> renderVolumeSnapshotClasses(const Effective& e);
// spec.aggregatedClusterRoles: ClusterRoles for the driver's users.
std::vector<Json> renderAggregatedClusterRoles(const Effective& e);
// spec.objects, each in the driver's namespace with the operator's labels and owner.
std::vector<Json> renderObjects(const Effective& e);

} // namespace csiop::render
