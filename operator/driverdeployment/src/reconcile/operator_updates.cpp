// spec.operatorUpdates: a workload that the running operator would change though neither the
// spec nor the configuration its pods read changed (operator_update.hpp tells whose change it
// is) is a change of the operator's own: Automatic applies it like any other (a verified
// rollout rolls it as one); Manual holds it, leaving the running workload untouched (no write
// at all), until csiop.dev/approve-operator-update names this operator's version. Each
// workload written carries the stamp that tells the next operator the same.
#include <csiop/driverdeployment/reconciler.hpp>

#include <optional>

#include <csiop/api/annotations.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/apply_waves.hpp>
#include <csiop/driverdeployment/compare.hpp>
#include <csiop/driverdeployment/object_key.hpp>
#include <csiop/driverdeployment/operator_update.hpp>
#include <csiop/driverdeployment/ownership.hpp>
#include <csiop/driverdeployment/unmanaged.hpp>
#include <csiop/render/config_refs.hpp>
#include <csiop/render/render.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::metadataField;

namespace {

constexpr std::size_t kChangesShown = 8; // per held workload, in the condition's message

api::WorkloadRendering shown(const Json& workload, const RenderStamp& stamp, bool held) {
  api::WorkloadRendering out;
  out.kind = api::stringField(workload, "kind");
  out.name = metadataField(workload, "name");
  char* end = nullptr;
  const long long generation = std::strtoll(stamp.specGeneration.c_str(), &end, 10);
  if (!stamp.specGeneration.empty() && end != nullptr && *end == '\0') {
    out.specGeneration = generation;
  }
  if (!stamp.renderedBy.empty()) {
    out.renderedBy = stamp.renderedBy;
  }
  if (held) {
    out.held = true;
  }
  return out;
}

std::string joined(const std::vector<std::string>& lines, const char* separator) {
  std::string out;
  for (const std::string& line : lines) {
    out += (out.empty() ? "" : separator) + line;
  }
  return out;
}

} // namespace

asio::awaitable<StepResult> Reconciler::holdOperatorUpdates(ReconcileRun& run) {
  const Json& spec = api::member(run.dd, "spec");
  const std::string generation = std::to_string(run.observed.generation);
  const RenderStamp nodeStamp{generation, workloadSpecDigest(spec, WorkloadPart::NodePlugin),
                              operatorVersion_};
  const RenderStamp controllerStamp{generation, workloadSpecDigest(spec, WorkloadPart::Controller),
                                    operatorVersion_};
  const std::string approval = api::annotationValue(run.dd, api::kApproveOperatorUpdateAnnotation);
  const bool applyOperatorChanges =
      run.effective->operatorUpdatesAutomatic || approval == operatorVersion_;
  const bool generationObserved = run.previous && run.previous->observedGeneration &&
                                  *run.previous->observedGeneration == run.observed.generation;
  std::vector<std::string> held;
  for (Json& desired : run.desired) {
    const std::string kind = api::stringField(desired, "kind");
    if (!isWorkload(kind)) {
      continue;
    }
    const RenderStamp& stamp = render::isNodePlugin(desired) ? nodeStamp : controllerStamp;
    const CachedChild* cached = cachedChild(desired);
    if (cached == nullptr || !ownedBy(cached->head, run.uid) || !managed(cached->head)) {
      setStamp(desired, stamp); // to be created (or not this DriverDeployment's to write)
      run.observed.workloads.push_back(shown(desired, stamp, false));
      continue;
    }
    // As rendered, with the stamp the running workload has: when that is all it differs by,
    // nothing is written (a new generation or operator alone rewrites no workload).
    const RenderStamp running = stampOf(cached->head);
    Json unchanged = desired;
    setStamp(unchanged, running);
    // The running workload parsed from the cache once, and only if needed (`cached` changes
    // while a later step waits; the copy does not).
    std::optional<Json> parsed;
    const auto live = [&]() -> const Json& {
      if (!parsed) {
        parsed = cached->whole();
      }
      return *parsed;
    };
    if (!applied_.changedSinceApplied(unchanged) &&
        (applied_.unchangedSinceApplied(unchanged, *cached) || contains(live(), unchanged))) {
      desired = std::move(unchanged);
      run.observed.workloads.push_back(shown(desired, running, false));
      continue;
    }
    const ChangeOrigin origin = changeOrigin({running, stamp, render::configHash(live()),
                                              render::configHash(desired), generationObserved});
    if (origin != ChangeOrigin::Operator || applyOperatorChanges) {
      setStamp(desired, stamp);
      run.observed.workloads.push_back(shown(desired, stamp, false));
      continue;
    }
    const ObjectKey key = keyOf(desired);
    run.heldWorkloads.insert(key.str());
    held.push_back(key.str() + " (" +
                   (running.renderedBy.empty() ? "written by an earlier operator"
                                               : "rendered by " + running.renderedBy) +
                   "): " + joined(describeChange(live(), unchanged, kChangesShown), ", "));
    run.observed.workloads.push_back(shown(live(), running, true));
  }
  if (held.empty()) {
    co_return std::nullopt;
  }
  std::string message = "operator " + operatorVersion_ +
                        " would change what the spec did not: " + joined(held, "; ") +
                        "; held (spec.operatorUpdates Manual): to apply it once, annotate the "
                        "DriverDeployment " +
                        api::kApproveOperatorUpdateAnnotation + "=" + operatorVersion_;
  const auto* before =
      run.previous && run.previous->conditions
          ? findCondition(*run.previous->conditions, condition::kOperatorUpdateHeld)
          : nullptr;
  if (before == nullptr || before->status != "True" || before->message != message) {
    co_await events_.record(run.dd, false, "OperatorUpdateHeld", message);
  }
  run.observed.operatorUpdateHeld = std::move(message);
  co_return std::nullopt;
}

} // namespace csiop::driverdeployment
