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

} // namespace csiop::driverdeployment
