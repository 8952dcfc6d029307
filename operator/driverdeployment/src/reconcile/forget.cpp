// What the reconciler keeps per DriverDeployment between passes, dropped once it is gone: the
// reconcile of a name the cache no longer has (its deletion queues it), or of one the cache shows
// finalized.
#include <csiop/driverdeployment/reconciler.hpp>

namespace csiop::driverdeployment {

void Reconciler::forget(const std::string& name) {
  statusWritten_.erase(name);
  forcedDeletions_.erase(name);
  finalized_.erase(name);
  waitingNodes_.erase(name);
  rollouts_.erase(name);
  smokeSwept_.erase(name);
  prePullsLeft_.erase(name);
  controllerRollouts_.erase(name);
  provisionsClean_.erase(name);
  registrarLogs_.erase(name);
  unregistered_.erase(name);
  podReadClocks_.erase(name);
  if (podWatchers_.erase(name) > 0) {
    caches_.podsOnDemand.hold(!podWatchers_.empty());
  }
  volumeFailures_.erase(name);
  claimLookups_.erase(name);
  volumeFailureObjects_.erase(name);
  stopWaitingForPrerequisites(name);
  applied_.forgetOwner(name);
}

std::size_t Reconciler::trackedStateEntries() const {
  std::size_t n = statusWritten_.size() + forcedDeletions_.size() + finalized_.size() +
                  waitingNodes_.size() + rollouts_.size() + smokeSwept_.size() +
                  prePullsLeft_.size() + controllerRollouts_.size() + provisionsClean_.size() +
                  applied_.size() + registrarLogs_.size() + unregistered_.size() +
                  podReadClocks_.size() + podWatchers_.size() + volumeFailures_.size() +
                  claimLookups_.size() + volumeFailureObjects_.size();
  for (const auto& [what, names] : waitingFor_) {
    n += names.size();
  }
  return n;
}

} // namespace csiop::driverdeployment
