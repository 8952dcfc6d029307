// The driver name. The CSIDriver object decides who owns it (decideCSIDriver,
// from the cache): a name held by someone else is a conflict, reported and nothing applied; an
// immutable field changed means a new CSIDriver. The claim is made with the finalizer; the whole
// CSIDriver is applied with the children's first wave (children.cpp).
#include <csiop/driverdeployment/reconciler.hpp>

#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/csi_driver_decision.hpp>
#include <csiop/driverdeployment/field_ownership.hpp>
#include <csiop/driverdeployment/ownership.hpp>
#include <csiop/driverdeployment/unmanaged.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/render/render.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"
#include "requests.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::metadataField;
using api::stringField;
using Action = CSIDriverDecision::Action;

asio::awaitable<StepResult> Reconciler::checkDriverName(ReconcileRun& run) {
  Observed& observed = run.observed;
  const Json& desired = run.desiredCSIDriver();
  const std::string& driverName = run.spec->spec.driverName;
  const Json* liveDriver = caches_.csiDrivers.get("", driverName);
  const bool adopt = stringField(run.dd["metadata"].value("annotations", Json::object()),
                                 api::kAdoptAnnotation) == "true";
  CSIDriverDecision decision =
      decideCSIDriver(liveDriver, desired, run.uid, adopt, csiDriverImmutableFields(serverMinor_));
  if (liveDriver != nullptr && ownedBy(*liveDriver, run.uid) && !managed(*liveDriver)) {
    noteUnmanaged(*liveDriver, observed);
    decision.action = Action::Keep;
  }
  if (decision.action == Action::Conflict) {
    observed.conflictWith = decision.detail;
    if (!conditionTrue(run.previous, condition::kDriverNameConflict)) {
      co_await events_.record(run.dd, true, "DriverNameConflict",
                              "driver name " + driverName + " is already used by " +
                                  decision.detail);
    }
    co_return run.endWithStatus(EarlyStatus::NameConflict); // nothing else is written
  }
  if (decision.action == Action::Keep) {
    co_return std::nullopt;
  }
  run.applyCSIDriver = true;
  if (decision.action != Action::Apply) { // ours already: nothing to claim
    run.claim = decision.action;
    run.claimedOverUid = liveDriver != nullptr ? metadataField(*liveDriver, "uid") : "";
    run.csiDriverChange = decision.detail;
  }
  co_return std::nullopt;
}

asio::awaitable<StepResult> Reconciler::claimDriverName(ReconcileRun& run) {
  if (run.claim != Action::Create && run.claim != Action::Recreate) {
    co_return std::nullopt;
  }
  Observed& observed = run.observed;
  const std::string& driverName = run.spec->spec.driverName;
  auto written = co_await claimCSIDriver(run.claim, run.desiredCSIDriver(), run.claimedOverUid);
  if (written.alreadyExists() || written.conflict() || written.notFound()) {
    // Someone created or changed it between the cache's read and this write: decide again from
    // the cache, which will show it (what went with the claim is deleted: undoCreated).
    run.claimLost = true;
    co_return ReconcileResult::requeueAfter(requeue::kDriverNameRace);
  }
  if (!written) {
    co_return failedWith(ErrorLine::of("", written));
  }
  if (run.claim == Action::Recreate) {
    observed.csiDriverRecreated = "CSIDriver " + driverName + " was recreated because " +
                                  run.csiDriverChange + " changed (immutable on a CSIDriver)";
    co_await events_.record(run.dd, false, "CSIDriverRecreated", *observed.csiDriverRecreated);
  }
  co_return std::nullopt;
}

asio::awaitable<void> Reconciler::undoCreated(ReconcileRun& run) {
  if (run.created.empty()) {
    co_return;
  }
  spdlog::info("the driver name {} of DriverDeployment {} was taken meanwhile: deleting the {} "
               "object(s) created with the claim",
               run.spec->spec.driverName, run.name, run.created.size());
  std::vector<asio::awaitable<std::optional<ErrorLine>>> deletions;
  for (const Json& head : run.created) {
    deletions.push_back(deleteChild(head, run.name));
  }
  for (std::optional<ErrorLine>& error : co_await runtime::allOf(std::move(deletions))) {
    if (error) {
      run.addError(std::move(*error)); // the owner reference takes it with the DriverDeployment
    }
  }
  run.created.clear();
}

asio::awaitable<kube::Attempt<Json>> Reconciler::claimCSIDriver(CSIDriverDecision::Action action,
                                                                const Json& desired,
                                                                std::string oldUid) {
  const kube::ResourceRef& ref = caches_.csiDrivers.resource();
  if (action == Action::Recreate) {
    const kube::DeleteOptions options = deleteOnly(oldUid);
    auto removed =
        co_await kube::attempt(client_.remove(ref, "", metadataField(desired, "name"), options));
    if (!removed) {
      co_return removed;
    }
  }
  // The claim is a create: of two DriverDeployments (or operators) racing for a name exactly
  // one succeeds, and the other gets AlreadyExists. It carries only what identifies the owner
  // and the server's immutable fields, under a field manager of its own; the apply that follows
  // owns everything else, so later applies can drop fields.
  Json claim = csiDriverClaim(desired, csiDriverImmutableFields(serverMinor_));
  const kube::CreateOptions options{.fieldManager = kClaimFieldManager};
  co_return co_await kube::attempt(client_.create(ref, std::move(claim), options));
}

asio::awaitable<std::optional<ErrorLine>> Reconciler::applyCSIDriver(const Json& desired) {
  kube::Warnings warnings;
  const kube::ApplyOptions options{.warnings = &warnings};
  auto applied =
      co_await kube::attempt(client_.apply(caches_.csiDrivers.resource(), desired, options));
  if (!applied) {
    co_return ErrorLine::of("CSIDriver " + metadataField(desired, "name") + ": ", applied);
  }
  applied_.remember(desired, *applied, std::move(warnings));
  co_return std::nullopt;
}

} // namespace csiop::driverdeployment
