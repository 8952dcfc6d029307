// Handing the memory the allocator keeps free back to the system. A list of many objects, or a
// rollout of many drivers, leaves the heap at its peak: glibc keeps every freed chunk for reuse,
// scattered between what is still in use, so the resident size stays at the peak for good. Go's
// runtime returns such pages by itself (its scavenger); here the operator asks for it after a
// list (Reflector) and once it has gone quiet (IdleMemoryRelease).
//
// Thread-safety: none; IdleMemoryRelease runs on the given (single-threaded) executor.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <boost/asio/any_io_executor.hpp>

#include <csiop/runtime/clock.hpp>

namespace csiop::runtime {

// glibc: malloc_trim(0), which returns the free pages from the middle of the heap too (a few
// milliseconds for a heap of tens of MiB). Elsewhere: nothing.
void releaseFreedMemory();

// Releases freed memory once the work has stopped for `quiet`: activity() after each unit of
// work (a reconcile) restarts the wait; one release per quiet period, none while work goes on.
class IdleMemoryRelease {
public:
  IdleMemoryRelease(const boost::asio::any_io_executor& executor, Clock& clock,
                    Clock::Duration quiet, std::function<void()> release = releaseFreedMemory);
  IdleMemoryRelease(const IdleMemoryRelease&) = delete;
  IdleMemoryRelease& operator=(const IdleMemoryRelease&) = delete;

  void activity();
  void stop();
  // Releases done so far.
  std::uint64_t releases() const { return releases_; }

private:
  Clock& clock_;
  Clock::Duration quiet_;
  std::function<void()> release_;
  std::unique_ptr<Timer> timer_;
  bool stopped_ = false;
  std::uint64_t releases_ = 0;
};

} // namespace csiop::runtime
