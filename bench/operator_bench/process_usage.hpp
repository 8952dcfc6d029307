// What /proc says about a process's memory and CPU time (the operator's, a peer's, the
// benchmark's own). Starting them is test/support's (<csiop/testsupport/process.hpp>).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace csiop::bench {

struct MemoryUsage {
  long rssKb = -1;  // VmRSS
  long hwmKb = -1;  // VmHWM (peak RSS)
  long anonKb = -1; // RssAnon (heap and other anonymous memory; the rest is file-backed)
};
MemoryUsage readMemory(pid_t pid);

// utime + stime of /proc/<pid>/stat (all its threads, not its children) in seconds; counted in
// clock ticks, sysconf(_SC_CLK_TCK) a second. -1 if it cannot be read.
double readCpuSeconds(pid_t pid);

// The CPU time a process used over a phase.
struct CpuUsage {
  double wallSeconds = 0;
  double cpuSeconds = 0;
  std::optional<double> peakMillicores; // busiest sampling interval, when sampled
  double millicores() const { return wallSeconds > 0 ? cpuSeconds / wallSeconds * 1000 : 0; }
};

// Measures a process's CPU time from construction to finish(). Given a sampling interval, a
// thread also reads it every interval and keeps the busiest one as the peak.
class CpuMeter {
public:
  explicit CpuMeter(pid_t pid, std::chrono::milliseconds sampleEvery = {});
  ~CpuMeter();
  CpuMeter(const CpuMeter&) = delete;
  CpuMeter& operator=(const CpuMeter&) = delete;

  // Stops the sampling; nullopt if /proc could not be read.
  std::optional<CpuUsage> finish();

private:
  void sample(std::chrono::milliseconds every);
  void stopSampling();

  pid_t pid_;
  std::chrono::steady_clock::time_point startAt_;
  double startCpu_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<double> peak_;
  std::thread sampler_;
};

} // namespace csiop::bench
