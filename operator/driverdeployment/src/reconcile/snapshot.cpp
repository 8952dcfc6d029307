// The DriverDeployment as the cache holds it when the pass begins.
#include <csiop/driverdeployment/reconciler.hpp>

#include <csiop/api/codec.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/ownership.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

using api::Json;

bool Reconciler::finalized(const std::string& name, const std::string& uid) const {
  const auto it = finalized_.find(name);
  return it != finalized_.end() && it->second == uid;
}

std::optional<ReconcileRun> Reconciler::takeSnapshot(const std::string& name) {
  const Json* cached = caches_.driverDeployments.get("", name);
  if (cached == nullptr) {
    forget(name);
    return std::nullopt; // deleted: nothing of it is left to manage
  }
  ReconcileRun run;
  run.dd = *cached;
  run.name = name;
  run.uid = api::metadataField(run.dd, "uid");
  const api::Decoded decoded = api::decode(run.dd);
  run.previous = decoded.object.status;
  Observed& observed = run.observed;
  observed.generation = decoded.object.generation();
  observed.deleting = run.dd["metadata"].contains("deletionTimestamp");
  observed.paused = api::isTrue(run.dd.value("spec", Json::object()), "paused");
  if (observed.deleting && finalized(name, run.uid)) {
    return std::nullopt; // this process removed the finalizer; the cache has not shown it yet
  }
  if (observed.deleting && !hasFinalizer(run.dd, kFinalizer)) {
    forget(name);
    return std::nullopt; // finalized: the API server removes it
  }
  return run;
}

} // namespace csiop::driverdeployment
