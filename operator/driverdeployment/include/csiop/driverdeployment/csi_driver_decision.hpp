// Who owns a driver name, and what to do with the CSIDriver object. The CSIDriver object is the
// authority: the first DriverDeployment to create it (its uid in the csiop.dev/owner-uid
// annotation) owns the name, race-free even when the webhook is down or two API servers admit
// at once, because the create of a cluster-scoped name can succeed once.
#pragma once

#include <string>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

struct CSIDriverDecision {
  enum class Action {
    Create,   // absent: create it (a create, never an apply, so two owners cannot both win)
    Keep,     // ours and already as desired: no write
    Apply,    // ours, mutable fields differ: server-side apply
    Recreate, // ours, an immutable field differs: delete, then create
    Conflict, // someone else's: touch nothing, report
  };
  Action action = Action::Keep;
  std::string detail; // for Recreate: which fields; for Conflict: who owns it
};

// adopt: the DriverDeployment asks to take over a CSIDriver nobody manages
// (api::kAdoptAnnotation); one managed by another DriverDeployment stays a conflict.
CSIDriverDecision decideCSIDriver(const api::Json* live, const api::Json& desired,
                                  const std::string& ownerUid, bool adopt = false);

} // namespace csiop::driverdeployment
