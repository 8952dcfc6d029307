// The conditions of each DriverDeployment as its status says (csiop_driverdeployment_status_
// condition): what alerts on a driver that is not Ready or whose rollout failed read.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

// DriverDeployment name -> condition type -> status ("True", "False" or "Unknown"; any other
// value, or none, reads as "Unknown").
using ConditionStates = std::map<std::string, std::map<std::string, std::string>>;

// From the DriverDeployments' status.conditions; one without conditions (not yet reconciled) is
// not there.
ConditionStates conditionStates(const std::vector<const api::Json*>& driverDeployments);

} // namespace csiop::driverdeployment
