#include "sections.hpp"

#include <algorithm>

#include <csiop/api/formats.hpp>

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

// spec.rollout.smokeVolume: a claim of a StorageClass or an ephemeral inline volume, one of
// the two; an inline volume only of a driver that serves them.
void smokeVolume(Validator& v, const DriverDeploymentSpec& spec, const RolloutSmokeVolume& smoke) {
  const std::string p = kRollout + ".smokeVolume";
  const bool claim = smoke.storageClassName.has_value();
  if (claim == smoke.ephemeral.has_value()) {
    v.add(required(p, "exactly one of storageClassName and ephemeral"));
  }
  if (smoke.storageClassName) {
    v.format(p + ".storageClassName", *smoke.storageClassName,
             formats::dns1123Subdomain(*smoke.storageClassName));
  }
  if (smoke.size) {
    if (!claim) {
      v.add(forbidden(p + ".size", "may only be set with storageClassName"));
    } else if (!formats::isQuantity(*smoke.size)) {
      v.add(invalid(p + ".size", *smoke.size, "must be a quantity such as \"1Gi\""));
    }
  }
  if (smoke.ephemeral) {
    const auto& modes = spec.csiDriver ? spec.csiDriver->volumeLifecycleModes : std::nullopt;
    if (!modes ||
        std::find(modes->begin(), modes->end(), std::string("Ephemeral")) == modes->end()) {
      v.add(forbidden(p + ".ephemeral",
                      "needs spec.csiDriver.volumeLifecycleModes to list Ephemeral: the kubelet "
                      "mounts inline volumes only of a driver that serves them"));
    }
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
  if (r.smokeVolume) {
    smokeVolume(v, spec, *r.smokeVolume);
  }
  onlyVerified("smokeVolume", r.smokeVolume.has_value());

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
