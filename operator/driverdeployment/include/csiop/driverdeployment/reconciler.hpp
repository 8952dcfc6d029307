// reconcile(name): one pass over a DriverDeployment, as a sequence of named steps
// (reconciler.cpp reads as the list; each step has its own file under src/reconcile/):
//
//   take a snapshot -> hold while paused -> finalize unless blocked -> load the spec (or report
//   it invalid) -> compute the desired objects -> check the prerequisites -> check the driver
//   name -> ensure the finalizer, claim the driver name and apply the ServiceAccounts (at the
//   same time) -> apply the children -> prune -> roll the node plugins -> release the startup
//   taints -> explain the nodes where the driver is not registered -> write the status
//
// Each step goes on, ends the pass with a ReconcileResult, or ends it with the status step (a
// paused DriverDeployment, an invalid spec, a driver name conflict: what to report is set on the
// run). The status step is the only one that writes the status, and always ends the pass.
// Level-triggered and idempotent: every pass starts from the caches, and a converged
// DriverDeployment costs no write at all.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <csiop/api/defaults.hpp>
#include <csiop/driverdeployment/applied_objects.hpp>
#include <csiop/driverdeployment/caches.hpp>
#include <csiop/driverdeployment/csi_driver_decision.hpp>
#include <csiop/driverdeployment/error_line.hpp>
#include <csiop/driverdeployment/pod_reads.hpp>
#include <csiop/driverdeployment/pre_pull.hpp>
#include <csiop/driverdeployment/registrar_logs.hpp>
#include <csiop/driverdeployment/registration_clock.hpp>
#include <csiop/driverdeployment/registration_problems.hpp>
#include <csiop/driverdeployment/smoke_volume.hpp>
#include <csiop/driverdeployment/status.hpp>
#include <csiop/driverdeployment/verified_rollout.hpp>
#include <csiop/driverdeployment/volume_usage.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/render/prerequisites.hpp>
#include <csiop/runtime/events.hpp>
#include <csiop/runtime/reconcile_result.hpp>

