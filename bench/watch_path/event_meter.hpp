// What each client of the watch path benchmark measures and prints (clientgo-watch prints the
// same line): the process's CPU time (getrusage RUSAGE_SELF: user + system, every thread) and the
// wall time from the first event heard to the N-th, per event after the first; the peak RSS.
//
//   events=20000 handler_calls=19000 cpu_us_per_event=41.2 wall_s=19.999 maxrss_kib=15360
//
// Start-up (the TLS handshake, the list) comes before the first event and is not counted.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace csiop::bench {

class EventMeter {
public:
  // target: N, at least 2.
  explicit EventMeter(std::size_t target);

  // One more event heard; true when it is the N-th (the figures are taken then).
  bool heard();
  std::size_t events() const { return events_; }
  bool done() const { return events_ >= target_; }
  // The line above, once done(); handlerCalls: how often the cache's handlers were called.
  std::string line(std::size_t handlerCalls) const;

private:
  struct Sample {
    std::chrono::microseconds cpu{};
    std::chrono::steady_clock::time_point wall{};
    long maxRssKib = 0;
  };
  static Sample now();

  std::size_t target_;
  std::size_t events_ = 0;
  Sample first_;
  Sample last_;
};

} // namespace csiop::bench
