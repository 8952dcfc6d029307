// The worker loop (controller-runtime calls it the controller): `workers` coroutines take keys from
// the work queue (one reconcile per key at a time: the queue never hands out a key in flight)
// and act on what each reconcile returns: Done resets the key's backoff, Requeue queues it again
// after its delay, Error queues it with the key's exponential backoff, or after the wait the API
// server asked for (Retry-After) when that is longer. An exception out of a reconcile is the last
// resort and counts as an Error; one out of the loop itself ends the worker, and its supervisor
// makes that fatal (supervised.hpp). Every reconcile is counted in the operator's metrics
// (csiop_reconcile_total, csiop_reconcile_duration_seconds).
//
// Single-threaded: on the queue's executor.
#pragma once

#include <functional>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <csiop/runtime/operator_metrics.hpp>
#include <csiop/runtime/reconcile_result.hpp>
#include <csiop/runtime/supervised.hpp>
#include <csiop/runtime/workqueue.hpp>

namespace csiop::runtime {

class Workers {
public:
  using Reconcile = std::function<boost::asio::awaitable<ReconcileResult>(std::string key)>;

  // `queue` and `metrics` must outlive the workers (they end once the queue is shut down).
  Workers(WorkQueue& queue, OperatorMetrics& metrics, Reconcile reconcile);

  // Called after each reconcile, e.g. to refresh a gauge of what the caches hold.
  void afterEach(std::function<void()> hook) { afterEach_ = std::move(hook); }

  // Spawns `workers` workers on `executor`, supervised by `supervisor` ("worker 1", ...), which
  // must outlive them.
  void start(const boost::asio::any_io_executor& executor, int workers, TaskSupervisor& supervisor);

private:
  boost::asio::awaitable<void> worker();

  WorkQueue& queue_;
  OperatorMetrics& metrics_;
  Reconcile reconcile_;
  std::function<void()> afterEach_;
};

} // namespace csiop::runtime
