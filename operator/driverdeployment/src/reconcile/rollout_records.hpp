// What the verified rollouts (verified_rollouts.cpp: the node plugins'; controller_rollouts.cpp:
// the controller workload's) share: their record as kept in status.rollout, the policy as the
// spec resolves it, and the operator's digest of a workload's pod template.
#pragma once

#include <cstdint>
#include <string>

#include <csiop/api/defaults.hpp>
#include <csiop/api/types.hpp>
#include <csiop/driverdeployment/verified_rollout.hpp>

namespace csiop::driverdeployment {

// The digest of a workload's spec.template (as rendered, or as served).
std::string templateDigest(const api::Json& workload);

RolloutRecord recordOf(const api::RolloutStatus& status);
api::RolloutStatus statusOf(const RolloutRecord& record);
// The controller's (no canaries, batch or node).
RolloutRecord recordOf(const api::ControllerRolloutStatus& status);
api::ControllerRolloutStatus controllerStatusOf(const RolloutRecord& record);

// The spec's rollout policy, its batch size resolved against `nodes`.
RolloutPolicy policyOf(const api::EffectiveRollout& rollout, std::int32_t nodes);

// Canary, Soak, Batch or RollingBack: the pass is needed again though nothing may change.
bool inProgress(RolloutPhase phase);

} // namespace csiop::driverdeployment