namespace csiop::driverdeployment {

using runtime::EventRecorder;
using runtime::ReconcileResult;

inline constexpr const char* kFinalizer = "csiop.dev/cleanup";

// How long a pass waits before the next when it ends early on purpose (errors back off in the
// work queue instead).
namespace requeue {
// The CSIDriver was created or changed by someone else between the cache's read and this write:
// decide again once the cache shows it.
inline constexpr std::chrono::milliseconds kDriverNameRace{500};
// The DriverDeployment changed between the cache's read and the status write; its own watch event
// queues it again, this is the fallback.
inline constexpr std::chrono::milliseconds kStatusConflict{200};
// Children were deleted for a deletion: look again once the caches show them gone.
inline constexpr std::chrono::milliseconds kChildrenGoing{300};
// An API or PriorityClass a driver needs is missing: the manager asks prerequisitesAppeared()
// this often (nothing the operator watches tells when an admin installs one).
inline constexpr std::chrono::milliseconds kPrerequisitesMissing{30'000};
// A verified rollout is under way: its soak and gate deadlines pass with no event to tell.
inline constexpr std::chrono::milliseconds kRolloutCheck{5'000};
} // namespace requeue

// What a step decides: std::nullopt goes on to the next step; a ReconcileResult ends the pass
// there (nothing more is written); StepResult::toStatus() skips to the status step, which
// writes the status the run's outcome says and ends the pass (ReconcileRun::endWithStatus).
class StepResult {
public:
  StepResult() = default; // goes on
  StepResult(std::nullopt_t) {}
  StepResult(ReconcileResult end) : end_(std::move(end)) {}
  static StepResult toStatus() {
    StepResult skip(std::nullopt);
    skip.toStatus_ = true;
    return skip;
  }

  bool goesOn() const { return !end_ && !toStatus_; }
  bool skipsToStatus() const { return toStatus_; }
  // The result that ends the pass (only when neither goesOn() nor skipsToStatus()).
  ReconcileResult& result() { return *end_; }

private:
  std::optional<ReconcileResult> end_;
  bool toStatus_ = false;
};

// The state one pass carries from step to step (src/reconcile/reconcile_run.hpp).
struct ReconcileRun;

class Reconciler {
public:
  Reconciler(kube::Client& client, Caches& caches, EventRecorder& events,
             std::function<std::string()> now,
             std::chrono::milliseconds configPollPeriod = std::chrono::seconds(10));

  boost::asio::awaitable<ReconcileResult> reconcile(std::string name);

  // The DriverDeployments a change of `object` (of any cached kind but pods, CSINodes and
  // children) concerns.
  std::vector<std::string> ownersOf(const api::Json& object);
  // Those a change of a cached pod concerns: its owner (a workload's pod), and for a pod with
  // volumes the node plugin rollouts waiting on its node and the deletions of its drivers.
  std::vector<std::string> ownersOf(const CachedPod& pod);
  // Those of the drivers a CSINode lists (their status counts the nodes registering them).
  std::vector<std::string> ownersOf(const CachedCSINode& csiNode);
  // Those of a child (its owner label, as ownersOf(child.head)).
  std::vector<std::string> ownersOf(const CachedChild& child);
  // shared_objects.cpp: a shared object (render::isShared) changed (`old` null: added;
  // `updated` null: deleted): the DriverDeployments whose next pass applies it again, every one
  // when it is gone or differs from this operator's rendering, none when it is as rendered (the
  // echo of the operator's own apply) or one this operator does not render.
  std::vector<std::string> sharedChanged(const api::Json* old, const api::Json* updated);
  // A CSINode changed (`old` null: added; `updated` null: deleted): the registration clock
  // stamps the drivers it begins to list (verified rollouts' Registered gate).
  void noteRegistration(const CachedCSINode* old, const CachedCSINode* updated);

  // prerequisites.cpp: asks the server again for every API and PriorityClass a
  // DriverDeployment was found to lack; returns the DriverDeployments whose missing
  // prerequisite is now there (to be reconciled). One request per missing prerequisite, however
  // many DriverDeployments wait for it.
  boost::asio::awaitable<std::vector<std::string>> prerequisitesAppeared();

  // storage.k8s.io/v1 CSIDriver, or the legacy csi.storage.k8s.io/v1alpha1 CRD
  // (whichever the caches watch, chosen from discovery at start).
  bool csiDriverV1() const { return caches_.csiDrivers.resource().group == "storage.k8s.io"; }

  // What the reconciler keeps per DriverDeployment (status writes, forced deletions, waiting
  // rollouts and prerequisites, applied children), all of it: none once every DriverDeployment
  // it reconciled is gone (for tests).
  std::size_t trackedStateEntries() const;

  // DriverDeployment -> reason -> nodes where its plugin runs and it is not registered, as of
  // its last pass (registration_problems.hpp): csiop_driver_nodes_unregistered.
  using UnregisteredCounts = std::map<std::string, std::map<std::string, std::int32_t>>;
  const UnregisteredCounts& unregisteredNodes() const { return unregistered_; }

  // DriverDeployment -> its driver's failing volumes by reason, as of its last pass
  // (volume_health.hpp): csiop_driver_volume_failures.
  const UnregisteredCounts& volumeFailures() const { return volumeFailures_; }

  // The image the smoke tests of spec.rollout.smokeVolume run in (the operator's own; "": none,
  // and a smoke test fails at its Start stage, saying so), and its pull policy.
  void setSmokeImage(std::string image, std::string pullPolicy);
  // The version of the running operator, stamped on each workload it writes (operator_update.hpp:
  // a workload written by another version differs from this one's rendering by that version's
  // change, not the spec's).
  void setOperatorVersion(std::string version) { operatorVersion_ = std::move(version); }
  // The API server's minor version (nullopt: unknown, taken as current): which CSIDriver fields
  // it refuses to change (csiDriverImmutableFields), and which fields it lacks
  // (api::checkServerVersion: an invalid spec).
  void setServerMinor(std::optional<int> minor) { serverMinor_ = minor; }

private:
  // The last status this reconciler wrote to a DriverDeployment, and the resourceVersion the
  // write made: until the cache shows it, the cached status is older than the server's.
  struct StatusWritten {
    std::string resourceVersion;
    api::Json status;
  };

  // --- the steps, in order ---------------------------------------------------------------
  // snapshot.cpp: the cached DriverDeployment, copied (the cache changes while the pass
  // waits); std::nullopt once it is gone or finalized, and then what is kept for it is dropped
  // (forget).
  std::optional<ReconcileRun> takeSnapshot(const std::string& name);
  // Whether this process removed the finalizer of `name`'s incarnation `uid` (finalize).
  bool finalized(const std::string& name, const std::string& uid) const;
  // forget.cpp: drops what is kept for the DriverDeployment `name`.
  void forget(const std::string& name);
  // pause.cpp: spec.paused: nothing is written but the status (the Paused condition): the pass
  // skips to the status step.
  boost::asio::awaitable<StepResult> holdWhilePaused(ReconcileRun& run);
  // finalizer.cpp: a DriverDeployment being deleted is finalized, unless volumes of its driver
  // are in use (it is then managed on until they are gone).
  boost::asio::awaitable<StepResult> finalizeUnlessBlocked(ReconcileRun& run);
  // spec.cpp: validation the schema could not express (normally stopped by the webhook); an
  // invalid spec skips to the status step, which reports it.
  boost::asio::awaitable<StepResult> loadSpecOrReportInvalid(ReconcileRun& run);
  // desired.cpp: render, and the content hashes of the ConfigMaps and Secrets the workloads
  // reference (their pods roll when one changes).
  boost::asio::awaitable<StepResult> computeDesired(ReconcileRun& run);
  // operator_updates.cpp: stamps each workload (spec generation and digest, operator version);
  // a workload whose difference from the running one is the operator's own change is held
  // (not applied) under spec.operatorUpdates Manual until approved.
  boost::asio::awaitable<StepResult> holdOperatorUpdates(ReconcileRun& run);
  // verified_rollouts.cpp: spec.rollout type Verified: a node plugin DaemonSet whose desired
  // template failed its rollout carries the previous revision's template instead (a rollback);
  // a csiop.dev/retry-rollout value not seen before starts the rollout over.
  boost::asio::awaitable<StepResult> holdFailedNodePlugins(ReconcileRun& run);
  // prerequisites.cpp: the APIs and PriorityClasses the driver needs but the operator does not
  // create (render/prerequisites.hpp); what is missing is reported, and children of an API
  // that is not served are not applied.
  boost::asio::awaitable<StepResult> checkPrerequisites(ReconcileRun& run);
  // pod_security.cpp (from applyChildren, once the ServiceAccounts are there): the workloads
  // not created yet in a namespace that enforces a Pod Security level: a server-side dry run of
  // a pod of each; one the level refuses is reported (with the missing prerequisites) and not
  // created, and checked again every kPrerequisitesMissing.
  boost::asio::awaitable<void> checkPodSecurity(ReconcileRun& run);
  // driver_name.cpp: the CSIDriver object decides who owns the driver name (from the cache): a
  // name someone else holds skips to the status step, which reports it, before anything else is
  // written.
  boost::asio::awaitable<StepResult> checkDriverName(ReconcileRun& run);
  // reconcile.cpp: the finalizer, the claim, the shared objects, the identities and the Pod
  // Security levels at the same time (independent requests: one round trip before the other
  // children); the first result that ends the pass, in this order. A claim lost to someone else
  // deletes what the pass created meanwhile (undoCreated).
  boost::asio::awaitable<StepResult> claimAlongWithIdentities(ReconcileRun& run);
  // finalizer.cpp: adds the finalizer if missing (not once the deletion has begun).
  boost::asio::awaitable<StepResult> ensureFinalizer(ReconcileRun& run);
  // driver_name.cpp: the claim checkDriverName decided, if any; a name that is ours and out of
  // date is applied with the children's first wave (applyCSIDriver).
  boost::asio::awaitable<StepResult> claimDriverName(ReconcileRun& run);
  // shared_objects.cpp: the shared objects the driver's bindings name (render::isShared), where
  // the cache lacks one or it differs.
  boost::asio::awaitable<StepResult> applySharedObjects(ReconcileRun& run);
  boost::asio::awaitable<std::optional<ErrorLine>> applyShared(const api::Json& desired);
  std::vector<std::string> everyDriverDeployment() const;
  // children.cpp: the ServiceAccounts and the driver's own roles (apply_waves.hpp's
  // isIdentity), if their namespaces are there: every other child then goes in one wave.
  boost::asio::awaitable<StepResult> applyIdentities(ReconcileRun& run);
  // pod_security.cpp: the Pod Security level of each namespace of a workload about to be created,
  // read from the API server (ReconcileRun::podSecurityLevels), with the claim.
  boost::asio::awaitable<StepResult> readPodSecurityLevels(ReconcileRun& run);
  // driver_name.cpp: deletes what this pass created (ReconcileRun::created), once its claim of
  // the driver name was lost: exactly those objects (uid preconditions).
  boost::asio::awaitable<void> undoCreated(ReconcileRun& run);
  // children.cpp: the Namespace, then the other children in waves.
  boost::asio::awaitable<StepResult> applyChildren(ReconcileRun& run);
  // prune.cpp: deletes the children the spec no longer wants.
  boost::asio::awaitable<StepResult> prune(ReconcileRun& run);
  // pod_reads.cpp: whether this pass reads the workloads' pods (pod_reads.hpp); if so, their
  // cache listed (a verified or WhenVolumesUnused rollout's pass ends if it cannot be).
  boost::asio::awaitable<StepResult> readPodsWhenNeeded(ReconcileRun& run);
  // pod_reads.cpp: the pods of the run's workloads, listed by the owner label for this pass.
  boost::asio::awaitable<void> listWorkloadPods(ReconcileRun& run, const std::string& why);
  // node_plugins.cpp: updateStrategy WhenVolumesUnused: replaces the out-of-date node plugin
  // pods the plan allows (node_rollout.hpp) and records the rest as waiting.
  boost::asio::awaitable<StepResult> rollNodePlugins(ReconcileRun& run);
  // startup_taints.cpp: spec.startupTaint: removes it from the nodes where the driver is
  // registered (startup_taint.hpp) and counts those it still holds.
  boost::asio::awaitable<StepResult> releaseStartupTaints(ReconcileRun& run);
  // registration.cpp: the nodes where the plugin runs and the driver is not registered, why, and
  // the registrar's last log lines (registration_problems.hpp, registrar_logs.hpp).
  boost::asio::awaitable<StepResult> explainRegistration(ReconcileRun& run);
  // volume_health.cpp
  boost::asio::awaitable<StepResult> checkVolumeHealth(ReconcileRun& run);
  boost::asio::awaitable<ClaimPhase> lookUpClaim(std::string key);
  // registration.cpp: the last lines of one registrar's log, or why they could not be read.
  struct RegistrarLogRead {
    std::vector<std::string> lines;
    std::string error;
    bool passing = false; // the error may be gone in a moment (RegistrarLogs::record)
  };
  boost::asio::awaitable<RegistrarLogRead> readRegistrarLog(UnregisteredNode node);
  // startup_taints.cpp: one node's removal: false once done (or the node gone, or no patch to
  // send), true if its taints changed since they were read, else the refusal.
  boost::asio::awaitable<std::variant<bool, ErrorLine>> release(std::string node, api::Json patch);
  // node_plugins.cpp: what both node plugin rollouts read of a node plugin DaemonSet with
  // `dsUid` from the caches: its current controller-revision-hash ("" : none recorded yet), its
  // pods, and the Node objects of their nodes (those the cache has).
  std::string nodePluginRevision(const api::Effective& effective, const std::string& dsUid);
  // The pods of the run's workloads: listed for the pass, or cached (pod_reads.cpp).
  std::vector<const CachedPod*> workloadPods(const ReconcileRun& run);
  std::vector<const CachedPod*> nodePluginPods(const ReconcileRun& run, const std::string& dsUid);
  std::map<std::string, const api::Json*> nodesOf(const std::vector<const CachedPod*>& pods);
  // pods_with_volumes.cpp: whether the pods that may use driver `driverName`'s volumes are
  // cached (Caches::volumeUsers()). `claims`: its claims' users count, not only its inline
  // volumes'. Starts the cache of the pods with volumes if a pod may use one (the driver has a
  // PersistentVolume, or serves inline volumes) and waits for its list; the run is queued again
  // before the cache would stop, so that a decision waiting on those pods keeps hearing them.
  boost::asio::awaitable<bool> knowVolumeUsers(ReconcileRun& run, const std::string& driverName,
                                               bool claims);
  // node_plugins.cpp: deletes each pod of `replace` (its uid as precondition), an Event each
  // (NodePluginReplaced, or ControllerPodReplaced for the controller's); a refusal to the pass's
  // errors (one already gone or replaced is not one).
  boost::asio::awaitable<void> replacePluginPods(ReconcileRun& run,
                                                 const std::vector<Replacement>& replace,
                                                 bool controller = false);
  // verified_rollouts.cpp: with spec.rollout type Verified, the node plugin step: plans each
  // node plugin DaemonSet's rollout (verified_rollout.hpp) and replaces the pods it names.
  boost::asio::awaitable<void> rollVerified(ReconcileRun& run);
  // smoke_volumes.cpp: spec.rollout.smokeVolume. The test of one canary (smokeTarget) and
  // how far it got; those of the canaries of `record`; starting those of `nodes` not started
  // yet (`seen`: as read this pass), after sweeping the leftovers of other tests once per
  // revision; deleting every smoke object not in `keep` (true: none is left but those);
  // sweeping them all once no test runs (`asked`: the spec asks for smoke volumes).
  SmokeTarget smokeTarget(const ReconcileRun& run, const RolloutRecord& record,
                          const std::string& node) const;
  boost::asio::awaitable<SmokeResult> readSmokeTest(ReconcileRun& run, const SmokeTarget& target);
  boost::asio::awaitable<std::map<std::string, SmokeResult>>
  readSmokeTests(ReconcileRun& run, const RolloutRecord& record);
  boost::asio::awaitable<void> startSmokeTests(ReconcileRun& run, const RolloutRecord& record,
                                               const std::vector<std::string>& nodes,
                                               const std::map<std::string, SmokeResult>& seen);
  boost::asio::awaitable<bool> sweepSmokeTests(ReconcileRun& run,
                                               const std::set<std::string>& keep);
  boost::asio::awaitable<void> endSmokeTests(ReconcileRun& run, bool asked);
  // pre_pulls.cpp: spec.rollout.prePullImages. The DriverDeployment's pre-pull pods (one LIST),
  // with what those of `revision` say; creating those of `nodes` that are missing and deleting
  // every other one; once no rollout needs them, deleting any it made.
  boost::asio::awaitable<PrePulls> readPrePulls(ReconcileRun& run, const std::string& revision);
  boost::asio::awaitable<void> syncPrePulls(ReconcileRun& run, const PrePulls& seen,
                                            const std::set<std::string>& nodes,
                                            const std::string& revision,
                                            const api::Json& podTemplate);
  boost::asio::awaitable<void> endPrePulls(ReconcileRun& run);
  // The rollout record of `daemonSet`: kept in memory, else from the previous status.
  RolloutRecord& rolloutRecord(ReconcileRun& run, const std::string& daemonSet, bool windows);
  // controller_rollouts.cpp: spec.rollout type Verified for the controller workload
  // (controller_rollout.hpp). holdFailedController, with holdFailedNodePlugins: a workload
  // whose desired template failed carries the previous revision's instead (false: it could not
  // be read, so nothing of the workload may be applied this pass); rollController, with the
  // node plugin step: plans the rollout and runs its provision test; sweepProvisionTests
  // deletes every provision claim (true: none is left).
  RolloutRecord& controllerRecord(ReconcileRun& run);
  boost::asio::awaitable<bool> holdFailedController(ReconcileRun& run);
  boost::asio::awaitable<void> rollController(ReconcileRun& run);
  boost::asio::awaitable<bool> sweepProvisionTests(ReconcileRun& run);
  // status_step.cpp: the only writer of the status: what the run's outcome says (paused, an
  // invalid spec, a name conflict), or else what the pass observed, with the workloads observed
  // here; always ends the pass (as the outcome says, or from the pass's errors).
  boost::asio::awaitable<StepResult> reportStatus(ReconcileRun& run);

  // --- what the steps share ------------------------------------------------------------------
  // prerequisites.cpp: whether the server serves group/version/resource, or has the
  // PriorityClass `name`; std::nullopt when that could not be found out. Answers are kept for
  // kPrerequisiteRecheck, unless `fresh`.
  boost::asio::awaitable<std::optional<bool>> served(const std::string& group,
                                                     const std::string& version,
                                                     const std::string& resource,
                                                     bool fresh = false);
  boost::asio::awaitable<std::optional<bool>> priorityClassExists(const std::string& name,
                                                                  bool fresh = false);
  // The cluster's PriorityClasses (one LIST, kept for kPrerequisiteRecheck); std::nullopt when
  // they could not be read.
  boost::asio::awaitable<std::optional<render::PriorityClasses>> priorityClasses();
  // finalizer.cpp
  boost::asio::awaitable<std::optional<std::string>> deletionBlocker(ReconcileRun& run);
  boost::asio::awaitable<ReconcileResult> finalize(const ReconcileRun& run);
  // Drops the owner reference and owner marks: the object stays, unmanaged. The error, or
  // std::nullopt on success (also when it is gone).
  boost::asio::awaitable<std::optional<ErrorLine>> orphan(const api::Json& child);
  // Deletes a child of DriverDeployment `owner` (that one only: its uid), in the background; the
  // error, or std::nullopt on success (also when it is gone already). `lingers` (if given) is
  // set when the answer shows the child still there, held by finalizers of its own.
  boost::asio::awaitable<std::optional<ErrorLine>>
  deleteChild(const api::Json& child, std::string owner, bool* lingers = nullptr);
  // The finalizer off the DriverDeployment (a DriverDeployment gone already is no error).
  boost::asio::awaitable<std::optional<ErrorLine>> removeFinalizer(const ReconcileRun& run);
  // desired.cpp: sets the content hash of what each workload references on its pod template;
  // true if any workload references something this DriverDeployment does not render (read again
  // every configPollPeriod_). An object
  // that cannot be read keeps the live hash.
  boost::asio::awaitable<bool> annotateConfigHashes(ReconcileRun& run);
  // driver_name.cpp: the claim decideCSIDriver decided (Create, or Recreate: the old one
  // deleted first): the create's answer, or the first failed request's error. `oldUid`: the
  // live CSIDriver's (Recreate deletes only that one).
  boost::asio::awaitable<kube::Attempt<api::Json>>
  claimCSIDriver(CSIDriverDecision::Action action, const api::Json& desired, std::string oldUid);
  // The whole CSIDriver applied, once claimed; the error, or std::nullopt on success.
  boost::asio::awaitable<std::optional<ErrorLine>> applyCSIDriver(const api::Json& desired);
  // children.cpp: `members` at the same time (but those marked unmanaged); the errors go to the
  // status.
  boost::asio::awaitable<void> applyAtOnce(ReconcileRun& run,
                                           const std::vector<const api::Json*>& members);
  // children.cpp: creates or applies one child; the error, or std::nullopt on success. What it
  // creates is added to `created` (the head: apiVersion, kind, name, namespace, uid).
  boost::asio::awaitable<std::optional<ErrorLine>>
  applyChild(const api::Json& desired, const std::string& uid, std::vector<api::Json>* created);
  // Not in the caches: a create; if it exists after all, as updateChild.
  boost::asio::awaitable<std::optional<ErrorLine>> createChild(const kube::ResourceRef& ref,
                                                               const api::Json& desired,
                                                               const std::string& uid,
                                                               std::vector<api::Json>* created);
  // Someone else's: left alone (an error marked foreign); as last applied or containing
  // `desired`: nothing; else applied (a StorageClass whose immutable fields changed: recreated).
  boost::asio::awaitable<std::optional<ErrorLine>> updateChild(const kube::ResourceRef& ref,
                                                               const api::Json& desired,
                                                               const api::Json& live,
                                                               const std::string& uid);
  // Hands what the operator created with a POST over to its server-side apply
  // (field_ownership.hpp), then applies `desired`: the apply's answer, or the first failed
  // request's error.
  boost::asio::awaitable<kube::Attempt<api::Json>>
  takeOwnershipAndApply(const kube::ResourceRef& ref, const api::Json& desired,
                        const api::Json& live, kube::Warnings* warnings);
  boost::asio::awaitable<std::optional<ErrorLine>>
  recreateStorageClass(const kube::ResourceRef& ref, const api::Json& desired, std::string oldUid);
  // status_step.cpp: the workloads' and registration's part of the status.
  void observeWorkloads(ReconcileRun& run);
  // Writes the status unless it is the one the server holds: the cached one, if the cache
  // shows this reconciler's last status write; else that write's (the cache may still hold
  // an older status, and the echo of the write queues no reconcile: manager.cpp). The write is
  // conditional on the cached resourceVersion: from a cache behind the server, a conflict,
  // which (as a DriverDeployment gone meanwhile) ends the pass with a short requeue. Only
  // reportStatus calls it; std::nullopt: written (or nothing to write).
  boost::asio::awaitable<std::optional<ReconcileResult>>
  writeStatus(const ReconcileRun& run, const api::DriverDeploymentStatus& status);
  void noteUnmanaged(const api::Json& child, Observed& observed);
  // The children the operator made for the DriverDeployment `name` with `uid` (madeFor), as
  // their heads (CachedChild::head; the CSIDriver whole): what pruning and deletion may remove.
  // A copy someone else made of one is not among them. The pointers are into the caches: valid
  // until the pass next waits (copy what outlives that).
  std::vector<const api::Json*> ownedChildren(const std::string& name, const std::string& uid);
  // The field managers the operator writes children with: its client's, and the CSIDriver
  // claim's (a claim whose apply has not happened yet is still the operator's).
  std::vector<std::string> fieldManagers() const;
  // The cached child of `desired`'s kind, namespace and name, or nullptr (also for the
  // CSIDriver, which the CSIDriver cache keeps whole).
  const CachedChild* cachedChild(const api::Json& desired);
  // What a pass reads of any child on every reconcile: the head of the cached child, or the
  // cached CSIDriver; nullptr if not cached.
  const api::Json* liveHead(const api::Json& desired);

  kube::Client& client_;
  Caches& caches_;
  EventRecorder& events_;
  std::function<std::string()> now_;
  std::chrono::milliseconds configPollPeriod_;
  AppliedObjects applied_;
  // The shared objects this process applied (their content is this binary's): one not in the
  // cache yet is not applied again by every pass until the watch shows it.
  std::set<std::string> sharedApplied_;
  // By DriverDeployment name; dropped once the cache shows the write.
  std::map<std::string, StatusWritten> statusWritten_;
  // DriverDeployment -> the uid whose forced deletion has an Event (a new one of the name gets
  // its own).
  std::map<std::string, std::string> forcedDeletions_;
  // The DriverDeployments (name -> uid) whose finalizer this process removed: a pass that a
  // child's deletion brings before the cache shows the DriverDeployment gone has nothing to do.
  std::map<std::string, std::string> finalized_;
  // DriverDeployment -> nodes its node plugin rollout waits on (a change of one requeues it).
  std::map<std::string, std::set<std::string>> waitingNodes_;
  // DriverDeployment -> node plugin DaemonSet -> its verified rollout as last planned.
  std::map<std::string, std::map<std::string, RolloutRecord>> rollouts_;
  // When each node's kubelet registered each driver, as the CSINode watch saw it.
  RegistrationClock registrations_;
  // DriverDeployment -> where its workloads' counts last moved (pod_reads.hpp).
  std::map<std::string, PodReadClock> podReadClocks_;
  // DriverDeployments with a rollout of the operator's own: while there is one, the watch of the
  // workloads' pods is held (caches.hpp: podsOnDemand).
  std::set<std::string> podWatchers_;
  // The image (and pull policy) of the smoke tests' pods: the operator's own (--smoke-image).
  std::string smokeImage_;
  std::string smokePullPolicy_;
  std::string operatorVersion_ = "unknown";
  std::optional<int> serverMinor_;
  // DriverDeployment -> the revision whose smoke tests' leftovers were swept ("": every smoke
  // object is gone); absent: not known since the operator started.
  std::map<std::string, std::string> smokeSwept_;
  // DriverDeployments whose pre-pull pods this operator made and may not all be deleted yet.
  std::set<std::string> prePullsLeft_;
  // DriverDeployment -> its controller workload's verified rollout as last planned.
  std::map<std::string, RolloutRecord> controllerRollouts_;
  // DriverDeployments known to have no provision claim left (swept, and none made since).
  std::set<std::string> provisionsClean_;
  // DriverDeployment -> the registrar logs read for its unregistered nodes.
  std::map<std::string, RegistrarLogs> registrarLogs_;
  UnregisteredCounts unregistered_;
  UnregisteredCounts volumeFailures_;
  // DriverDeployment -> the objects its driver's failing volumes were last seen on
  // ("Pod ns/name", "VolumeAttachment name"): a change of one queues it (owners_of.cpp).
  std::map<std::string, std::set<std::string>> volumeFailureObjects_;
  // DriverDeployment -> "namespace/name" of a claim a ProvisioningFailed Event of its driver
  // names -> its phase, and when it was looked up; looked up again after kClaimRecheck,
  // forgotten with the last Event that names it.
  struct ClaimLookup {
    ClaimPhase phase = ClaimPhase::Unknown;
    std::chrono::steady_clock::time_point at;
  };
  std::map<std::string, std::map<std::string, ClaimLookup>> claimLookups_;
  static constexpr std::chrono::seconds kClaimRecheck{30};
  // The most claims a pass looks up (the rest count as failing until their turn).
  static constexpr std::size_t kClaimLookupsPerPass = 10;
  // owners_of.cpp: the DriverDeployments whose rollout waits on `node`; those of `driver`
  // (only those being deleted if `deletingOnly`).
  void waitingOn(const std::string& node, std::vector<std::string>& out) const;
  // Those whose failing volumes were last seen on `object` ("Pod ns/name", ...).
  void failingOn(const std::string& object, std::vector<std::string>& out) const;
  void deletionsOf(const std::string& driver, bool deletingOnly,
                   std::vector<std::string>& out) const;
  // What checkPrerequisites found, by "group/version/resource" or "PriorityClass name", and
  // when: asked again after kPrerequisiteRecheck.
  struct Found {
    bool present = false;
    std::chrono::steady_clock::time_point at;
  };
  std::map<std::string, Found> prerequisites_;
  std::optional<render::PriorityClasses> priorityClasses_;
  std::chrono::steady_clock::time_point priorityClassesAt_;
  static constexpr std::chrono::seconds kPrerequisiteRecheck{20};
  // What is missing ("group/version/resource" or "PriorityClass name") -> the
  // DriverDeployments that need it.
  std::map<std::string, std::set<std::string>> waitingFor_;
  // prerequisites.cpp: the DriverDeployment `name` waits for nothing (until checkPrerequisites
  // finds again what it lacks).
  void stopWaitingForPrerequisites(const std::string& name);
};

} // namespace csiop::driverdeployment
