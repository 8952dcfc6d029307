// When a DriverDeployment's decisions read its workloads' pods (caches.hpp: podsOnDemand).
//
// The DaemonSet and Deployment controllers already count their pods into the workloads' status:
// how many they want, have, have updated and have ready. While that status says all is well, or
// says it is getting there, no decision needs a pod, and the operator hears none: a node plugin on
// 1,000 nodes would otherwise cost every one of its pods' changes (scheduled, started, ready...).
// The pods are read:
// - while the operator rolls them out itself, and something moves: a verified rollout (its
//   canaries, gates and rollbacks) and the WhenVolumesUnused strategy (which pod goes next).
//   While such a DriverDeployment exists the watch of the workloads' pods is held, so that a new
//   template starts its rollout in the pass that sees it;
// - on every pass for the single-pod node plugin (the node it runs on is the one registered);
// - to explain a stall: a pod not ready, or a ready node plugin whose node has not registered the
//   driver, while the counts have not moved for kPodReadAfter. Then the pods say why (an image
//   that cannot be pulled, a crash loop, an unschedulable pod, the registrar's log).
// A pure decision: the time is given.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <csiop/api/rfc3339.hpp>

namespace csiop::driverdeployment {

// How long a stall's counts stay put before its pods are read to explain it.
inline constexpr std::chrono::seconds kPodReadAfter{15};

// A workload's pods as its status counts them.
struct WorkloadPods {
  std::int32_t desired = 0;  // the pods it wants (DaemonSet: desiredNumberScheduled)
  std::int32_t existing = 0; // the pods it has (currentNumberScheduled; a Deployment's replicas)
  std::int32_t updated = 0;  // of the current template
  std::int32_t ready = 0;
  // Its controller has seen its current spec (and the cache shows the last one applied).
  bool observedCurrent = true;
  std::int64_t generation = 0;
  bool nodePlugin = false; // a node plugin's: each ready pod's node registers the driver
  // The operator rolls its pods out itself (a verified rollout, updateStrategy WhenVolumesUnused).
  bool operatorRolled = false;
};

struct PodReadInput {
  std::vector<WorkloadPods> workloads;
  // Nodes whose CSINode lists the driver.
  std::int32_t registered = 0;
  // The operator's own rollout, if it has one (a verified rollout, updateStrategy
  // WhenVolumesUnused): what it names (else ""). The pods are read while a workload it rolls is
  // not settled (a new template, a pod short, not updated or not ready) or rolloutUnderway.
  std::string operatorRollout;
  // A verified rollout's record is not finished (a phase but Complete, RolledBack or Held, or a
  // template it has not begun).
  bool rolloutUnderway = false;
  // Why every pass reads the pods ("": none does).
  std::string everyPass;
};

// Where the counts last moved (one per DriverDeployment, kept between passes).
struct PodReadClock {
  std::string counts;
  api::WallTime since{};
};

struct PodRead {
  bool read = false;
  std::string why; // when read: what the pods explain or serve
  // Read to explain a stall: this DriverDeployment's pods alone, listed for the pass (and again
  // while it lasts), not the watch of every workload's pods the operator's rollouts keep.
  bool stall = false;
  // Not read, a stall not yet kPodReadAfter old: when to look again (the counts may not move
  // again, and then nothing queues the pass).
  std::optional<api::WallTime> recheckAt;
};

// Whether this pass reads the pods; moves `clock` on when the counts moved.
PodRead podReadDecision(const PodReadInput& in, PodReadClock& clock, api::WallTime now);

} // namespace csiop::driverdeployment
