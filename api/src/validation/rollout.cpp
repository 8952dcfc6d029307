#include "sections.hpp"

namespace csiop::api::validation {
namespace {

const std::string kRollout = "spec.rollout";

// Seconds within [min, max]: a week of soak at most, a day for a gate or a batch (time points
// computed from them stay far from overflowing).
void secondsWithin(Validator& v, const std::string& path, const std::optional<std::int64_t>& value,
                   std::int64_t min, std::int64_t max) {
  if (value && *value < min) {
    v.add(invalid(path, *value, "must be greater than or equal to " + std::to_string(min)));
  } else if (value && *value > max) {
    v.add(invalid(path, *value, "must be less than or equal to " + std::to_string(max)));
  }
}

// With a verified rollout the operator replaces a node plugin's pods itself, so the DaemonSet's
// own strategy (`path`: its updateStrategy) may not name one: RollingUpdate would race the
// operator, OnDelete would be a promise the operator does not keep. WhenVolumesUnused composes:
// it still decides which nodes may be replaced now.
void verifiedUpdateStrategy(Validator& v, const std::string& path,
                            const std::optional<Json>& strategy) {
  if (!strategy || !strategy->is_object()) {
    return;
  }
  const Json type = strategy->value("type", Json());
  if (type == "RollingUpdate" || type == "OnDelete") {
    v.add(forbidden(path + ".type", "may not be RollingUpdate or OnDelete with spec.rollout.type "
                                    "Verified: the operator replaces the node plugin pods itself"));
  }
  if (strategy->contains("rollingUpdate")) {
    v.add(forbidden(path + ".rollingUpdate",
                    "may not be set with spec.rollout.type Verified: the operator replaces the "
                    "node plugin pods itself"));
  }
}

} // namespace

void rollout(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.rollout) {
    return;
  }
  const RolloutSpec& r = *spec.rollout;
  const std::string type = r.type.value_or(defaults::kRolloutType);
  v.oneOf(kRollout + ".type", type, {defaults::kRolloutUnverified, defaults::kRolloutVerified});

  // What only a verified rollout reads is an error in an unverified one, so that nobody
  // believes a policy applies that does not. (An unknown type has its own error.)
  const bool unverified = type == defaults::kRolloutUnverified;
  const auto onlyVerified = [&](const char* field, bool given) {
    if (unverified && given) {
      v.add(forbidden(kRollout + "." + field, "may only be set with type Verified"));
    }
  };

  if (r.canary) {
    const std::string p = kRollout + ".canary";
    if (r.canary->nodes && *r.canary->nodes < 1) {
      v.add(invalid(p + ".nodes", *r.canary->nodes, "must be greater than or equal to 1"));
    }
    if (r.canary->nodeSelector) {
      v.labels(p + ".nodeSelector", *r.canary->nodeSelector, true);
    }
  }
  onlyVerified("canary", r.canary.has_value());
  if (r.batchSize) {
    v.nodeCount(kRollout + ".batchSize", *r.batchSize);
  }
  onlyVerified("batchSize", r.batchSize.has_value());
  secondsWithin(v, kRollout + ".soakSeconds", r.soakSeconds, 0, defaults::kRolloutMaxSoakSeconds);
  onlyVerified("soakSeconds", r.soakSeconds.has_value());
  secondsWithin(v, kRollout + ".gateTimeoutSeconds", r.gateTimeoutSeconds, 1,
                defaults::kRolloutMaxDeadlineSeconds);
  onlyVerified("gateTimeoutSeconds", r.gateTimeoutSeconds.has_value());
  secondsWithin(v, kRollout + ".progressDeadlineSeconds", r.progressDeadlineSeconds, 1,
                defaults::kRolloutMaxDeadlineSeconds);
  onlyVerified("progressDeadlineSeconds", r.progressDeadlineSeconds.has_value());
  if (r.onFailure) {
    v.oneOf(kRollout + ".onFailure", *r.onFailure, {"Hold", "Rollback"});
  }
  onlyVerified("onFailure", r.onFailure.has_value());
  onlyVerified("paused", r.paused.has_value());

  if (type == defaults::kRolloutVerified) {
    if (spec.node) {
      verifiedUpdateStrategy(v, "spec.node.updateStrategy", spec.node->updateStrategy);
    }
    if (spec.windowsNode && spec.windowsNode->enabled.value_or(true)) {
      verifiedUpdateStrategy(v, "spec.windowsNode.updateStrategy",
                             spec.windowsNode->updateStrategy);
    }
  }
}

} // namespace csiop::api::validation
