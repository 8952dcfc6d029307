// ManualClock: time that moves only when the test says so (the runtime's unit tests run on it).
#include <chrono>
#include <functional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <csiop/testsupport/manual_clock.hpp>

namespace csiop::testsupport {
namespace {

using namespace std::chrono_literals;

class ManualClockTest : public ::testing::Test {
protected:
  boost::asio::io_context io;
  ManualClock clock{io};
  runtime::Clock::TimePoint start = clock.now();
};

TEST_F(ManualClockTest, TimeMovesOnlyWhenAdvanced) {
  EXPECT_EQ(clock.now(), start);
  clock.advance(3s);
  EXPECT_EQ(clock.now(), start + 3s);
  clock.advanceTo(start + 2s); // never backwards
  EXPECT_EQ(clock.now(), start + 3s);
}

TEST_F(ManualClockTest, TimersFireInDeadlineOrderAtTheirDeadline) {
  std::vector<std::pair<int, runtime::Clock::TimePoint>> fired;
  auto late = clock.makeTimer(io.get_executor());
  auto early = clock.makeTimer(io.get_executor());
  late->expireAt(start + 20ms, [&] { fired.emplace_back(2, clock.now()); });
  early->expireAt(start + 10ms, [&] { fired.emplace_back(1, clock.now()); });
  EXPECT_EQ(clock.nextDeadline(), start + 10ms);
  clock.advance(9ms);
  EXPECT_TRUE(fired.empty());
  clock.advance(1s);
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0], std::make_pair(1, start + 10ms));
  EXPECT_EQ(fired[1], std::make_pair(2, start + 20ms));
  EXPECT_EQ(clock.pendingTimers(), 0u);
}

TEST_F(ManualClockTest, ATimerReArmedByItsCallbackFiresAgainWithinOneAdvance) {
  std::vector<runtime::Clock::TimePoint> ticks;
  auto timer = clock.makeTimer(io.get_executor());
  std::function<void()> tick = [&] {
    ticks.push_back(clock.now());
    timer->expireAt(clock.now() + 10ms, tick);
  };
  timer->expireAt(start + 10ms, tick);
  clock.advance(35ms);
  EXPECT_EQ(ticks,
            (std::vector<runtime::Clock::TimePoint>{start + 10ms, start + 20ms, start + 30ms}));
}

TEST_F(ManualClockTest, CancelledReArmedAndDestroyedTimersDoNotFire) {
  int fired = 0;
  auto cancelled = clock.makeTimer(io.get_executor());
  cancelled->expireAt(start + 1ms, [&] { fired += 100; });
  cancelled->cancel();
  auto rearmed = clock.makeTimer(io.get_executor());
  rearmed->expireAt(start + 1ms, [&] { fired += 1000; });
  rearmed->expireAt(start + 2ms, [&] { fired += 1; });
  auto destroyed = clock.makeTimer(io.get_executor());
  destroyed->expireAt(start + 1ms, [&] { fired += 10000; });
  destroyed.reset();
  clock.advance(1s);
  EXPECT_EQ(fired, 1);
}

TEST_F(ManualClockTest, ACallbackNeverRunsInsideExpireAt) {
  bool fired = false;
  auto timer = clock.makeTimer(io.get_executor());
  timer->expireAt(start - 1s, [&] { fired = true; }); // already due
  EXPECT_FALSE(fired);
  clock.settle();
  EXPECT_FALSE(fired) << "due timers fire on advance";
  clock.advance(0ms);
  EXPECT_TRUE(fired);
}

} // namespace
} // namespace csiop::testsupport
