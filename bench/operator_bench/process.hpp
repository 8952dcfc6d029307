// Child processes of the benchmark: the cluster scripts (run to completion, stdout captured)
// and the operator (runs in the background, output to a log file), plus what /proc says about
// a process's memory and CPU time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace csiop::bench {

struct Captured {
  int exitCode = -1; // 128+N when killed by signal N
  std::string out;   // stdout; stderr goes to the benchmark's stderr
};

// Runs argv[0] (a path) to completion.
Captured runCapture(const std::vector<std::string>& argv);

// A process started in its own process group, stdout and stderr appended to a log file, with
// the benchmark's environment and `env` ("NAME=value", overriding). It gets SIGTERM if the
// benchmark dies first; the destructor kills it (SIGKILL) if it still runs.
class ChildProcess {
public:
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log,
               std::vector<std::string> env = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running(); // reaps it if it exited
  std::optional<int> exitCode() const { return exit_; }
  void signal(int sig);
  // SIGTERM, then SIGKILL after grace; returns the exit code.
  int stop(std::chrono::milliseconds grace);
  // Starts it again once it has stopped.
  void restart(const std::vector<std::string>& argv, const std::filesystem::path& log);

private:
  void start(const std::vector<std::string>& argv, const std::filesystem::path& log);

  std::vector<std::string> env_;
  pid_t pid_ = -1;
  std::optional<int> exit_;
};

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

// A loopback TCP port that was free a moment ago (bound to port 0, then released).
int freeLoopbackPort();

} // namespace csiop::bench
