// A Clock that only moves when told to, for deterministic tests of anything
// that takes a Clock (work queue delays and backoff, periodic resync).
//
// It drives the io_context it is given: advance() fires due timers in deadline
// order and runs every ready handler (io_context::poll) after each firing, so a
// callback that re-arms a timer inside the advanced window fires in the same
// call, at its own deadline. Nothing ever waits on real time.
//
// Thread-safety: none; use from the thread that owns the io_context.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include <boost/asio/io_context.hpp>

#include <csiop/runtime/clock.hpp>

namespace csiop::testsupport {

class ManualClock final : public runtime::Clock {
public:
  // Time starts at an arbitrary fixed point (not the epoch, so code that
  // subtracts durations from now() stays in range).
  explicit ManualClock(boost::asio::io_context& io);
  ~ManualClock() override;
  ManualClock(const ManualClock&) = delete;
  ManualClock& operator=(const ManualClock&) = delete;

  TimePoint now() const override;
  std::unique_ptr<runtime::Timer> makeTimer(const boost::asio::any_io_executor& executor) override;

  // Moves time forward by `step` (or to `when`), firing every timer that falls
  // due on the way, earliest first, each with now() equal to its deadline.
  void advance(Duration step);
  void advanceTo(TimePoint when);
  // Runs all ready handlers without moving time.
  void settle();

  // Armed timers, and the earliest deadline among them.
  std::size_t pendingTimers() const;
  std::optional<TimePoint> nextDeadline() const;

  struct Core; // shared with the timers, which may outlive the clock

private:
  boost::asio::io_context& io_;
  std::shared_ptr<Core> core_;
};

} // namespace csiop::testsupport
