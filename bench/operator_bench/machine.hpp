// The machine the figures were taken on.
#pragma once

#include <string>

namespace csiop::bench {

struct Machine {
  long cpus = 0;        // online CPUs (nproc)
  std::string cpuModel; // /proc/cpuinfo "model name"
  long memTotalKb = 0;  // /proc/meminfo MemTotal
  std::string kernel;   // uname -r
};

Machine describeMachine();
// "0.52 0.61 0.70" (/proc/loadavg: 1, 5 and 15 minutes).
std::string loadAverage();

} // namespace csiop::bench
