// Which objects are a DriverDeployment's: owned by it (an owner reference, or the CSIDriver's
// owner annotation), made for it by the operator, and finalized by it.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

// Whether `object` belongs to the DriverDeployment with `ownerUid`: an owner
// reference (or, for the CSIDriver, the owner annotation) names that uid. A
// label alone is not ownership: labels are easy to copy.
bool ownedBy(const api::Json& object, const std::string& ownerUid);

// Whether `object` is a child the operator made for the DriverDeployment `ownerUid`: owned by
// it (ownedBy) and written by one of the operator's field managers `managers`. What only the
// operator may delete. Another client's copy of a child (a test suite copying a StorageClass,
// `kubectl get -o yaml | kubectl create`) keeps its labels and owner references, even the
// managedFields it was sent with, but the API server gives every field of a create to its
// creator, so the copy's managedFields name that client alone: it is not the operator's.
bool madeFor(const api::Json& object, const std::string& ownerUid,
             const std::vector<std::string>& managers);

// Whether metadata.finalizers of `object` lists `finalizer`.
bool hasFinalizer(const api::Json& object, const char* finalizer);

} // namespace csiop::driverdeployment
