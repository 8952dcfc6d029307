#include <csiop/runtime/workers.hpp>

#include <chrono>
#include <exception>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <spdlog/spdlog.h>

namespace csiop::runtime {

namespace asio = boost::asio;

Workers::Workers(WorkQueue& queue, OperatorMetrics& metrics, Reconcile reconcile)
    : queue_(queue), metrics_(metrics), reconcile_(std::move(reconcile)) {}

void Workers::start(const asio::any_io_executor& executor, int workers,
                    TaskSupervisor& supervisor) {
  for (int i = 1; i <= workers; ++i) {
    asio::co_spawn(executor, worker(), supervisor.supervise("worker " + std::to_string(i)));
  }
}

asio::awaitable<void> Workers::worker() {
  using Outcome = ReconcileResult::Outcome;
  while (auto key = co_await queue_.get()) {
    const auto start = std::chrono::steady_clock::now();
    ReconcileResult result;
    try {
      result = co_await reconcile_(*key);
    } catch (const std::exception& e) {
      result = ReconcileResult::error(e.what()); // the last resort
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    switch (result.outcome) {
    case Outcome::Done:
      queue_.forget(*key);
      break;
    case Outcome::Requeue:
      queue_.forget(*key);
      queue_.addAfter(*key, result.after);
      break;
    case Outcome::Error:
      if (result.retryAfter > std::chrono::milliseconds::zero()) {
        spdlog::warn("reconcile {}: {} (the server asks to wait {} ms)", *key, result.message,
                     result.retryAfter.count());
      } else {
        spdlog::warn("reconcile {}: {}", *key, result.message);
      }
      queue_.addRateLimited(*key, result.retryAfter);
      break;
    }
    metrics_.observeReconcile(result.outcome, seconds);
    queue_.done(*key);
    metrics_.setWorkqueueDepth(queue_.len());
    if (afterEach_) {
      afterEach_();
    }
  }
}

} // namespace csiop::runtime
