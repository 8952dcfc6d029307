#include <chrono>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <csiop/runtime/resync.hpp>
#include <csiop/runtime/workqueue.hpp>
#include <csiop/testsupport/manual_clock.hpp>

#include "test_util.hpp"

namespace csiop::runtime {
namespace {

using namespace std::chrono_literals;

class ResyncTest : public ::testing::Test {
protected:
  boost::asio::io_context io;
  testsupport::ManualClock clock{io};
  WorkQueue queue{io.get_executor(), clock};
  std::vector<std::string> keys = {"a", "b"};
  std::vector<Clock::TimePoint> listedAt;

  PeriodicResync::KeyLister lister() {
    return [this] {
      listedAt.push_back(clock.now());
      return keys;
    };
  }
  std::set<std::string> takeAll() {
    std::set<std::string> taken;
    while (queue.len() > 0) {
      const auto key = test::runCoroutine(io, queue.get());
      taken.insert(*key);
      queue.done(*key);
    }
    return taken;
  }
};

TEST_F(ResyncTest, AddsEveryKeyOncePerPeriod) {
  const auto start = clock.now();
  PeriodicResync resync(io.get_executor(), clock, queue, lister(), {.period = 10s, .jitter = 0});
  resync.start();
  clock.advance(9999ms);
  EXPECT_EQ(queue.len(), 0u) << "the first resync is one period after start";
  clock.advance(1ms);
  EXPECT_EQ(takeAll(), (std::set<std::string>{"a", "b"}));
  keys = {"c"};
  clock.advance(10s);
  EXPECT_EQ(takeAll(), std::set<std::string>{"c"});
  EXPECT_EQ(listedAt, (std::vector<Clock::TimePoint>{start + 10s, start + 20s}));
  EXPECT_EQ(resync.resyncs(), 2u);
}

TEST_F(ResyncTest, KeysAlreadyQueuedAreNotDuplicated) {
  queue.add("a");
  PeriodicResync resync(io.get_executor(), clock, queue, lister(), {.period = 1s, .jitter = 0});
  resync.start();
  clock.advance(1s);
  EXPECT_EQ(queue.len(), 2u);
}

TEST_F(ResyncTest, IntervalsAreJitteredWithinBounds) {
  PeriodicResync resync(io.get_executor(), clock, queue, lister(),
                        {.period = 10s, .jitter = 0.1, .seed = 42});
  resync.start();
  clock.advance(600s);
  ASSERT_GE(listedAt.size(), 50u);
  std::set<Clock::Duration> intervals;
  Clock::TimePoint previous = listedAt.front();
  for (std::size_t i = 1; i < listedAt.size(); ++i) {
    const auto interval = listedAt[i] - previous;
    EXPECT_GE(interval, 9s);
    EXPECT_LE(interval, 11s);
    intervals.insert(interval);
    previous = listedAt[i];
  }
  EXPECT_GT(intervals.size(), listedAt.size() / 2) << "intervals should vary";
}

TEST_F(ResyncTest, StopEndsTheTicks) {
  PeriodicResync resync(io.get_executor(), clock, queue, lister(), {.period = 1s, .jitter = 0});
  resync.start();
  clock.advance(1s);
  resync.stop();
  clock.advance(10s);
  EXPECT_EQ(listedAt.size(), 1u);
  EXPECT_EQ(clock.pendingTimers(), 0u);
}

TEST_F(ResyncTest, StopsWhenTheQueueShutsDown) {
  PeriodicResync resync(io.get_executor(), clock, queue, lister(), {.period = 1s, .jitter = 0});
  resync.start();
  queue.shutdown();
  clock.advance(10s);
  EXPECT_TRUE(listedAt.empty());
  EXPECT_EQ(clock.pendingTimers(), 0u);
}

TEST_F(ResyncTest, RejectsBadOptions) {
  EXPECT_THROW(PeriodicResync(io.get_executor(), clock, queue, lister(), {.period = 0s}),
               std::invalid_argument);
  EXPECT_THROW(PeriodicResync(io.get_executor(), clock, queue, lister(), {.jitter = 1.5}),
               std::invalid_argument);
}

} // namespace
} // namespace csiop::runtime
