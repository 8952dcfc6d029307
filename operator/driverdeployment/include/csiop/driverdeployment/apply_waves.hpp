// The order children are applied in; those of one wave go at the same time.
#pragma once

#include <string>

namespace csiop::driverdeployment {

// 0: ServiceAccounts, (Cluster)Roles, StorageClasses and the companion objects
// (with the CSIDriver); 1: the bindings (a binding's role must exist unless the
// binder holds `bind`). The workloads go with wave 0 when the ServiceAccounts
// exist already (`serviceAccountsExist`: applied with the driver name's claim),
// else with wave 1: their pods are refused until their ServiceAccount exists,
// and the controllers would record a failure each time. The workloads do not
// wait for the bindings, which are there one round trip later, before any
// container of theirs has started.
int applyWave(const std::string& kind, bool serviceAccountsExist);
// DaemonSet, Deployment or StatefulSet.
bool isWorkload(const std::string& kind);

} // namespace csiop::driverdeployment
