// How run() and ChildProcess start a child: what process.hpp promises of every child, in one
// place. Private to the support library.
#pragma once

#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <csiop/testsupport/process.hpp>

namespace csiop::testsupport::detail {

struct SpawnRequest {
  std::vector<std::string> argv;
  const EnvVars* env = nullptr; // none: the caller's environment as it is
  int stdinFd = -1;             // -1: /dev/null
  int stdoutFd = -1;            // -1: the caller's
  int stderrFd = -1;            // -1: the caller's
};

// argv[0] cannot be run: "cannot run <argv[0]>: <reason>".
struct CannotRun : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Starts the child (fork and exec) and returns its pid; the caller keeps its descriptors.
// Throws CannotRun when argv[0] is not an executable (looked up in PATH without a '/'), and
// std::runtime_error when fork fails.
pid_t spawn(const SpawnRequest& request);

// A waitpid() status as an exit code: the code, or 128+N for signal N.
int exitCodeOf(int status);

} // namespace csiop::testsupport::detail
