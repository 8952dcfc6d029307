// Retry rate limiters for the work queue, after client-go's
// k8s.io/client-go/util/workqueue/default_rate_limiters.go.
//
// Thread-safety: none (single-threaded io_context).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <csiop/runtime/clock.hpp>

namespace csiop::runtime {

class RateLimiter {
public:
  using Duration = Clock::Duration;

  virtual ~RateLimiter() = default;
  // How long `key` must wait before its next attempt. Counts as one failure
  // (client-go When).
  virtual Duration when(const std::string& key) = 0;
  // The key succeeded (or is given up on): stop tracking it.
  virtual void forget(const std::string& key) = 0;
  // Failures counted for `key` since the last forget().
  virtual int numRequeues(const std::string& key) const = 0;
};

// Per key: baseDelay * 2^failures, capped at maxDelay
// (client-go ItemExponentialFailureRateLimiter).
class ExponentialFailureRateLimiter final : public RateLimiter {
public:
  ExponentialFailureRateLimiter(Duration baseDelay, Duration maxDelay);
  Duration when(const std::string& key) override;
  void forget(const std::string& key) override;
  int numRequeues(const std::string& key) const override;

private:
  Duration baseDelay_;
  Duration maxDelay_;
  std::unordered_map<std::string, int> failures_;
};

// One token bucket shared by all keys: `qps` tokens a second, at most `burst`
// stored, starting full; each when() takes a token, going into debt when none
// is left, and returns the time until the debt is paid (client-go
// BucketRateLimiter over golang.org/x/time/rate Limiter.Reserve().Delay()).
class BucketRateLimiter final : public RateLimiter {
public:
  BucketRateLimiter(const Clock& clock, double qps, int burst);
  Duration when(const std::string& key) override;
  void forget(const std::string&) override {}
  int numRequeues(const std::string&) const override { return 0; }

private:
  const Clock& clock_;
  Duration interval_; // time to earn one token
  Duration burstSpan_;
  // The moment the bucket is full again; tokens(now) = burst - (fullAt - now) / interval.
  Clock::TimePoint fullAt_;
};

// The largest delay of all (every limiter's when() is called, so the bucket
// is charged even when the exponential backoff dominates), as client-go
// MaxOfRateLimiter.
class MaxOfRateLimiter final : public RateLimiter {
public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters);
  Duration when(const std::string& key) override;
  void forget(const std::string& key) override;
  int numRequeues(const std::string& key) const override;

private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

struct RateLimiterOptions {
  RateLimiter::Duration baseDelay = std::chrono::milliseconds(5);
  RateLimiter::Duration maxDelay = std::chrono::seconds(1000);
  double qps = 10;
  int burst = 100;
};

// client-go DefaultControllerRateLimiter(): max(exponential 5ms..1000s per key,
// token bucket 10 qps / burst 100 overall), with every figure configurable.
std::unique_ptr<RateLimiter> makeControllerRateLimiter(const Clock& clock,
                                                       const RateLimiterOptions& options = {});

} // namespace csiop::runtime
