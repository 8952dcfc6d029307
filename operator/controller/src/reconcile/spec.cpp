// The spec, validated (what the schema cannot express; the webhook normally stops an
// invalid spec earlier), and what it means with every default resolved.
#include <csiop/controller/reconciler.hpp>

#include <csiop/api/load.hpp>
#include <csiop/render/check.hpp>

#include "reconcile_run.hpp"

namespace csiop::controller {

namespace asio = boost::asio;

asio::awaitable<StepResult> Reconciler::loadSpecOrReportInvalid(ReconcileRun& run) {
  api::Loaded loaded = api::loadDriverDeployment(run.dd, api::UnknownFields::Ignore,
                                                 render::admissionCheck(caches_.objectKinds()));
  if (!loaded.ok()) {
    const api::DriverDeploymentStatus invalid =
        invalidSpecStatus(run.observed, run.previous, loaded.errors, now_());
    if (StepResult end = co_await writeStatus(run, invalid)) {
      co_return end;
    }
    co_return ReconcileResult::done();
  }
  run.spec = std::move(loaded.objects.front());
  run.effective = api::resolve(*run.spec);
  run.observed.hasController = run.effective->hasControllerWorkload();
  co_return std::nullopt;
}

} // namespace csiop::controller
