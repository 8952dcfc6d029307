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

// The CPU time of the whole machine (/proc/stat "cpu", all cores, in clock ticks).
struct MachineCpu {
  long long busy = 0;  // every state but idle and iowait
  long long total = 0; // every state
};
MachineCpu readMachineCpu();
// Share of all cores busy between two readings, in percent (100: every core all the time).
double busyPercent(const MachineCpu& from, const MachineCpu& to);

} // namespace csiop::bench
