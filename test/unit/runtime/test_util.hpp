// Helpers of the runtime tests: sleeping on a (manual) Clock, and the coroutine runners of
// common/run_io.hpp.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csiop/runtime/clock.hpp>

#include "../common/run_io.hpp"

namespace csiop::runtime::test {

// Suspends the calling coroutine for `delay` of `clock` time (a ManualClock in
// tests, so only ManualClock::advance ends the wait).
inline boost::asio::awaitable<void> sleepFor(Clock& clock, Clock::Duration delay) {
  auto timer = clock.makeTimer(co_await boost::asio::this_coro::executor);
  co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void()>(
      [&](auto handler) {
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        timer->expireAt(clock.now() + delay, [shared] {
          auto resume = std::move(*shared);
          resume();
        });
      },
      boost::asio::use_awaitable);
}

using csiop::test::Outcome;
using csiop::test::runCoroutine;
using csiop::test::runUntil;
using csiop::test::spawn;

} // namespace csiop::runtime::test
