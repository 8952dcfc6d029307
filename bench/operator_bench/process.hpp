// Child processes of the benchmark: the cluster scripts (run to completion, stdout captured)
// and the operator (runs in the background, output to a log file), plus what /proc says about
// a process's memory.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace csiop::bench {

struct Captured {
  int exitCode = -1; // 128+N when killed by signal N
  std::string out;   // stdout; stderr goes to the benchmark's stderr
};

// Runs argv[0] (a path) to completion.
Captured runCapture(const std::vector<std::string>& argv);

// A process started in its own process group, stdout and stderr appended to a log file. It
// gets SIGTERM if the benchmark dies first; the destructor kills it (SIGKILL) if it still runs.
class ChildProcess {
public:
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running(); // reaps it if it exited
  std::optional<int> exitCode() const { return exit_; }
  void signal(int sig);
  // SIGTERM, then SIGKILL after grace; returns the exit code.
  int stop(std::chrono::milliseconds grace);

private:
  pid_t pid_ = -1;
  std::optional<int> exit_;
};

struct MemoryUsage {
  long rssKb = -1; // VmRSS
  long hwmKb = -1; // VmHWM (peak RSS)
};
MemoryUsage readMemory(pid_t pid);

// A loopback TCP port that was free a moment ago (bound to port 0, then released).
int freeLoopbackPort();

} // namespace csiop::bench
