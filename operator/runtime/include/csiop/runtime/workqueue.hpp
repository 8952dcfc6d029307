// The controller work queue: client-go's workqueue (Type + delaying queue +
// rate-limiting queue) for a single-threaded Boost.Asio io_context.
//
// Keys are strings (a DriverDeployment name). Semantics, as client-go:
// - add() deduplicates: a key queued twice is handed out once.
// - A key is never handed out while it is in flight (between get() and
//   done()); adding it meanwhile marks it dirty, and done() queues it again.
// - addAfter() holds a key until its delay has passed (the earliest pending
//   deadline wins when added twice); addRateLimited() delays by the rate
//   limiter (per-key exponential backoff, max'ed with a global token bucket);
//   forget() resets the key's backoff.
// Shutdown differs from client-go on purpose (see shutdown()).
//
// Thread-safety: none. Every member, and the coroutines that await get() and
// shutDownWithDrain(), must run on the queue's (single-threaded) executor.
// The queue must outlive every coroutine suspended in get() or
// shutDownWithDrain(): shut it down and let them return first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csiop/runtime/clock.hpp>
#include <csiop/runtime/rate_limiter.hpp>

namespace csiop::runtime {

class WorkQueue {
public:
  using Duration = Clock::Duration;

  // `rateLimiter` null: makeControllerRateLimiter(clock) (5ms..1000s per key,
  // 10 qps / burst 100 overall). `clock` must outlive the queue.
  explicit WorkQueue(boost::asio::any_io_executor executor, Clock& clock = steadyClock(),
                     std::unique_ptr<RateLimiter> rateLimiter = nullptr);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queue `key` now. Ignored after shutdown.
  void add(const std::string& key);
  // Queue `key` once `delay` has passed (delay <= 0: now). If the key already
  // waits for a later deadline, the earlier one replaces it; a later one is
  // ignored. Ignored after shutdown.
  void addAfter(const std::string& key, Duration delay);
  // addAfter(key, rateLimiter.when(key)), or after `atLeast` when that is longer (the wait the
  // API server asked for): one more failure for `key`.
  void addRateLimited(const std::string& key, Duration atLeast = Duration::zero());
  // Resets the backoff of `key` (call after a successful reconcile).
  void forget(const std::string& key);
  // Failures counted for `key` since the last forget().
  int numRequeues(const std::string& key) const;

  // Waits for the next key and marks it in flight; the caller must call
  // done(key) when finished with it. nullopt once the queue is shut down
  // (also wakes every waiter). Any number of coroutines may wait at once.
  // Cancellable (per-operation cancellation, e.g. `get() || timer`): a
  // cancelled get() throws operation_aborted and takes no key.
  boost::asio::awaitable<std::optional<std::string>> get();
  // Ends processing of `key`. If it was added while in flight, it is queued
  // again now. Unknown keys (not in flight) are ignored.
  void done(const std::string& key);

  // Shutdown. Stops accepting keys and drops the ones not started yet (queued
  // or waiting for a delay); every get() returns nullopt from now on. Keys in
  // flight may still call done(); they are not queued again.
  //
  // client-go's Get() keeps handing out already-queued items after ShutDown.
  // Here they are dropped instead: reconcile is level-triggered, so nothing
  // is lost (the next leader, or the next start, lists and queues every object
  // again), and termination stays within the pod's grace period however long
  // the backlog is.
  void shutdown();
  // shutdown(), then waits until every key in flight is done() (client-go
  // ShutDownWithDrain: in-flight work finishes). Calling shutdown() while it
  // waits makes it return at once (as in client-go).
  boost::asio::awaitable<void> shutDownWithDrain();
  bool shuttingDown() const { return shuttingDown_; }

  // Keys ready to be handed out (the depth metric; client-go Len()).
  std::size_t len() const { return queue_.size(); }
  // Keys in flight, and keys waiting for a delay to pass.
  std::size_t numProcessing() const { return processing_.size(); }
  std::size_t numWaiting() const { return waiting_.size(); }

private:
  struct Waiting {
    Clock::TimePoint readyAt;
    std::uint64_t sequence;
    std::string key;
    bool operator<(const Waiting& other) const;
  };

  void push(const std::string& key);
  void armDelayTimer();
  void onDelayTimer();
  void dropPending();

  boost::asio::any_io_executor executor_;
  Clock& clock_;
  std::unique_ptr<RateLimiter> rateLimiter_;

  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;      // queued, or re-added while in flight
  std::unordered_set<std::string> processing_; // handed out, done() not yet called

  std::set<Waiting> waiting_; // by deadline, then by insertion
  std::unordered_map<std::string, std::set<Waiting>::iterator> waitingByKey_;
  std::uint64_t sequence_ = 0;
  std::unique_ptr<Timer> delayTimer_;
  std::optional<Clock::TimePoint> delayTimerAt_;

  bool shuttingDown_ = false;
  std::uint64_t shutdownCalls_ = 0; // a shutdown() ends the drains begun before it
  // Condition variables: a timer that never expires; cancelling it wakes the
  // coroutines waiting on it.
  boost::asio::steady_timer getWaiters_;
  boost::asio::steady_timer drainWaiters_;
};

} // namespace csiop::runtime
