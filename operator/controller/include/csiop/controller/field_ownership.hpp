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

#include <csiop/api/types.hpp>

namespace csiop::controller {

using api::Json;

// managedFields cut to who manages each entry and how (manager, operation, subresource): what
// the caches keep of it (fieldsV1 is most of an object's metadata and never read).
Json managerSummary(const Json& managedFields);

// The JSON patch that hands `manager`'s create-time ownership of `object` (its Update entry of
// the main resource) to its server-side apply entry; nullopt when there is none to hand over.
// Works on whole objects and on cached ones (managerSummary). If the manager has an Apply entry
// as well, the Update entry is removed instead (renaming would duplicate the manager).
std::optional<Json> ownershipUpgrade(const Json& object, const std::string& manager);

} // namespace csiop::controller
