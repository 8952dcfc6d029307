// The verified rollout of the controller workload (spec.rollout type Verified): the Deployment or
// StatefulSet replaces its pods by its own strategy, and the operator judges the new pod
// template before it calls the rollout done:
//   Available    every replica runs the new template and is available (the workload's own
//                status, at its current generation), each new pod Ready for kControllerStableFor,
//                within progressDeadlineSeconds; a new pod that crash-loops fails the gate at once;
//   SmokeVolume  where spec.rollout.smokeVolume names a StorageClass: one claim of it provisioned
//                through the new controller (Bound within gateTimeoutSeconds).
// A failed gate puts the previous revision's template back (the Deployment's ReplicaSet or the
// StatefulSet's ControllerRevision of that revision, found by the pods' pod-template-hash or
// controller-revision-hash) or holds, as the policy says; the failed template is not tried again
// until it changes (or a retry). The workload's first creation is not gated.
//
// Pure, with time injected, like verified_rollout.hpp's node plan; the record is the same type
// (status.rollout.controller): revision and from are pod revision hashes, updated and total the
// updated replicas and the desired ones.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <csiop/driverdeployment/verified_rollout.hpp>

namespace csiop::driverdeployment {

// How long each new replica must have been Ready before the Available gate passes: a container
// with no readiness probe that exits at start is Ready for a moment before its first crash, and
// the kubelet restarts it within seconds (then backs off), so a crash shows within this time.
inline constexpr std::chrono::seconds kControllerStableFor{10};

// The controller workload as its status and its pods tell.
struct ControllerWorkload {
  // Its controller has seen its latest spec (observedGeneration, and the operator's last apply).
  bool settled = false;
  std::int32_t replicas = 0;  // spec.replicas
  std::int32_t current = 0;   // status.replicas: pods of every revision
  std::int32_t updated = 0;   // status.updatedReplicas
  std::int32_t available = 0; // status.availableReplicas
  // Its pods (node unused); revision is pod-template-hash or controller-revision-hash.
  std::vector<PluginPod> pods;
  // A StatefulSet: its controller replaces a pod only once the one before it is Ready, so a
  // broken pod blocks the return of the previous template until it is deleted (Kubernetes'
  // "forced rollback"); a Deployment replaces its new pods by itself.
  bool orderedPods = false;
};

struct ControllerRolloutInput {
  WallTime now;
  RolloutPolicy policy; // progressDeadline, gateTimeout, rollBack, smokeVolume
  RolloutRecord previous;
  std::string templateDigest; // the operator's digest of the template it wants applied
  ControllerWorkload workload;
  SmokeResult smoke;       // the provision test of this rollout (policy.smokeVolume)
  WallTime smokeStarted{}; // when its claim was created (the epoch: not yet)
};

struct ControllerRolloutPlan {
  RolloutRecord record;
  bool smoke = false;       // the provision test must exist (create it if it does not)
  bool removeSmoke = false; // delete every provision test
  // Apply the template of this revision to the workload instead of the desired one (a rollback).
  std::optional<std::string> revertTo;
  std::string waiting; // what the rollout waits for ("": nothing)
  // Pods to delete (orderedPods): those of another revision than the one rolled back to, once
  // the workload carries it again.
  std::vector<Replacement> deletePods;
  std::vector<RolloutEvent> events;
};

ControllerRolloutPlan planControllerRollout(const ControllerRolloutInput& input);

} // namespace csiop::driverdeployment
