// The state one reconcile pass carries from step to step (reconciler.hpp lists the steps).
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <csiop/api/defaults.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/api/types.hpp>
#include <csiop/driverdeployment/cached_pod.hpp>
#include <csiop/driverdeployment/csi_driver_decision.hpp>
#include <csiop/driverdeployment/error_line.hpp>
#include <csiop/driverdeployment/reconciler.hpp>
#include <csiop/driverdeployment/status.hpp>
#include <csiop/driverdeployment/volume_usage.hpp>

namespace csiop::driverdeployment {

// What the status step reports when a step ended the pass early (ReconcileRun::endWithStatus).
enum class EarlyStatus {
  Paused,       // spec.paused: the previous status, with the Paused condition (pausedStatus)
  InvalidSpec,  // the spec fails validation (invalidSpecStatus, with ReconcileRun::specErrors)
  NameConflict, // the driver name is someone else's (computeStatus, with observed.conflictWith)
};

struct ReconcileRun {
  // takeSnapshot: the DriverDeployment as cached when the pass began (a copy: the cache changes
  // while the pass waits); ensureFinalizer replaces its metadata with the server's answer.
  api::Json dd;
  std::string name;
  std::string uid;
  // The status the DriverDeployment had: conditions keep their transition times, and Events are
  // recorded only when a condition changes.
  std::optional<api::DriverDeploymentStatus> previous;
  // What the pass observed, for the status (filled in by every step).
  Observed observed;
  // The longest wait the API server asked for when a request of this pass failed (Retry-After):
  // the pass's Error result carries it.
  std::chrono::seconds retryWait{0};

  // loadSpecOrReportInvalid: the validated spec and what it means with every default resolved.
  std::optional<api::DriverDeployment> spec;
  std::optional<api::Effective> effective;

  // computeDesired: the rendered children (the CSIDriver among them), with the content hashes
  // of the configuration their pods reference; pollConfig if any workload references some
  // (read again every configPollPeriod).
  std::vector<api::Json> desired;
  // The objects of every driver at once that the children name (render::isShared), taken out of
  // `desired`: no child of this DriverDeployment (applySharedObjects).
  std::vector<api::Json> shared;
  bool pollConfig = false;
  // holdFailedNodePlugins: the operator's digest of each node plugin DaemonSet's desired pod
  // template (by DaemonSet name), as rendered (before a rollback puts the previous one back).
  std::map<std::string, std::string> nodeTemplates;
  // holdFailedController: the same of the controller workload ("": none).
  std::string controllerTemplate;
  // A step that needs the pass again after a while though nothing may change meanwhile (a
  // rollout's soak or gate deadline): the shortest wait asked for.
  std::optional<std::chrono::milliseconds> requeue;
  // The DriverDeployment whose smoke tests are swept: its name and the namespace of its
  // workloads, from the spec as written when no step has resolved it (the finalizer runs first).
  SmokeTestOwner testOwner() const {
    if (effective) {
      return {effective->name, effective->namespace_};
    }
    const api::Json& written = api::member(dd, "spec");
    return {name, api::driverNamespaceOf(name, api::stringField(written, "namespace"))};
  }

  void requeueAfter(std::chrono::milliseconds after) {
    requeue = requeue ? std::min(*requeue, after) : after;
  }

  // holdOperatorUpdates: the workloads ("Kind ns/name") whose change is the operator's own and
  // held (spec.operatorUpdates Manual): not applied.
  std::set<std::string> heldWorkloads;

  // checkPrerequisites: the kinds of desired children whose API is not served (not applied).
  std::set<std::string> unservedKinds;
  // checkPodSecurity (applyChildren): the workloads not created yet whose pods the namespace's Pod
  // Security level would refuse ("Kind ns/name"): not applied (reported as a missing prerequisite).
  std::set<std::string> refusedWorkloads;

  // checkDriverName: what the driver name needs (a claim: Create or Recreate, the live
  // CSIDriver's uid for the latter), and whether the CSIDriver is this DriverDeployment's and
  // to be applied (with the children's first wave).
  CSIDriverDecision::Action claim = CSIDriverDecision::Action::Keep;
  std::string claimedOverUid;
  std::string csiDriverChange; // Recreate: the immutable fields that changed
  bool applyCSIDriver = false;
  // claimDriverName: someone else's write won the race for the name (AlreadyExists, or the
  // CSIDriver changed under a Recreate).
  bool claimLost = false;
  // claimAlongWithIdentities: the ServiceAccounts and the driver's own (Cluster)Roles were applied
  // with the claim (their namespaces were there), so every other child goes in one wave.
  bool identitiesApplied = false;
  // claimAlongWithIdentities: the Pod Security level each namespace of a workload about to be
  // created enforces, read from the API server with the claim ("": none, or the namespace is not
  // there yet); a namespace not read is read by checkPodSecurity.
  std::map<std::string, std::string> podSecurityLevels;
  // What this pass created (createChild), for a lost claim to delete again: each as answered.
  std::vector<api::Json> created;
  // ServiceAccounts ("ns/name") that exist and are someone else's: the workloads that would run
  // as one of them are not applied.
  std::set<std::string> foreignAccounts;

  // readPodsWhenNeeded: the workloads' pods are known (pod_reads.hpp): cached, or listed for this
  // pass alone (listedPods, a stall's explanation); else the steps that read them take their
  // counts from the workloads' status.
  bool podsRead = false;
  std::optional<std::vector<CachedPod>> listedPods;

  // loadSpecOrReportInvalid: why the spec is invalid (one line each), for EarlyStatus::InvalidSpec.
  std::vector<std::string> specErrors;

  // A step that ended the pass early: what the status step reports (instead of everything the
  // pass observed) and the result the pass then ends with, unless writing the status ends it
  // first (a conflict, an error). Unset: the pass went through every step.
  struct EarlyEnd {
    EarlyStatus status;
    ReconcileResult result;
  };
  std::optional<EarlyEnd> endedEarly;

  // Ends the pass with the status step, which reports `status`; then the pass ends with `result`.
  StepResult endWithStatus(EarlyStatus status, ReconcileResult result = ReconcileResult::done()) {
    endedEarly = EarlyEnd{status, std::move(result)};
    return StepResult::toStatus();
  }

  const api::Json& desiredCSIDriver() const;
  // A child that could not be applied (or pruned, or replaced): to the status, and its wait to
  // retryWait. The pass goes on, and ends as an Error.
  void addError(ErrorLine error) {
    observed.applyErrors.push_back(std::move(error.text));
    retryWait = std::max(retryWait, error.retryWait);
  }
};

} // namespace csiop::driverdeployment
