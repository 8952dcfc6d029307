#include <chrono>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <csiop/runtime/clock.hpp>

#include "test_util.hpp"

namespace csiop::runtime {
namespace {

using namespace std::chrono_literals;

TEST(SteadyClockTest, TimerFiresWithRealTimeAndCancelPreventsIt) {
  boost::asio::io_context io;
  auto& clock = steadyClock();
  bool fired = false;
  bool cancelledFired = false;
  auto timer = clock.makeTimer(io.get_executor());
  auto cancelled = clock.makeTimer(io.get_executor());
  const auto before = clock.now();
  cancelled->expireAt(before + 1ms, [&] { cancelledFired = true; });
  cancelled->cancel();
  timer->expireAt(before + 2ms, [&] { fired = true; });
  ASSERT_TRUE(test::runUntil(io, [&] { return fired; }));
  EXPECT_GE(clock.now() - before, 2ms);
  io.restart();
  io.run(); // nothing left: returns
  EXPECT_FALSE(cancelledFired);
}

TEST(SteadyClockTest, ReArmingReplacesTheCallback) {
  boost::asio::io_context io;
  int fired = 0;
  auto timer = steadyClock().makeTimer(io.get_executor());
  timer->expireAt(steadyClock().now(), [&] { fired += 100; });
  timer->expireAt(steadyClock().now() + 1ms, [&] { fired += 1; });
  io.run();
  EXPECT_EQ(fired, 1);
}

} // namespace
} // namespace csiop::runtime
