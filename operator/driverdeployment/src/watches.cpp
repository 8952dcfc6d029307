// What queues a reconcile (see watches.hpp).
#include <csiop/driverdeployment/watches.hpp>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/compare.hpp>

namespace csiop::driverdeployment {
using api::Json;

namespace {

// Queues the owners of `old` and of `updated` (either may be null: an add or a delete).
template <class Entry>
void queueOwners(Reconciler& reconciler, runtime::WorkQueue& queue, const Entry* old,
                 const Entry* updated) {
  for (const Entry* entry : {old, updated}) {
    if (entry != nullptr) {
      for (const auto& name : reconciler.ownersOf(*entry)) {
        queue.add(name);
      }
    }
  }
}

} // namespace

void queueReconcilesOnChange(Caches& caches, Reconciler& reconciler, runtime::WorkQueue& queue) {
  for (Informer* informer : caches.objectCaches()) {
    const bool ownStatusEchoes = informer == &caches.driverDeployments;
    informer->onChange(
        [&reconciler, &queue, ownStatusEchoes](const Json* old, const Json* updated) {
          if (ownStatusEchoes && old != nullptr && updated != nullptr &&
              onlyStatusDiffers(*old, *updated)) {
            return; // the echo of a status write: nothing the reconciler reads changed
          }
          queueOwners(reconciler, queue, old, updated);
        });
  }
  // A child's status-only change (a workload counting its pods as they start) is batched as the
  // pods' changes are: a rollout's many counts fold into one pass a second. A controller that
  // has observed a new generation goes at once: a verified rollout begins on it.
  const auto observed = [](const CachedChild& child) {
    return api::member(api::member(child.head, "status"), "observedGeneration");
  };
  for (auto& child : caches.children) {
    child->onChange(
        [&reconciler, &queue, observed](const CachedChild* old, const CachedChild* updated) {
          if (old != nullptr && updated != nullptr && observed(*old) == observed(*updated) &&
              onlyStatusDiffers(old->head, updated->head)) {
            for (const auto& name : reconciler.ownersOf(*updated)) {
              queue.addAfter(name, kPodChangeBatch);
            }
            return;
          }
          queueOwners(reconciler, queue, old, updated);
        });
  }
  // A shared object (each sidecar's ClusterRole) deleted, or changed from what this operator
  // renders: every DriverDeployment's next pass applies it again (its own applies queue none).
  caches.sharedRoles.onChange([&reconciler, &queue](const Json* old, const Json* updated) {
    for (const auto& name : reconciler.sharedChanged(old, updated)) {
      queue.add(name);
    }
  });
  // A CSINode changes as a node registers or drops a driver: its drivers' status counts it.
  caches.csiNodes.onChange(
      [&reconciler, &queue](const CachedCSINode* old, const CachedCSINode* updated) {
        reconciler.noteRegistration(old, updated);
        queueOwners(reconciler, queue, old, updated);
      });
  // The workloads' pods are batched (kPodChangeBatch). The pods with volumes (while they are
  // kept): a deletion or a node plugin rollout waiting for them goes on at once.
  const auto podChanged = [&reconciler, &queue](const CachedPod* old, const CachedPod* updated) {
    for (const CachedPod* pod : {old, updated}) {
      if (pod != nullptr) {
        for (const auto& name : reconciler.ownersOf(*pod)) {
          if (!pod->owner.empty()) {
            queue.addAfter(name, kPodChangeBatch);
          } else {
            queue.add(name);
          }
        }
      }
    }
  };
  caches.pods.onChange(podChanged);
  caches.podsWithVolumes.onChange(podChanged);
}

} // namespace csiop::driverdeployment
