// The pods with volumes, read only while a decision needs them (caches.hpp: podsWithVolumes).
#include <csiop/driverdeployment/reconciler.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;

namespace {
// How long a decision waits for the pods with volumes to be listed before it goes on with what
// it knows (a deletion stays blocked, a rollout replaces nothing that pass).
constexpr std::chrono::seconds kPodsWithVolumesWait{30};
// A run that read them is queued again this soon: sooner than kOnDemandPodsIdle, so that the
// cache keeps running while the decision waits on those pods.
constexpr std::chrono::seconds kPodsWithVolumesRecheck{60};
static_assert(kPodsWithVolumesRecheck < kOnDemandPodsIdle);
} // namespace

asio::awaitable<bool> Reconciler::knowVolumeUsers(ReconcileRun& run, const std::string& driverName,
                                                  bool claims) {
  const bool mayHaveUsers =
      caches_.servesInlineVolumes(driverName) ||
      (claims && caches_.persistentVolumes.countByIndex(kByDriver, driverName) > 0);
  if (!mayHaveUsers) {
    co_return true; // no pod can use one
  }
  run.requeueAfter(kPodsWithVolumesRecheck);
  co_return co_await caches_.demandVolumeUsers(kPodsWithVolumesWait);
}

} // namespace csiop::driverdeployment
