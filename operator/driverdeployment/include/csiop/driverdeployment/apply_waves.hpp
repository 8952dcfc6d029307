// The order children are applied in; those of one wave go at the same time.
#pragma once

#include <string>

namespace csiop::driverdeployment {

// The children that go with the driver name's claim, in the pass's first round trip, when
// their namespaces exist: the ServiceAccounts and the driver's own (Cluster)Roles. They grant
// nothing until a binding names them, and run nothing.
bool isIdentity(const std::string& kind);

// The wave of every other child. Once the identities went with the claim
// (`identitiesExist`), one: the bindings name roles that exist, and the workloads' pods find
// their ServiceAccounts. Else (their namespace was created in this pass) two: 0 the identities,
// StorageClasses and the companion objects (with the CSIDriver); 1 the bindings (a binding's
// role must exist unless the binder holds `bind`) and the workloads (their pods are refused
// until their ServiceAccount exists, and the controllers would record a failure each time).
int applyWave(const std::string& kind, bool identitiesExist);
// DaemonSet, Deployment or StatefulSet.
bool isWorkload(const std::string& kind);

} // namespace csiop::driverdeployment
