#include <chrono>
#include <memory>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <csiop/runtime/rate_limiter.hpp>
#include <csiop/testsupport/manual_clock.hpp>

namespace csiop::runtime {
namespace {

using namespace std::chrono_literals;

TEST(ExponentialFailureRateLimiterTest, DoublesFromTheBaseDelayPerFailure) {
  ExponentialFailureRateLimiter limiter(5ms, 1000s);
  EXPECT_EQ(limiter.when("a"), 5ms);
  EXPECT_EQ(limiter.when("a"), 10ms);
  EXPECT_EQ(limiter.when("a"), 20ms);
  EXPECT_EQ(limiter.when("b"), 5ms);
  EXPECT_EQ(limiter.numRequeues("a"), 3);
  EXPECT_EQ(limiter.numRequeues("b"), 1);
  EXPECT_EQ(limiter.numRequeues("c"), 0);
}

TEST(ExponentialFailureRateLimiterTest, IsCappedAndNeverOverflows) {
  ExponentialFailureRateLimiter limiter(5ms, 1000s);
  // 5ms * 2^17 = 655.36s < 1000s; 5ms * 2^18 = 1310.72s is capped.
  for (int i = 0; i < 17; ++i) {
    limiter.when("a");
  }
  EXPECT_EQ(limiter.when("a"), std::chrono::microseconds(655'360'000));
  EXPECT_EQ(limiter.when("a"), 1000s);
  for (int i = 0; i < 5000; ++i) {
    ASSERT_EQ(limiter.when("a"), 1000s) << "failure " << i;
  }
}

TEST(ExponentialFailureRateLimiterTest, ForgetStartsOver) {
  ExponentialFailureRateLimiter limiter(5ms, 1000s);
  limiter.when("a");
  limiter.when("a");
  limiter.forget("a");
  EXPECT_EQ(limiter.numRequeues("a"), 0);
  EXPECT_EQ(limiter.when("a"), 5ms);
}

TEST(ExponentialFailureRateLimiterTest, RejectsACapBelowTheBase) {
  EXPECT_THROW(ExponentialFailureRateLimiter(2s, 1s), std::invalid_argument);
}

class BucketRateLimiterTest : public ::testing::Test {
protected:
  boost::asio::io_context io;
  testsupport::ManualClock clock{io};
};

TEST_F(BucketRateLimiterTest, StartsFullThenChargesOneIntervalPerToken) {
  BucketRateLimiter limiter(clock, 10, 100);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(limiter.when("k"), 0ms) << i;
  }
  EXPECT_EQ(limiter.when("k"), 100ms);
  EXPECT_EQ(limiter.when("other key, same bucket"), 200ms);
  EXPECT_EQ(limiter.numRequeues("k"), 0);
}

TEST_F(BucketRateLimiterTest, RefillsAtTheRateUpToTheBurst) {
  BucketRateLimiter limiter(clock, 10, 5);
  for (int i = 0; i < 5; ++i) {
    limiter.when("k");
  }
  EXPECT_EQ(limiter.when("k"), 100ms); // in debt by one token
  clock.advance(300ms);                // +3 tokens: two available
  EXPECT_EQ(limiter.when("k"), 0ms);
  EXPECT_EQ(limiter.when("k"), 0ms);
  EXPECT_EQ(limiter.when("k"), 100ms);
  clock.advance(1h); // refills to the burst, not beyond
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(limiter.when("k"), 0ms) << i;
  }
  EXPECT_EQ(limiter.when("k"), 100ms);
}

TEST_F(BucketRateLimiterTest, RejectsNonsense) {
  EXPECT_THROW(BucketRateLimiter(clock, 0, 1), std::invalid_argument);
  EXPECT_THROW(BucketRateLimiter(clock, 10, 0), std::invalid_argument);
}

TEST_F(BucketRateLimiterTest, MaxOfTakesTheLongestAndChargesEveryLimiter) {
  auto limiter = makeControllerRateLimiter(
      clock, {.baseDelay = 5ms, .maxDelay = 1000s, .qps = 10, .burst = 2});
  EXPECT_EQ(limiter->when("a"), 5ms);   // exponential wins, bucket charged
  EXPECT_EQ(limiter->when("a"), 10ms);  // exponential wins, bucket now empty
  EXPECT_EQ(limiter->when("b"), 100ms); // bucket wins over b's 5ms
  EXPECT_EQ(limiter->numRequeues("a"), 2);
  limiter->forget("a");
  EXPECT_EQ(limiter->numRequeues("a"), 0);
}

TEST_F(BucketRateLimiterTest, DefaultsAreClientGos) {
  const RateLimiterOptions defaults;
  EXPECT_EQ(defaults.baseDelay, 5ms);
  EXPECT_EQ(defaults.maxDelay, 1000s);
  EXPECT_EQ(defaults.qps, 10);
  EXPECT_EQ(defaults.burst, 100);
}

} // namespace
} // namespace csiop::runtime
