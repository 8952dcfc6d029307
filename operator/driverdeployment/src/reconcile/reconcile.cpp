// The pass itself, and what every step reads: the live child, the children the operator made.
#include <csiop/driverdeployment/reconciler.hpp>

#include <chrono>
#include <cstddef>
#include <iterator>

#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/field_ownership.hpp>
#include <csiop/driverdeployment/object_key.hpp>
#include <csiop/driverdeployment/ownership.hpp>
#include <csiop/driverdeployment/unmanaged.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;

Reconciler::Reconciler(kube::Client& client, Caches& caches, EventRecorder& events,
                       std::function<std::string()> now, std::chrono::milliseconds configPollPeriod)
    : client_(client), caches_(caches), events_(events), now_(std::move(now)),
      configPollPeriod_(configPollPeriod) {}

asio::awaitable<ReconcileResult> Reconciler::reconcile(std::string name) {
  using Step = asio::awaitable<StepResult> (Reconciler::*)(ReconcileRun&);
  struct NamedStep {
    Step step;
    const char* name;
  };
  static constexpr NamedStep kSteps[] = {
      {&Reconciler::holdWhilePaused, "pause"},               // pause.cpp
      {&Reconciler::finalizeUnlessBlocked, "finalize"},      // finalizer.cpp
      {&Reconciler::loadSpecOrReportInvalid, "spec"},        // spec.cpp
      {&Reconciler::computeDesired, "desired"},              // desired.cpp
      {&Reconciler::holdOperatorUpdates, "operatorUpdates"}, // operator_updates.cpp
      {&Reconciler::holdFailedNodePlugins, "rollback"},      // verified_rollouts.cpp
      {&Reconciler::checkPrerequisites, "prerequisites"},    // prerequisites.cpp
      {&Reconciler::checkDriverName, "driverName"},          // driver_name.cpp
      {&Reconciler::claimAlongWithIdentities, "claim"},      // below
      {&Reconciler::applyChildren, "children"},              // children.cpp
      {&Reconciler::prune, "prune"},                         // prune.cpp
      {&Reconciler::readPodsWhenNeeded, "pods"},             // pod_reads.cpp
      {&Reconciler::rollNodePlugins, "nodePlugins"},         // node_plugins.cpp
      {&Reconciler::releaseStartupTaints, "startupTaints"},  // startup_taints.cpp
      {&Reconciler::explainRegistration, "registration"},    // registration.cpp
      {&Reconciler::checkVolumeHealth, "volumes"},           // volume_health.cpp
      {&Reconciler::reportStatus, "status"},                 // status_step.cpp
  };
  std::optional<ReconcileRun> run = takeSnapshot(name); // snapshot.cpp
  if (!run) {
    co_return ReconcileResult::done();
  }
  // The status step (the last), where a step that ends the pass with its status skips to.
  constexpr std::size_t kStatusStep = std::size(kSteps) - 1;
  // At debug level, how long each step took (the waits on the API server are most of it).
  const bool timed = spdlog::should_log(spdlog::level::debug);
  std::string timings;
  const char* endedBy = nullptr;
  for (std::size_t i = 0; i < std::size(kSteps); ++i) {
    const NamedStep& current = kSteps[i];
    const auto start = std::chrono::steady_clock::now();
    StepResult result = co_await (this->*current.step)(*run);
    if (timed) {
      const std::chrono::duration<double, std::milli> took =
          std::chrono::steady_clock::now() - start;
      timings += fmt::format(" {} {:.1f}", current.name, took.count());
    }
    if (result.skipsToStatus() && i < kStatusStep) {
      endedBy = current.name;
      i = kStatusStep - 1;
      continue;
    }
    if (!result.goesOn()) {
      spdlog::debug("reconciled {}, ended by {} (ms:{})", name, endedBy ? endedBy : current.name,
                    timings);
      co_return std::move(result.result());
    }
  }
  spdlog::debug("reconciled {} (ms:{})", name, timings);
  co_return ReconcileResult::done();
}

asio::awaitable<StepResult> Reconciler::claimAlongWithIdentities(ReconcileRun& run) {
  std::vector<asio::awaitable<StepResult>> first;
  first.push_back(ensureFinalizer(run));
  first.push_back(claimDriverName(run));
  first.push_back(applySharedObjects(run));
  first.push_back(applyIdentities(run));
  first.push_back(readPodSecurityLevels(run));
  std::vector<StepResult> results = co_await runtime::allOf(std::move(first));
  if (run.claimLost) {
    co_await undoCreated(run);
  }
  for (StepResult& result : results) {
    if (!result.goesOn()) {
      co_return std::move(result);
    }
  }
  co_return std::nullopt;
}

const CachedChild* Reconciler::cachedChild(const Json& desired) {
  const ObjectKey key = keyOf(desired);
  const ChildInformer* cache = caches_.child(key.kind);
  return cache == nullptr ? nullptr : cache->get(key.namespace_, key.name);
}

const Json* Reconciler::liveHead(const Json& desired) {
  const ObjectKey key = keyOf(desired);
  if (key.kind == "CSIDriver") {
    return caches_.csiDrivers.get("", key.name);
  }
  const CachedChild* child = cachedChild(desired);
  return child == nullptr ? nullptr : &child->head;
}

std::vector<std::string> Reconciler::fieldManagers() const {
  return {client_.fieldManager(), kClaimFieldManager};
}

std::vector<const Json*> Reconciler::ownedChildren(const std::string& name,
                                                   const std::string& uid) {
  const std::vector<std::string> managers = fieldManagers();
  std::vector<const Json*> out;
  for (auto& cache : caches_.children) {
    for (const CachedChild* child : cache->byIndex(kByOwner, name)) {
      if (madeFor(child->head, uid, managers)) {
        out.push_back(&child->head);
      }
    }
  }
  for (const Json* driver : caches_.csiDrivers.byIndex(kByOwner, name)) {
    if (madeFor(*driver, uid, managers)) {
      out.push_back(driver);
    }
  }
  return out;
}

void Reconciler::noteUnmanaged(const Json& child, Observed& observed) {
  observed.unmanaged.push_back(unmanagedEntry(child));
  if (flagAnnotation(child, api::kUnmanagedAnnotation) == Flag::Invalid) {
    observed.annotationProblems.push_back(
        invalidFlagMessage(child, api::kUnmanagedAnnotation, keyOf(child).str()) +
        "; left unmanaged until it is corrected");
  }
}

} // namespace csiop::driverdeployment
