// The labels and annotations of the API: the ones users write (on a DriverDeployment or on one
// of its children) and the ones the operator writes on what it creates. Every part of the
// project (render, the controller, the webhook, the CLI) names them from here, and reads a
// yes/no annotation one way.
#pragma once

#include <string>

#include <csiop/api/types.hpp>

namespace csiop::api {

// Written by users.
// On a DriverDeployment: "true" lets it take over a CSIDriver of its driver name that
// csi-operator does not manage (installed by hand or another tool).
inline constexpr const char* kAdoptAnnotation = "csiop.dev/adopt-csidriver";
// On a DriverDeployment: "true" deletes it (and its driver) even while volumes of the driver
// are in use.
inline constexpr const char* kForceDeleteAnnotation = "csiop.dev/force-delete";
// On a child: "true" makes the operator leave that object alone (no apply, no prune; orphaned
// when the DriverDeployment goes) until it is removed.
inline constexpr const char* kUnmanagedAnnotation = "csiop.dev/unmanaged";
// On a DriverDeployment: a verified rollout that failed (rolled back or held) is tried again
// once for each new value (any value: a counter or a time).
inline constexpr const char* kRetryRolloutAnnotation = "csiop.dev/retry-rollout";
// On a DriverDeployment (spec.operatorUpdates Manual): the version of the running operator
// approves the change it holds to the workloads, once (a later operator's change is held again).
inline constexpr const char* kApproveOperatorUpdateAnnotation = "csiop.dev/approve-operator-update";

// Written by the operator on every object it renders: the owning DriverDeployment's name (the
// label that finds them all), and on the cluster-scoped CSIDriver its uid (which an owner
// reference cannot carry across the legacy CRD).
inline constexpr const char* kOwnerLabel = "csiop.dev/driverdeployment";
inline constexpr const char* kOwnerUidAnnotation = "csiop.dev/owner-uid";
inline constexpr const char* kManagedBy = "csi-operator"; // app.kubernetes.io/managed-by
// On the objects the operator keeps for every driver at once (each sidecar's ClusterRole of its
// upstream rules, which every driver's binding names): no owner label, no owner; "true".
inline constexpr const char* kSharedLabel = "csiop.dev/shared";
// On each workload, written with it: the DriverDeployment's generation and a digest of the
// parts of its spec that workloads are rendered from, and the version of the operator that
// rendered it. Together they tell a change of the spec from one of the operator.
inline constexpr const char* kSpecGenerationAnnotation = "csiop.dev/spec-generation";
inline constexpr const char* kSpecDigestAnnotation = "csiop.dev/spec-digest";
inline constexpr const char* kRenderedByAnnotation = "csiop.dev/rendered-by";

// A yes/no annotation as the project reads it: absent or "false" is No, "true" is Yes; anything
// else is Invalid (reported; each user of it says which way it then errs, always the one that
// loses nothing).
enum class Flag { No, Yes, Invalid };
Flag flagAnnotation(const Json& object, const char* annotation);
// The value of an annotation, "" when absent or not a string.
std::string annotationValue(const Json& object, const char* annotation);
// The line that reports an Invalid flag: `annotation` "value" on `what`.
std::string invalidFlagMessage(const Json& object, const char* annotation, const std::string& what);

} // namespace csiop::api
