// spec.paused holds everything but the status.
#include <csiop/controller/reconciler.hpp>

#include "reconcile_run.hpp"

namespace csiop::controller {

namespace asio = boost::asio;

asio::awaitable<StepResult> Reconciler::holdWhilePaused(ReconcileRun& run) {
  const Observed& o = run.observed;
  const bool wasPaused = conditionTrue(run.previous, condition::kPaused);
  if (!o.paused) {
    if (wasPaused) {
      co_await events_.record(run.dd, false, "Resumed",
                              "spec.paused is false: managing the driver again");
    }
    co_return std::nullopt;
  }
  if (!wasPaused) {
    co_await events_.record(run.dd, false, "Paused",
                            o.deleting ? "spec.paused is true: the deletion waits until it is false"
                                       : "spec.paused is true: nothing is applied, pruned or "
                                         "deleted until it is false");
  }
  // The status stays what was last observed, with the pause said (and observed).
  if (StepResult end = co_await writeStatus(run, pausedStatus(o, run.previous, now_()))) {
    co_return end;
  }
  co_return ReconcileResult::done();
}

} // namespace csiop::controller
