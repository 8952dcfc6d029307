// What the operator's short-lived pods on one node (a smoke test's, a pre-pull's) share: the
// pod spec's fields that put it on that node, and only there, and let it end by itself. Pure.
#pragma once

#include <cstdint>
#include <string>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

// A pod spec with no container yet: required node affinity to `node` by metadata.name (scheduled
// there rather than bound with nodeName: the scheduler selects the node for a
// WaitForFirstConsumer claim, and says why the pod cannot go there), every taint tolerated (as
// the node plugin's pods tolerate them), restartPolicy Never, activeDeadlineSeconds (at least 1),
// no service account token, no service links, the RuntimeDefault seccomp profile.
api::Json nodePinnedPodSpec(const std::string& node, std::int64_t deadlineSeconds,
                            std::int64_t gracePeriodSeconds);

// Who such an object (the pod, a smoke test's claim) is for: labelled `label`=<owner> (the
// label the reconciler finds them by), managed by csi-operator, of app.kubernetes.io/component
// `component`, with `annotations`, and owned by the DriverDeployment (not as its controller: the
// garbage collector removes them with it; nothing waits for them).
struct NodePinnedOwner {
  std::string owner;    // the DriverDeployment's name
  std::string ownerUid; // and uid
  const char* label;
  const char* component;
};
api::Json nodePinnedMetadata(const NodePinnedOwner& owner, const std::string& name,
                             const std::string& ns, api::Json annotations);

} // namespace csiop::driverdeployment
