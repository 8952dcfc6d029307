// Server-side apply ownership of what the operator creates.
//
// A child the caches say is missing is created with one POST (a create that fails on a
// foreign object of that name is reported, never taken over); every later change is a
// server-side apply. A POST records its fields under the manager's "Update" entry, and an
// apply removes only the fields that its own "Apply" entry owned: a field dropped from the
// desired object later would stay, owned by the create. So before the first apply to an
// object it created, the operator renames its Update entry to Apply (as client-go's
// csaupgrade does), with a JSON patch guarded by tests of the entry it renames.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

using api::Json;

// The field manager of the create that claims a driver name (reconcile/driver_name.cpp): it carries
// only the claim, and the operator's own manager applies everything else right after.
inline constexpr const char* kClaimFieldManager = "csi-operator-claim";

// Whether `manager` has written `object` (an entry of its managedFields for the main resource,
// not a subresource such as status): on a whole object and on a cached one
// (runtime::managerSummary).
bool writtenBy(const Json& object, std::string_view manager);

// The JSON patch that hands `manager`'s create-time ownership of `object` (its Update entry of
// the main resource) to its server-side apply entry; nullopt when there is none to hand over.
// Works on whole objects and on cached ones (runtime::managerSummary). If the manager has an Apply
// entry as well, the Update entry is removed instead (renaming would duplicate the manager).
std::optional<Json> ownershipUpgrade(const Json& object, const std::string& manager);

} // namespace csiop::driverdeployment
