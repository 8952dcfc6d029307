// What queues a reconcile: the DriverDeployment controller's watches. Every cache's change is
// mapped to the DriverDeployments it concerns (Reconciler::ownersOf, owners_of.cpp) and those
// are added to the work queue; beside these, runtime::PeriodicResync queues every
// DriverDeployment each resync period and the manager's prerequisite poll queues those that
// waited for a CRD or PriorityClass that is now served.
#pragma once

#include <chrono>

#include <csiop/driverdeployment/caches.hpp>
#include <csiop/driverdeployment/reconciler.hpp>
#include <csiop/runtime/workqueue.hpp>

namespace csiop::driverdeployment {

// A workload's pods change one by one through a rollout (each becoming ready is a change), and
// its status counts them as they do: their DriverDeployment is reconciled once for the changes of
// this long, not once per pod or count.
inline constexpr std::chrono::seconds kPodChangeBatch{1};

// Registers the change handlers of every cache in `caches` so that each change queues the
// DriverDeployments it concerns. The echo of the operator's own status write (a
// DriverDeployment whose status alone changed) queues nothing. `caches`, `reconciler` and
// `queue` must outlive the caches' handlers.
void queueReconcilesOnChange(Caches& caches, Reconciler& reconciler, runtime::WorkQueue& queue);

} // namespace csiop::driverdeployment
