// Who owns a driver name, and what to do with the CSIDriver object. The CSIDriver object is the
// authority: the first DriverDeployment to create it (its uid in the csiop.dev/owner-uid
// annotation) owns the name, race-free even when the webhook is down or two API servers admit
// at once, because the create of a cluster-scoped name can succeed once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// The spec fields of a storage.k8s.io/v1 CSIDriver the API server of minor version
// `serverMinor` refuses to change: attachRequired and volumeLifecycleModes always; podInfoOnMount
// and fsGroupPolicy too before 1.29, where they became mutable. nullopt (unknown): the current
// server's.
std::vector<std::string> csiDriverImmutableFields(std::optional<int> serverMinor);

// The minor version of a /version answer: "35" and "35+" (some vendors' builds) are 35;
// nullopt if it is not a number.
std::optional<int> serverMinorVersion(std::string_view minor);

// adopt: the DriverDeployment asks to take over a CSIDriver nobody manages
// (api::kAdoptAnnotation); one managed by another DriverDeployment stays a conflict.
// immutable: the server's (csiDriverImmutableFields); a change of one is a Recreate.
CSIDriverDecision
decideCSIDriver(const api::Json* live, const api::Json& desired, const std::string& ownerUid,
                bool adopt = false,
                const std::vector<std::string>& immutable = csiDriverImmutableFields(std::nullopt));

// The claim of a driver name: a create of `desired` with its metadata and only the immutable
// fields it sets (the apply that follows owns the rest, so that later applies can drop fields).
api::Json csiDriverClaim(const api::Json& desired, const std::vector<std::string>& immutable);

} // namespace csiop::driverdeployment
