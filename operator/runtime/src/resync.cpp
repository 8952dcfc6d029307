#include <csiop/runtime/resync.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace csiop::runtime {

PeriodicResync::PeriodicResync(const boost::asio::any_io_executor& executor, Clock& clock,
                               WorkQueue& queue, KeyLister keys, Options options)
    : clock_(clock), queue_(queue), keys_(std::move(keys)), options_(options),
      random_(options.seed), timer_(clock.makeTimer(executor)) {
  if (options_.period <= Clock::Duration::zero()) {
    throw std::invalid_argument("resync: period must be positive");
  }
  if (!(options_.jitter >= 0 && options_.jitter < 1)) {
    throw std::invalid_argument("resync: jitter must be in [0, 1)");
  }
}

PeriodicResync::~PeriodicResync() {
  stop();
}

void PeriodicResync::start() {
  if (running_) {
    return;
  }
  running_ = true;
  schedule();
}

void PeriodicResync::stop() {
  running_ = false;
  timer_->cancel();
}

Clock::Duration PeriodicResync::nextInterval() {
  if (options_.jitter == 0) {
    return options_.period;
  }
  std::uniform_real_distribution<double> factor(1.0 - options_.jitter, 1.0 + options_.jitter);
  const double nanos = static_cast<double>(options_.period.count()) * factor(random_);
  return std::max(Clock::Duration(1), Clock::Duration(static_cast<Clock::Duration::rep>(nanos)));
}

void PeriodicResync::schedule() {
  timer_->expireAt(clock_.now() + nextInterval(), [this] { tick(); });
}

void PeriodicResync::tick() {
  if (!running_ || queue_.shuttingDown()) {
    running_ = false;
    return;
  }
  for (const auto& key : keys_()) {
    queue_.add(key);
  }
  ++resyncs_;
  if (running_) { // the lister may have called stop()
    schedule();
  }
}

} // namespace csiop::runtime
