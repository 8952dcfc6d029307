#include <csiop/runtime/rate_limiter.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace csiop::runtime {

ExponentialFailureRateLimiter::ExponentialFailureRateLimiter(Duration baseDelay, Duration maxDelay)
    : baseDelay_(baseDelay), maxDelay_(maxDelay) {
  if (baseDelay < Duration::zero() || maxDelay < baseDelay) {
    throw std::invalid_argument("rate limiter: need 0 <= baseDelay <= maxDelay");
  }
}

RateLimiter::Duration ExponentialFailureRateLimiter::when(const std::string& key) {
  const int exponent = failures_[key]++;
  // Computed in floating point so that a large exponent saturates at the cap
  // instead of overflowing (as client-go does).
  const double delay = static_cast<double>(baseDelay_.count()) * std::pow(2.0, exponent);
  if (!(delay < static_cast<double>(maxDelay_.count()))) {
    return maxDelay_;
  }
  return Duration(static_cast<Duration::rep>(delay));
}

void ExponentialFailureRateLimiter::forget(const std::string& key) {
  failures_.erase(key);
}

int ExponentialFailureRateLimiter::numRequeues(const std::string& key) const {
  const auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

BucketRateLimiter::BucketRateLimiter(const Clock& clock, double qps, int burst)
    : clock_(clock), fullAt_(clock.now()) {
  if (!(qps > 0) || !std::isfinite(qps) || burst < 1) {
    throw std::invalid_argument("rate limiter: need qps > 0 (finite) and burst >= 1");
  }
  const double nanos = 1e9 / qps;
  interval_ = std::chrono::duration_cast<Duration>(
      std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(std::max(nanos, 1.0)))));
  burstSpan_ = interval_ * burst;
}

RateLimiter::Duration BucketRateLimiter::when(const std::string&) {
  const auto now = clock_.now();
  // Refill is implicit: a bucket whose fullAt is in the past is full (capped).
  fullAt_ = std::max(fullAt_, now) + interval_;
  // Debt beyond the burst is what the caller must wait for.
  return std::max(Duration::zero(), fullAt_ - now - burstSpan_);
}

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
    : limiters_(std::move(limiters)) {}

RateLimiter::Duration MaxOfRateLimiter::when(const std::string& key) {
  Duration longest = Duration::zero();
  for (const auto& limiter : limiters_) {
    longest = std::max(longest, limiter->when(key));
  }
  return longest;
}

void MaxOfRateLimiter::forget(const std::string& key) {
  for (const auto& limiter : limiters_) {
    limiter->forget(key);
  }
}

int MaxOfRateLimiter::numRequeues(const std::string& key) const {
  int most = 0;
  for (const auto& limiter : limiters_) {
    most = std::max(most, limiter->numRequeues(key));
  }
  return most;
}

std::unique_ptr<RateLimiter> makeControllerRateLimiter(const Clock& clock,
                                                       const RateLimiterOptions& options) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(
      std::make_unique<ExponentialFailureRateLimiter>(options.baseDelay, options.maxDelay));
  limiters.push_back(std::make_unique<BucketRateLimiter>(clock, options.qps, options.burst));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

} // namespace csiop::runtime
