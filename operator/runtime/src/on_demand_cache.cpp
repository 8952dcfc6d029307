#include <csiop/runtime/on_demand_cache.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

namespace csiop::runtime {

namespace asio = boost::asio;

namespace {
// How often a demand looks whether the started cache has synced.
constexpr std::chrono::milliseconds kSyncPoll{20};
} // namespace

OnDemandCache::OnDemandCache(const asio::any_io_executor& executor, RunnableCache& cache,
                             Clock& clock, Clock::Duration idle, std::string what)
    : executor_(executor), cache_(cache), clock_(clock), idle_(idle), what_(std::move(what)),
      idleTimer_(clock.makeTimer(executor)), spawn_([executor](asio::awaitable<void> task) {
        asio::co_spawn(executor, std::move(task), asio::detached);
      }) {}

void OnDemandCache::want() {
  if (closed_) {
    return;
  }
  lastWant_ = clock_.now();
  if (!running_) {
    start();
  } else if (stopping_) {
    restart_ = true;
  }
}

void OnDemandCache::hold(bool held) {
  if (held == held_) {
    return;
  }
  held_ = held;
  want(); // held: started; released: `idle` from now
}

void OnDemandCache::start() {
  running_ = true;
  stopping_ = false;
  restart_ = false;
  ++starts_;
  spdlog::info("{}: listed and watched, a decision needs them", what_);
  cache_.rearm();
  spawn_(runOnce());
  armIdle();
}

asio::awaitable<void> OnDemandCache::runOnce() {
  co_await cache_.run();
  running_ = false;
  stopping_ = false;
  cache_.drop();
  if (restart_ && !closed_) {
    start();
  }
}

void OnDemandCache::armIdle() {
  idleTimer_->expireAt(lastWant_ + idle_, [this] {
    if (closed_ || !running_ || stopping_) {
      return;
    }
    if (held_) {
      lastWant_ = clock_.now();
      armIdle();
      return;
    }
    if (clock_.now() - lastWant_ < idle_) {
      armIdle(); // wanted again meanwhile
      return;
    }
    spdlog::info("{}: no longer watched, no decision has needed them for {} s", what_,
                 std::chrono::duration_cast<std::chrono::seconds>(idle_).count());
    stopping_ = true;
    cache_.stop();
  });
}

asio::awaitable<bool> OnDemandCache::demand(Clock::Duration timeout) {
  want();
  const auto deadline = clock_.now() + timeout;
  asio::steady_timer timer(executor_);
  while (!closed_ && !synced()) {
    if (clock_.now() >= deadline) {
      co_return false;
    }
    timer.expires_after(kSyncPoll);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return synced();
}

void OnDemandCache::stop() {
  closed_ = true;
  idleTimer_->cancel();
  if (running_) {
    cache_.stop();
  }
}

} // namespace csiop::runtime
