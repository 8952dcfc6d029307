#include "event_meter.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <sys/resource.h>

namespace csiop::bench {
namespace {

std::chrono::microseconds since0(const timeval& t) {
  return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec);
}

} // namespace

EventMeter::EventMeter(std::size_t target) : target_(target) {
  if (target < 2) {
    throw std::invalid_argument("the events to hear must be 2 at least");
  }
}

EventMeter::Sample EventMeter::now() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return {since0(usage.ru_utime) + since0(usage.ru_stime), std::chrono::steady_clock::now(),
          usage.ru_maxrss};
}

bool EventMeter::heard() {
  ++events_;
  if (events_ == 1) {
    first_ = now();
  } else if (events_ == target_) {
    last_ = now();
    return true;
  }
  return false;
}

std::string EventMeter::line(std::size_t handlerCalls) const {
  const double cpuUs = static_cast<double>((last_.cpu - first_.cpu).count());
  const std::chrono::duration<double> wall = last_.wall - first_.wall;
  return fmt::format("events={} handler_calls={} cpu_us_per_event={:.2f} wall_s={:.3f} "
                     "maxrss_kib={}",
                     events_, handlerCalls, cpuUs / static_cast<double>(target_ - 1), wall.count(),
                     last_.maxRssKib);
}

} // namespace csiop::bench
