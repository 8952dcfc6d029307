#include "rollout_records.hpp"

#include <algorithm>

#include <csiop/api/json_access.hpp>
#include <csiop/api/rfc3339.hpp>
#include <csiop/driverdeployment/config_hash.hpp>

namespace csiop::driverdeployment {

using api::Json;
using api::member;

namespace {

template <class T> std::optional<T> unlessEmpty(const T& value) {
  return value.empty() ? std::nullopt : std::optional<T>(value);
}

} // namespace

std::string templateDigest(const Json& workload) {
  return contentDigest(member(member(workload, "spec"), "template").dump());
}

RolloutRecord recordOf(const api::RolloutStatus& s) {
  RolloutRecord r;
  r.phase = parsePhase(s.phase).value_or(RolloutPhase::None);
  r.revision = s.revision.value_or("");
  r.from = s.from.value_or("");
  r.template_ = s.template_.value_or("");
  r.since = api::parseRfc3339OrEpoch(s.since.value_or(""));
  r.canaries = s.canaries.value_or(std::vector<std::string>{});
  r.batch = s.batch.value_or(std::vector<std::string>{});
  r.updated = s.updated.value_or(0);
  r.total = s.total.value_or(0);
  r.failedTemplate = s.failedTemplate.value_or("");
  r.failedGate = s.failedGate.value_or("");
  r.failedNode = s.failedNode.value_or("");
  r.message = s.message.value_or("");
  r.retry = s.retry.value_or("");
  return r;
}

api::RolloutStatus statusOf(const RolloutRecord& r) {
  api::RolloutStatus s;
  s.phase = std::string(phaseName(r.phase));
  s.revision = unlessEmpty(r.revision);
  s.from = unlessEmpty(r.from);
  s.template_ = unlessEmpty(r.template_);
  if (r.since != api::WallTime{}) {
    s.since = api::formatRfc3339(r.since);
  }
  s.canaries = unlessEmpty(r.canaries);
  s.batch = unlessEmpty(r.batch);
  s.updated = r.updated;
  s.total = r.total;
  s.failedTemplate = unlessEmpty(r.failedTemplate);
  s.failedGate = unlessEmpty(r.failedGate);
  s.failedNode = unlessEmpty(r.failedNode);
  // The schema's bound (a kubelet's message can be long); the start says what failed.
  s.message = unlessEmpty(r.message.substr(0, 4096));
  s.retry = unlessEmpty(r.retry);
  return s;
}

RolloutRecord recordOf(const api::ControllerRolloutStatus& s) {
  api::RolloutStatus asNode;
  asNode.phase = s.phase;
  asNode.revision = s.revision;
  asNode.from = s.from;
  asNode.template_ = s.template_;
  asNode.since = s.since;
  asNode.updated = s.updated;
  asNode.total = s.total;
  asNode.failedTemplate = s.failedTemplate;
  asNode.failedGate = s.failedGate;
  asNode.message = s.message;
  asNode.retry = s.retry;
  return recordOf(asNode);
}

api::ControllerRolloutStatus controllerStatusOf(const RolloutRecord& r) {
  api::RolloutStatus asNode = statusOf(r);
  api::ControllerRolloutStatus s;
  s.phase = std::move(asNode.phase);
  s.revision = std::move(asNode.revision);
  s.from = std::move(asNode.from);
  s.template_ = std::move(asNode.template_);
  s.since = std::move(asNode.since);
  s.updated = asNode.updated;
  s.total = asNode.total;
  s.failedTemplate = std::move(asNode.failedTemplate);
  s.failedGate = std::move(asNode.failedGate);
  s.message = std::move(asNode.message);
  s.retry = std::move(asNode.retry);
  return s;
}

RolloutPolicy policyOf(const api::EffectiveRollout& r, std::int32_t nodes) {
  RolloutPolicy p;
  p.canaryNodes = r.canaryNodes;
  p.batchSize = resolveMaxUnavailable(r.batchSize, nodes);
  // As validated (a spec that bypassed validation is not reconciled): clamped all the same, so
  // that no time point computed from them can overflow.
  const auto within = [](std::int64_t s, std::int64_t max) {
    return std::chrono::seconds{std::clamp<std::int64_t>(s, 0, max)};
  };
  p.soak = within(r.soakSeconds, api::defaults::kRolloutMaxSoakSeconds);
  p.gateTimeout = within(r.gateTimeoutSeconds, api::defaults::kRolloutMaxDeadlineSeconds);
  p.progressDeadline = within(r.progressDeadlineSeconds, api::defaults::kRolloutMaxDeadlineSeconds);
  p.rollBack = r.rollBack;
  return p;
}

bool inProgress(RolloutPhase phase) {
  return phase == RolloutPhase::Canary || phase == RolloutPhase::Soak ||
         phase == RolloutPhase::Batch || phase == RolloutPhase::RollingBack;
}

} // namespace csiop::driverdeployment
