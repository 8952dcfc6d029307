// What to delete, and in which order: the children the spec no longer wants, and everything on
// a DriverDeployment's deletion.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

// Live objects (found by the owner label) that the desired set no longer has
// and that the operator made for this owner (madeFor); never a Namespace.
// Order: workloads first, RBAC after, CSIDriver last. `live` points into the caches; what is
// to be pruned is copied (usually nothing: the live children are not).
std::vector<api::Json> toPrune(const std::vector<const api::Json*>& live,
                               const std::vector<api::Json>& desired, const std::string& ownerUid,
                               const std::vector<std::string>& managers);

// Order in which to delete everything on DriverDeployment deletion: the same
// as pruning everything, so the CSIDriver goes last.
void sortForDeletion(std::vector<api::Json>& objects);

} // namespace csiop::driverdeployment
