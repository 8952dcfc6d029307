// The spec, validated (what the schema cannot express; the webhook normally stops an
// invalid spec earlier), and what it means with every default resolved.
#include <csiop/driverdeployment/reconciler.hpp>

#include <csiop/api/load.hpp>
#include <csiop/render/check.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;

asio::awaitable<StepResult> Reconciler::loadSpecOrReportInvalid(ReconcileRun& run) {
  api::Loaded loaded =
      api::loadDriverDeployment(run.dd, api::UnknownFields::Ignore,
                                render::admissionCheck(caches_.objectKinds(), serverMinor_));
  if (!loaded.ok()) {
    run.specErrors = std::move(loaded.errors); // reported by the status step; no child is written
    co_return run.endWithStatus(EarlyStatus::InvalidSpec);
  }
  run.spec = std::move(loaded.objects.front());
  run.effective = api::resolve(*run.spec);
  run.observed.hasController = run.effective->hasControllerWorkload();
  co_return std::nullopt;
}

} // namespace csiop::driverdeployment
