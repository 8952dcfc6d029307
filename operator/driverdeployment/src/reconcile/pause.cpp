// spec.paused holds everything but the status (the status step writes it).
#include <csiop/driverdeployment/reconciler.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;

asio::awaitable<StepResult> Reconciler::holdWhilePaused(ReconcileRun& run) {
  const Observed& observed = run.observed;
  const bool wasPaused = conditionTrue(run.previous, condition::kPaused);
  if (!observed.paused) {
    if (wasPaused) {
      co_await events_.record(run.dd, false, "Resumed",
                              "spec.paused is false: managing the driver again");
    }
    co_return std::nullopt;
  }
  if (!wasPaused) {
    co_await events_.record(run.dd, false, "Paused",
                            observed.deleting
                                ? "spec.paused is true: the deletion waits until it is false"
                                : "spec.paused is true: nothing is applied, pruned or "
                                  "deleted until it is false");
  }
  // The status stays what was last observed, with the pause said (and observed).
  co_return run.endWithStatus(EarlyStatus::Paused);
}

} // namespace csiop::driverdeployment
