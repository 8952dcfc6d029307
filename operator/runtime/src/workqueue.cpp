#include <csiop/runtime/workqueue.hpp>

#include <algorithm>
#include <tuple>
#include <utility>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace csiop::runtime {

bool WorkQueue::Waiting::operator<(const Waiting& other) const {
  return std::tie(readyAt, sequence) < std::tie(other.readyAt, other.sequence);
}

WorkQueue::WorkQueue(boost::asio::any_io_executor executor, Clock& clock,
                     std::unique_ptr<RateLimiter> rateLimiter)
    : executor_(std::move(executor)), clock_(clock),
      rateLimiter_(rateLimiter ? std::move(rateLimiter) : makeControllerRateLimiter(clock)),
      delayTimer_(clock.makeTimer(executor_)),
      getWaiters_(executor_, boost::asio::steady_timer::time_point::max()),
      drainWaiters_(executor_, boost::asio::steady_timer::time_point::max()) {}

WorkQueue::~WorkQueue() = default;

void WorkQueue::add(const std::string& key) {
  if (shuttingDown_ || dirty_.contains(key)) {
    return;
  }
  dirty_.insert(key);
  if (processing_.contains(key)) {
    return; // done() queues it again
  }
  push(key);
}

void WorkQueue::push(const std::string& key) {
  queue_.push_back(key);
  // Wake one waiter per queued key. A woken waiter that finds the queue empty
  // (another coroutine took the key first) simply waits again, so no key is
  // ever stranded while a waiter sleeps.
  getWaiters_.cancel_one();
}

void WorkQueue::addAfter(const std::string& key, Duration delay) {
  if (shuttingDown_) {
    return;
  }
  if (delay <= Duration::zero()) {
    add(key);
    return;
  }
  const auto readyAt = clock_.now() + delay;
  if (const auto it = waitingByKey_.find(key); it != waitingByKey_.end()) {
    if (it->second->readyAt <= readyAt) {
      return;
    }
    waiting_.erase(it->second);
    waitingByKey_.erase(it);
  }
  const auto pos = waiting_.insert(Waiting{readyAt, sequence_++, key}).first;
  waitingByKey_.emplace(key, pos);
  armDelayTimer();
}

void WorkQueue::addRateLimited(const std::string& key, Duration atLeast) {
  if (shuttingDown_) {
    return;
  }
  addAfter(key, std::max(rateLimiter_->when(key), atLeast));
}

void WorkQueue::forget(const std::string& key) {
  rateLimiter_->forget(key);
}

int WorkQueue::numRequeues(const std::string& key) const {
  return rateLimiter_->numRequeues(key);
}

void WorkQueue::armDelayTimer() {
  if (waiting_.empty()) {
    delayTimer_->cancel();
    delayTimerAt_.reset();
    return;
  }
  const auto next = waiting_.begin()->readyAt;
  if (delayTimerAt_ == next) {
    return;
  }
  delayTimerAt_ = next;
  delayTimer_->expireAt(next, [this] {
    delayTimerAt_.reset();
    onDelayTimer();
  });
}

void WorkQueue::onDelayTimer() {
  const auto now = clock_.now();
  while (!waiting_.empty() && waiting_.begin()->readyAt <= now) {
    std::string key = waiting_.begin()->key;
    waitingByKey_.erase(key);
    waiting_.erase(waiting_.begin());
    add(key);
  }
  armDelayTimer();
}

boost::asio::awaitable<std::optional<std::string>> WorkQueue::get() {
  const auto cancellation = co_await boost::asio::this_coro::cancellation_state;
  for (;;) {
    if (cancellation.cancelled() != boost::asio::cancellation_type::none) {
      // Cancelled (e.g. raced against a timeout with ||): take no key, or it
      // would be in flight forever with nobody to call done(); and pass on a
      // wake-up this waiter may have consumed.
      if (!queue_.empty()) {
        getWaiters_.cancel_one();
      }
      throw boost::system::system_error(boost::asio::error::operation_aborted);
    }
    if (shuttingDown_) {
      co_return std::nullopt;
    }
    if (!queue_.empty()) {
      std::string key = std::move(queue_.front());
      queue_.pop_front();
      processing_.insert(key);
      dirty_.erase(key);
      co_return key;
    }
    boost::system::error_code ec; // operation_aborted is the wake-up
    co_await getWaiters_.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
  }
}

void WorkQueue::done(const std::string& key) {
  if (processing_.erase(key) == 0) {
    return;
  }
  if (!shuttingDown_ && dirty_.contains(key)) {
    push(key);
  }
  if (processing_.empty()) {
    drainWaiters_.cancel();
  }
}

void WorkQueue::dropPending() {
  queue_.clear();
  dirty_.clear();
  waiting_.clear();
  waitingByKey_.clear();
  delayTimer_->cancel();
  delayTimerAt_.reset();
}

void WorkQueue::shutdown() {
  shuttingDown_ = true;
  ++shutdownCalls_;
  dropPending();
  getWaiters_.cancel();
  drainWaiters_.cancel();
}

boost::asio::awaitable<void> WorkQueue::shutDownWithDrain() {
  shuttingDown_ = true;
  dropPending();
  getWaiters_.cancel();
  const std::uint64_t shutdownCallsBefore = shutdownCalls_;
  while (!processing_.empty() && shutdownCalls_ == shutdownCallsBefore) {
    boost::system::error_code ec;
    co_await drainWaiters_.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
  }
}

} // namespace csiop::runtime
