// The pass itself, and what every step reads: the live child, the children the operator made.
#include <csiop/controller/reconciler.hpp>

#include <csiop/api/json_access.hpp>
#include <csiop/controller/decisions.hpp>
#include <csiop/controller/field_ownership.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"

namespace csiop::controller {

namespace asio = boost::asio;
using api::Json;

Reconciler::Reconciler(kube::Client& client, Caches& caches, EventRecorder& events,
                       std::function<std::string()> now, std::chrono::milliseconds configPollPeriod)
    : client_(client), caches_(caches), events_(events), now_(std::move(now)),
      configPollPeriod_(configPollPeriod) {}

asio::awaitable<ReconcileResult> Reconciler::reconcile(std::string name) {
  using Step = asio::awaitable<StepResult> (Reconciler::*)(ReconcileRun&);
  static constexpr Step kSteps[] = {
      &Reconciler::holdWhilePaused,                   // pause.cpp
      &Reconciler::finalizeUnlessBlocked,             // finalizer.cpp
      &Reconciler::loadSpecOrReportInvalid,           // spec.cpp
      &Reconciler::computeDesired,                    // desired.cpp
      &Reconciler::checkPrerequisites,                // prerequisites.cpp
      &Reconciler::ensureFinalizerAndClaimDriverName, // below: finalizer.cpp, driver_name.cpp
      &Reconciler::applyChildren,                     // children.cpp
      &Reconciler::prune,                             // prune.cpp
      &Reconciler::rollNodePlugins,                   // node_plugins.cpp
      &Reconciler::reportStatus,                      // status_step.cpp
  };
  std::optional<ReconcileRun> run = takeSnapshot(name); // snapshot.cpp
  if (!run) {
    co_return ReconcileResult::done();
  }
  for (const Step step : kSteps) {
    if (StepResult end = co_await (this->*step)(*run)) {
      co_return std::move(*end);
    }
  }
  co_return ReconcileResult::done();
}

asio::awaitable<StepResult> Reconciler::ensureFinalizerAndClaimDriverName(ReconcileRun& run) {
  std::vector<asio::awaitable<StepResult>> both;
  both.push_back(ensureFinalizer(run));
  both.push_back(claimDriverName(run));
  std::vector<StepResult> results = co_await runtime::allOf(std::move(both));
  for (StepResult& result : results) {
    if (result) {
      co_return std::move(result);
    }
  }
  co_return std::nullopt;
}

const Json* Reconciler::live(const Json& desired) {
  const ObjectKey k = keyOf(desired);
  if (k.kind == "CSIDriver") {
    return caches_.csiDrivers.get("", k.name);
  }
  Informer* cache = caches_.child(k.kind);
  return cache == nullptr ? nullptr : cache->get(k.namespace_, k.name);
}

std::vector<std::string> Reconciler::fieldManagers() const {
  return {client_.fieldManager(), kClaimFieldManager};
}

std::vector<Json> Reconciler::ownedChildren(const std::string& name, const std::string& uid) {
  const std::vector<std::string> managers = fieldManagers();
  std::vector<Json> out;
  for (auto& cache : caches_.children) {
    for (const Json* o : cache->byIndex(kByOwner, name)) {
      if (madeFor(*o, uid, managers)) {
        out.push_back(*o);
      }
    }
  }
  for (const Json* o : caches_.csiDrivers.byIndex(kByOwner, name)) {
    if (madeFor(*o, uid, managers)) {
      out.push_back(*o);
    }
  }
  return out;
}

void Reconciler::noteUnmanaged(const Json& child, Observed& o) {
  o.unmanaged.push_back(unmanagedEntry(child));
  if (flagAnnotation(child, api::kUnmanagedAnnotation) == Flag::Invalid) {
    o.annotationProblems.push_back(
        invalidFlagMessage(child, api::kUnmanagedAnnotation, keyOf(child).str()) +
        "; left unmanaged until it is corrected");
  }
}

} // namespace csiop::controller
