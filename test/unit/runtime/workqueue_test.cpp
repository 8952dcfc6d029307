#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csiop/runtime/workqueue.hpp>
#include <csiop/testsupport/manual_clock.hpp>

#include "test_util.hpp"

namespace csiop::runtime {
namespace {

using namespace std::chrono_literals;
using test::spawn;
using Got = std::shared_ptr<test::Outcome<std::optional<std::string>>>;

class WorkQueueTest : public ::testing::Test {
protected:
  boost::asio::io_context io;
  testsupport::ManualClock clock{io};
  std::optional<WorkQueue> queue{std::in_place, io.get_executor(), clock};

  // Starts a get() and runs whatever is ready; the outcome may be pending.
  Got startGet() {
    Got got = spawn(io, queue->get());
    clock.settle();
    return got;
  }
  // A get() that must complete at once; returns the key (nullopt: shut down).
  std::optional<std::string> getNow() {
    Got got = startGet();
    EXPECT_TRUE(got->done) << "get() did not complete";
    return got->done ? *got->value : std::optional<std::string>("<pending>");
  }
  // Takes every ready key (marking them done), in order.
  std::vector<std::string> takeAll() {
    std::vector<std::string> keys;
    while (queue->len() > 0) {
      const auto key = getNow();
      keys.push_back(*key);
      queue->done(*key);
    }
    return keys;
  }
};

TEST_F(WorkQueueTest, AddThenGetHandsOutTheKeyAndMarksItInFlight) {
  queue->add("a");
  EXPECT_EQ(queue->len(), 1u);
  EXPECT_EQ(getNow(), "a");
  EXPECT_EQ(queue->len(), 0u);
  EXPECT_EQ(queue->numProcessing(), 1u);
  queue->done("a");
  EXPECT_EQ(queue->numProcessing(), 0u);
}

TEST_F(WorkQueueTest, KeysComeOutInInsertionOrder) {
  for (const char* key : {"c", "a", "b"}) {
    queue->add(key);
  }
  EXPECT_EQ(takeAll(), (std::vector<std::string>{"c", "a", "b"}));
}

TEST_F(WorkQueueTest, KeyQueuedTwiceIsProcessedOnce) {
  queue->add("a");
  queue->add("b");
  queue->add("a");
  EXPECT_EQ(queue->len(), 2u);
  EXPECT_EQ(takeAll(), (std::vector<std::string>{"a", "b"}));
  const Got next = startGet();
  EXPECT_FALSE(next->done) << "a deduplicated key must not come out a second time";
  queue->shutdown();
  clock.settle();
}

TEST_F(WorkQueueTest, GetWaitsUntilAKeyIsAdded) {
  const Got got = startGet();
  EXPECT_FALSE(got->done);
  queue->add("a");
  clock.settle();
  ASSERT_TRUE(got->done);
  EXPECT_EQ(*got->value, "a");
}

TEST_F(WorkQueueTest, EveryWaiterGetsADifferentKey) {
  const Got first = startGet();
  const Got second = startGet();
  const Got third = startGet();
  queue->add("a");
  queue->add("b");
  clock.settle();
  std::multiset<std::string> handedOut;
  int pending = 0;
  for (const Got& got : {first, second, third}) {
    if (got->done) {
      handedOut.insert(**got->value);
    } else {
      ++pending;
    }
  }
  EXPECT_EQ(handedOut, (std::multiset<std::string>{"a", "b"}));
  EXPECT_EQ(pending, 1);
  queue->add("c");
  clock.settle();
  for (const Got& got : {first, second, third}) {
    EXPECT_TRUE(got->done);
  }
}

TEST_F(WorkQueueTest, KeyAddedWhileInFlightIsRequeuedAfterDone) {
  queue->add("a");
  EXPECT_EQ(getNow(), "a");
  const Got waiter = startGet();
  queue->add("a");
  queue->add("a");
  clock.settle();
  EXPECT_FALSE(waiter->done) << "a key must never be handed out while it is in flight";
  EXPECT_EQ(queue->len(), 0u);
  queue->done("a");
  clock.settle();
  ASSERT_TRUE(waiter->done);
  EXPECT_EQ(*waiter->value, "a");
  queue->done("a");
  EXPECT_EQ(queue->len(), 0u) << "two adds while in flight requeue it once";
}

TEST_F(WorkQueueTest, DoneWithoutAddWhileInFlightDoesNotRequeue) {
  queue->add("a");
  EXPECT_EQ(getNow(), "a");
  queue->done("a");
  EXPECT_EQ(queue->len(), 0u);
}

TEST_F(WorkQueueTest, DoneForAKeyNotInFlightIsIgnored) {
  queue->done("nobody");
  queue->add("a");
  queue->done("a"); // queued, not in flight
  EXPECT_EQ(queue->len(), 1u);
  EXPECT_EQ(takeAll(), std::vector<std::string>{"a"});
}

// Several workers, keys re-added at random moments: at most one worker ever
// holds a given key, and every add is followed by a processing of that key.
TEST_F(WorkQueueTest, AKeyIsNeverProcessedConcurrently) {
  std::set<std::string> inFlight;
  std::map<std::string, int> processed;
  bool overlap = false;
  auto worker = [&]() -> boost::asio::awaitable<void> {
    for (;;) {
      const auto key = co_await queue->get();
      if (!key) {
        co_return;
      }
      overlap |= !inFlight.insert(*key).second;
      ++processed[*key];
      co_await test::sleepFor(clock, 7ms);
      inFlight.erase(*key);
      queue->done(*key);
    }
  };
  std::vector<std::shared_ptr<test::Outcome<bool>>> workers;
  for (int i = 0; i < 3; ++i) {
    workers.push_back(spawn(io, worker()));
  }
  const std::vector<std::string> keys = {"a", "b", "a", "a", "c", "b", "a"};
  for (int round = 0; round < 20; ++round) {
    for (const auto& key : keys) {
      queue->add(key);
      clock.advance(1ms);
    }
  }
  clock.advance(1s);
  EXPECT_FALSE(overlap);
  EXPECT_TRUE(inFlight.empty());
  EXPECT_EQ(queue->len(), 0u);
  // Each key was added again while its previous run was going on, so it was
  // processed more than once, but far fewer times than it was added.
  EXPECT_GE(processed["a"], 2);
  EXPECT_LT(processed["a"], 80);
  queue->shutdown();
  clock.settle();
  for (const auto& done : workers) {
    EXPECT_TRUE(done->done);
  }
}

TEST_F(WorkQueueTest, AddAfterWaitsForTheDelay) {
  queue->addAfter("a", 100ms);
  EXPECT_EQ(queue->len(), 0u);
  EXPECT_EQ(queue->numWaiting(), 1u);
  clock.advance(99ms);
  EXPECT_EQ(queue->len(), 0u);
  clock.advance(1ms);
  EXPECT_EQ(queue->len(), 1u);
  EXPECT_EQ(queue->numWaiting(), 0u);
  EXPECT_EQ(clock.pendingTimers(), 0u);
}

TEST_F(WorkQueueTest, AddAfterWithoutDelayAddsAtOnce) {
  queue->addAfter("a", 0ms);
  queue->addAfter("b", -5ms);
  EXPECT_EQ(queue->len(), 2u);
  EXPECT_EQ(queue->numWaiting(), 0u);
}

TEST_F(WorkQueueTest, AddAfterKeepsTheEarliestDeadline) {
  queue->addAfter("a", 100ms);
  queue->addAfter("a", 50ms); // earlier: replaces
  queue->addAfter("a", 80ms); // later: ignored
  EXPECT_EQ(queue->numWaiting(), 1u);
  clock.advance(50ms);
  EXPECT_EQ(queue->len(), 1u);
  EXPECT_EQ(queue->numWaiting(), 0u);
  EXPECT_EQ(takeAll(), std::vector<std::string>{"a"});
  clock.advance(100ms);
  EXPECT_EQ(queue->len(), 0u) << "the replaced deadlines must not fire";
}

TEST_F(WorkQueueTest, DelayedKeysBecomeReadyInDeadlineOrder) {
  queue->addAfter("c", 30ms);
  queue->addAfter("a", 10ms);
  queue->addAfter("b", 20ms);
  queue->addAfter("d", 20ms); // same deadline as b: insertion order
  clock.advance(15ms);
  EXPECT_EQ(takeAll(), std::vector<std::string>{"a"});
  clock.advance(1s);
  EXPECT_EQ(takeAll(), (std::vector<std::string>{"b", "d", "c"}));
}

TEST_F(WorkQueueTest, DelayedKeyAlreadyQueuedIsDeduplicated) {
  queue->add("a");
  queue->addAfter("a", 10ms);
  clock.advance(10ms);
  EXPECT_EQ(queue->len(), 1u);
  EXPECT_EQ(takeAll(), std::vector<std::string>{"a"});
}

TEST_F(WorkQueueTest, DelayedKeyWakesAWaitingGet) {
  const Got got = startGet();
  queue->addAfter("a", 1s);
  clock.advance(999ms);
  EXPECT_FALSE(got->done);
  clock.advance(1ms);
  ASSERT_TRUE(got->done);
  EXPECT_EQ(*got->value, "a");
}

TEST_F(WorkQueueTest, AddRateLimitedBacksOffExponentiallyPerKey) {
  // 5ms, 10ms, 20ms, 40ms: the default base delay, doubling per failure.
  for (const auto delay : {5ms, 10ms, 20ms, 40ms}) {
    queue->addRateLimited("a");
    clock.advance(delay - 1ms);
    EXPECT_EQ(queue->len(), 0u) << "delay " << delay.count() << "ms";
    clock.advance(1ms);
    EXPECT_EQ(takeAll(), std::vector<std::string>{"a"}) << "delay " << delay.count() << "ms";
  }
  EXPECT_EQ(queue->numRequeues("a"), 4);
  EXPECT_EQ(queue->numRequeues("b"), 0) << "backoff is per key";
  queue->addRateLimited("b");
  clock.advance(5ms);
  EXPECT_EQ(takeAll(), std::vector<std::string>{"b"});
}

TEST_F(WorkQueueTest, ARateLimitedAddWaitsAtLeastAsLongAsAsked) {
  queue->addRateLimited("a", 2s); // the backoff says 5 ms, the server 2 s
  clock.advance(2s - 1ms);
  EXPECT_EQ(queue->len(), 0u);
  clock.advance(1ms);
  EXPECT_EQ(takeAll(), std::vector<std::string>{"a"});
  EXPECT_EQ(queue->numRequeues("a"), 1) << "still one more failure";
  for (int i = 0; i < 10; ++i) {
    queue->addRateLimited("b");
    clock.advance(10s);
    takeAll();
  }
  queue->addRateLimited("b", 1s); // the backoff (5 ms * 2^10) is longer
  clock.advance(5120ms - 1ms);
  EXPECT_EQ(queue->len(), 0u);
  clock.advance(1ms);
  EXPECT_EQ(takeAll(), std::vector<std::string>{"b"});
}

TEST_F(WorkQueueTest, ForgetResetsTheBackoff) {
  for (int i = 0; i < 5; ++i) {
    queue->addRateLimited("a");
    clock.advance(1s);
    takeAll();
  }
  EXPECT_EQ(queue->numRequeues("a"), 5);
  queue->forget("a");
  EXPECT_EQ(queue->numRequeues("a"), 0);
  queue->addRateLimited("a");
  clock.advance(5ms);
  EXPECT_EQ(queue->len(), 1u);
}

TEST_F(WorkQueueTest, OverallTokenBucketLimitsRetriesOfManyKeys) {
  // Burst 100 at 10 qps: 100 keys retry after their own 5ms, the 101st and
  // 102nd wait for new tokens (100ms, 200ms), whatever their own backoff.
  for (int i = 0; i < 102; ++i) {
    queue->addRateLimited("k" + std::to_string(i));
  }
  clock.advance(5ms);
  EXPECT_EQ(queue->len(), 100u);
  clock.advance(94ms);
  EXPECT_EQ(queue->len(), 100u);
  clock.advance(1ms);
  EXPECT_EQ(queue->len(), 101u);
  clock.advance(100ms);
  EXPECT_EQ(queue->len(), 102u);
}

TEST_F(WorkQueueTest, RateLimiterIsConfigurable) {
  queue.reset();
  queue.emplace(io.get_executor(), clock,
                makeControllerRateLimiter(
                    clock, {.baseDelay = 1s, .maxDelay = 3s, .qps = 100, .burst = 1000}));
  for (const auto delay : {1s, 2s, 3s, 3s}) {
    queue->addRateLimited("a");
    clock.advance(delay - 1ms);
    EXPECT_EQ(queue->len(), 0u);
    clock.advance(1ms);
    EXPECT_EQ(takeAll(), std::vector<std::string>{"a"});
  }
}

TEST_F(WorkQueueTest, LenCountsOnlyReadyKeys) {
  queue->add("ready");
  queue->add("flight");
  queue->addAfter("later", 1s);
  EXPECT_EQ(getNow(), "ready");
  EXPECT_EQ(queue->len(), 1u);
  EXPECT_EQ(queue->numProcessing(), 1u);
  EXPECT_EQ(queue->numWaiting(), 1u);
}

TEST_F(WorkQueueTest, ShutdownWakesEveryWaiterWithNullopt) {
  const Got first = startGet();
  const Got second = startGet();
  queue->shutdown();
  clock.settle();
  ASSERT_TRUE(first->done);
  ASSERT_TRUE(second->done);
  EXPECT_EQ(*first->value, std::nullopt);
  EXPECT_EQ(*second->value, std::nullopt);
  EXPECT_EQ(getNow(), std::nullopt);
  EXPECT_TRUE(queue->shuttingDown());
}

TEST_F(WorkQueueTest, ShutdownDropsPendingKeysAndIgnoresNewOnes) {
  queue->add("queued");
  queue->addAfter("delayed", 10ms);
  queue->shutdown();
  EXPECT_EQ(queue->len(), 0u);
  EXPECT_EQ(queue->numWaiting(), 0u);
  EXPECT_EQ(clock.pendingTimers(), 0u);
  queue->add("new");
  queue->addAfter("new-delayed", 1ms);
  queue->addRateLimited("new-limited");
  clock.advance(1h);
  EXPECT_EQ(queue->len(), 0u);
  EXPECT_EQ(getNow(), std::nullopt);
}

TEST_F(WorkQueueTest, ShutDownWithDrainLetsInFlightKeysFinish) {
  queue->add("a");
  queue->add("b");
  queue->add("c");
  EXPECT_EQ(getNow(), "a");
  EXPECT_EQ(getNow(), "b");
  const auto drained = spawn(io, queue->shutDownWithDrain());
  clock.settle();
  EXPECT_FALSE(drained->done);
  EXPECT_EQ(queue->len(), 0u) << "keys not started are dropped";
  EXPECT_EQ(getNow(), std::nullopt) << "no new work once draining";
  queue->add("a"); // ignored: not accepting
  queue->done("a");
  clock.settle();
  EXPECT_FALSE(drained->done) << "b is still in flight";
  EXPECT_EQ(queue->len(), 0u) << "a key re-added during the drain is not requeued";
  queue->done("b");
  clock.settle();
  EXPECT_TRUE(drained->done);
  EXPECT_FALSE(drained->error);
}

TEST_F(WorkQueueTest, ShutDownWithDrainReturnsAtOnceWhenNothingIsInFlight) {
  queue->add("a");
  const auto drained = spawn(io, queue->shutDownWithDrain());
  clock.settle();
  EXPECT_TRUE(drained->done);
}

TEST_F(WorkQueueTest, ShutdownDuringADrainStopsWaiting) {
  queue->add("a");
  EXPECT_EQ(getNow(), "a");
  const auto drained = spawn(io, queue->shutDownWithDrain());
  clock.settle();
  EXPECT_FALSE(drained->done);
  queue->shutdown();
  clock.settle();
  EXPECT_TRUE(drained->done);
  EXPECT_EQ(queue->numProcessing(), 1u);
  queue->done("a");
}

TEST_F(WorkQueueTest, GetCanBeRacedAgainstATimeout) {
  using namespace boost::asio::experimental::awaitable_operators;
  auto race = [&]() -> boost::asio::awaitable<std::size_t> {
    boost::asio::steady_timer timeout(io, 1ms);
    const auto winner = co_await (queue->get() || timeout.async_wait(boost::asio::use_awaitable));
    co_return winner.index();
  };
  EXPECT_EQ(test::runCoroutine(io, race()), 1u) << "the timeout wins on an empty queue";
  queue->add("a");
  EXPECT_EQ(getNow(), "a") << "the abandoned get() left the queue intact";
}

TEST_F(WorkQueueTest, ACancelledGetTakesNoKeyAndPassesTheWakeUpOn) {
  boost::asio::cancellation_signal cancel;
  bool cancelledDone = false;
  std::exception_ptr cancelledError;
  boost::asio::co_spawn(
      io, queue->get(),
      boost::asio::bind_cancellation_slot(
          cancel.slot(), [&](std::exception_ptr error, std::optional<std::string>) {
            cancelledDone = true;
            cancelledError = error;
          }));
  clock.settle();
  const Got other = startGet();
  // As when `get() || timer` resolves: a key wakes the first waiter, and the
  // cancellation arrives (from a handler) before that waiter resumes.
  boost::asio::post(io, [&] {
    queue->add("x");
    cancel.emit(boost::asio::cancellation_type::terminal);
  });
  clock.settle();
  EXPECT_TRUE(cancelledDone);
  EXPECT_TRUE(cancelledError);
  ASSERT_TRUE(other->done) << "the wake-up was swallowed by the cancelled waiter";
  EXPECT_EQ(*other->value, "x");
  EXPECT_EQ(queue->numProcessing(), 1u);
}

TEST(WorkQueueSteadyClockTest, DelaysWorkWithRealTime) {
  boost::asio::io_context io;
  WorkQueue queue(io.get_executor());
  queue.addAfter("a", 1ms);
  EXPECT_EQ(queue.len(), 0u);
  EXPECT_EQ(test::runCoroutine(io, queue.get()), "a");
}

} // namespace
} // namespace csiop::runtime
