// Child processes of the e2e tests and the benchmarks: programs run to completion with their
// output captured, and long-running ones (the operator under test) writing to a log file.
//
//   run({"prog", "arg"}, {.input = "...", .timeout = 30s})  argv, no shell; separate out/err
//   bash("a | b")                                          when a pipeline is clearer
//   ChildProcess op(argv, "operator.log")                  runs until stopped or destroyed
//
// Every child starts in a process group of its own (a timeout or a kill reaches the whole
// pipeline), with stdin from /dev/null unless given input, none of the caller's other file
// descriptors (an e2e test's or a benchmark's API connections are not the child's), SIGPIPE at
// its default and no signal blocked, and it gets SIGTERM if the thread that started it ends
// first (a test or benchmark that dies leaves no operator behind). argv[0] without a '/' is
// looked up in PATH. Exit codes are 128+N for a child killed by signal N.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace csiop::testsupport {

// NAME, value: added to the caller's environment, replacing a variable of that name.
using EnvVars = std::vector<std::pair<std::string, std::string>>;

struct RunOptions {
  std::optional<std::string> input = {};                         // stdin (none: /dev/null)
  std::chrono::milliseconds timeout = std::chrono::seconds(120); // then the group is killed
  EnvVars env = {};
  bool inheritStderr = false; // stderr to the caller's (progress on a terminal), not into `err`
};

struct RunResult {
  std::vector<std::string> argv;
  int exitCode = -1; // 128+N when killed by signal N; 127 when argv[0] cannot be run
  bool timedOut = false;
  std::string out;
  std::string err;

  bool ok() const { return exitCode == 0 && !timedOut; }
  std::string command() const; // argv joined, for messages
};
// The command, its exit, stdout and stderr: `ASSERT_TRUE(r.ok()) << r;`.
std::ostream& operator<<(std::ostream& os, const RunResult& r);

// Runs argv to completion. Throws std::invalid_argument on an empty argv.
RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});
// bash -o pipefail -c script
RunResult bash(const std::string& script, const RunOptions& options = {});

// A long-running process with stdout and stderr appended to a log file; SIGKILLed (its whole
// group) when destroyed while it runs. Throws std::runtime_error if argv[0] cannot be run.
class ChildProcess {
public:
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log,
               EnvVars env = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running(); // reaps it if it exited
  std::optional<int> exitCode() const { return exit_; }
  void signal(int sig); // to its whole process group, while it runs
  // Waits for the exit: its code, or nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  // SIGTERM, then SIGKILL after `grace`; its exit code.
  int stop(std::chrono::milliseconds grace);
  // Starts it again (same environment) once it has exited; throws std::logic_error before.
  void restart(const std::vector<std::string>& argv, const std::filesystem::path& log);
  std::string log() const; // what it has written so far

private:
  void start(const std::vector<std::string>& argv, const std::filesystem::path& log);

  EnvVars env_;
  std::filesystem::path log_;
  pid_t pid_ = -1;
  std::optional<int> exit_;
};

} // namespace csiop::testsupport
