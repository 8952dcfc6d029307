// The order the operator's caches start in: each group once every cache of the groups before it
// has synced. The volume Events keep only those of a managed driver's volumes, which they find
// through the DriverDeployments, the PersistentVolumes and the pods (caches.cpp), so they start
// last: started with the others, their first list could come before those caches hold anything
// and keep none of the driver's failures until each is written again.
#pragma once

#include <vector>

#include <csiop/driverdeployment/caches.hpp>

namespace csiop::driverdeployment {

// Caches::all(), grouped in the order they start.
std::vector<std::vector<runtime::RunnableCache*>> cacheStartGroups(Caches& caches);

// Whether every cache of a group has synced (the next group may start).
bool groupSynced(const std::vector<runtime::RunnableCache*>& group);

} // namespace csiop::driverdeployment
