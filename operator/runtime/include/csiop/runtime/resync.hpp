// Periodic resync: every `period` (jittered), add every key the lister
// returns to the work queue, so that drift nobody was told about (a child
// edited while the operator was down, a missed event) is repaired even when
// no watch event arrives. controller-runtime does the same with its informer
// SyncPeriod, jittered by +-10% (so that several operators, or several
// controllers, do not resync in lockstep).
//
// The first resync happens one (jittered) period after start(): the initial
// list already queued everything. Stops by itself once the queue shuts down.
//
// Thread-safety: none; runs on the given (single-threaded) executor. The queue,
// clock and lister must outlive the PeriodicResync, or stop() it first.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include <csiop/runtime/clock.hpp>
#include <csiop/runtime/workqueue.hpp>

namespace csiop::runtime {

class PeriodicResync {
public:
  using KeyLister = std::function<std::vector<std::string>()>;

  struct Options {
    Clock::Duration period = std::chrono::hours(10); // controller-runtime's default SyncPeriod
    double jitter = 0.1;                         // each interval in period * [1-jitter, 1+jitter]
    std::uint64_t seed = std::random_device{}(); // fixed in tests
  };

  PeriodicResync(const boost::asio::any_io_executor& executor, Clock& clock, WorkQueue& queue,
                 KeyLister keys, Options options);
  ~PeriodicResync();
  PeriodicResync(const PeriodicResync&) = delete;
  PeriodicResync& operator=(const PeriodicResync&) = delete;

  void start();
  void stop();
  // Resyncs done so far.
  std::uint64_t resyncs() const { return resyncs_; }

private:
  void schedule();
  void tick();
  Clock::Duration nextInterval();

  Clock& clock_;
  WorkQueue& queue_;
  KeyLister keys_;
  Options options_;
  std::mt19937_64 random_;
  std::unique_ptr<Timer> timer_;
  bool running_ = false;
  std::uint64_t resyncs_ = 0;
};

} // namespace csiop::runtime
