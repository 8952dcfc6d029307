#include <csiop/runtime/memory_release.hpp>

#include <utility>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace csiop::runtime {

void releaseFreedMemory() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

IdleMemoryRelease::IdleMemoryRelease(const boost::asio::any_io_executor& executor, Clock& clock,
                                     Clock::Duration quiet, std::function<void()> release)
    : clock_(clock), quiet_(quiet), release_(std::move(release)),
      timer_(clock.makeTimer(executor)) {}

void IdleMemoryRelease::activity() {
  if (stopped_) {
    return;
  }
  timer_->expireAt(clock_.now() + quiet_, [this] {
    release_();
    ++releases_;
  });
}

void IdleMemoryRelease::stop() {
  stopped_ = true;
  timer_->cancel();
}

} // namespace csiop::runtime
