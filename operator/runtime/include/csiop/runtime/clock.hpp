// Time source and one-shot timers for the runtime pieces (work queue, resync),
// so that tests can replace real time with a ManualClock they advance by hand
// (csiop/testsupport/manual_clock.hpp, in test/support: not in the shipped binary).
//
// Thread-safety: none. A clock, its timers and the callbacks they run belong to
// one single-threaded io_context, like the rest of the operator.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include <boost/asio/any_io_executor.hpp>

namespace csiop::runtime {

class Timer {
public:
  using TimePoint = std::chrono::steady_clock::time_point;

  virtual ~Timer() = default; // destroying a timer cancels it

  // Arms (or re-arms) the timer: `callback` runs once as a handler on the
  // timer's executor, at or after `when`, unless the timer is re-armed,
  // cancelled or destroyed first; then it never runs. Never runs inline.
  virtual void expireAt(TimePoint when, std::function<void()> callback) = 0;
  virtual void cancel() = 0;
};

class Clock {
public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  // A timer whose callbacks run on `executor`.
  virtual std::unique_ptr<Timer> makeTimer(const boost::asio::any_io_executor& executor) = 0;
};

// Real monotonic time; timers are boost::asio::steady_timer.
class SteadyClock final : public Clock {
public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  std::unique_ptr<Timer> makeTimer(const boost::asio::any_io_executor& executor) override;
};

// The process-wide SteadyClock (stateless, so sharing it is harmless).
Clock& steadyClock();

} // namespace csiop::runtime
