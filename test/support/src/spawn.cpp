#include "spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

extern char** environ;

namespace csiop::testsupport::detail {
namespace {

bool executableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The file exec will run, as execvp finds it (with the caller's PATH).
std::string programPath(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (!executableFile(name)) {
      const int error = ::access(name.c_str(), F_OK) == 0 ? EACCES : ENOENT;
      throw CannotRun("cannot run " + name + ": " + std::strerror(error));
    }
    return name;
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/bin:/usr/bin";
  for (std::size_t from = 0; from <= dirs.size();) {
    const auto to = std::min(dirs.find(':', from), dirs.size());
    const std::string dir = dirs.substr(from, to - from);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (executableFile(candidate)) {
      return candidate;
    }
    from = to + 1;
  }
  throw CannotRun("cannot run " + name + ": " + std::strerror(ENOENT));
}

std::vector<std::string> environmentWith(const EnvVars& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto name = entry.substr(0, entry.find('='));
    const bool replaced =
        std::any_of(extra.begin(), extra.end(), [&](const auto& kv) { return kv.first == name; });
    if (!replaced) {
      env.push_back(entry);
    }
  }
  for (const auto& [name, value] : extra) {
    env.push_back(name + "=" + value);
  }
  return env;
}

// argv or envp as exec wants them; the strings must outlive the call.
std::vector<char*> cStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

// In the child, between fork and exec: async-signal-safe calls only.
[[noreturn]] void becomeChild(pid_t parent, const std::array<int, 3>& stdio, const char* path,
                              char* const* argv, char* const* envp) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) {
    ::_exit(1); // the parent ended before prctl
  }
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &defaults, nullptr); // an ignored signal would stay ignored across exec
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Out of 0..2 first, so that one dup2 cannot overwrite the source of another.
  std::array<int, 3> moved{};
  for (std::size_t i = 0; i < stdio.size(); ++i) {
    moved[i] = stdio[i] < 0 ? -1 : ::fcntl(stdio[i], F_DUPFD_CLOEXEC, 10);
  }
  for (std::size_t i = 0; i < stdio.size(); ++i) {
    if (moved[i] >= 0) {
      ::dup2(moved[i], static_cast<int>(i));
    }
  }
  ::close_range(3, ~0U, 0);
  ::execve(path, argv, envp);
  ::_exit(127);
}

} // namespace

pid_t spawn(const SpawnRequest& request) {
  if (request.argv.empty()) {
    throw std::invalid_argument("spawn: empty argv");
  }
  // Everything the child needs is made before fork: after it, only async-signal-safe calls.
  const std::string path = programPath(request.argv.front());
  std::vector<std::string> args = request.argv;
  std::vector<std::string> env = environmentWith(request.env != nullptr ? *request.env : EnvVars{});
  const auto cArgs = cStrings(args);
  const auto cEnv = cStrings(env);
  std::optional<int> devNull;
  if (request.stdinFd < 0) {
    devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  const std::array<int, 3> stdio = {devNull.value_or(request.stdinFd), request.stdoutFd,
                                    request.stderrFd};
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    becomeChild(parent, stdio, path.c_str(), cArgs.data(), cEnv.data());
  }
  const int forkError = errno;
  if (devNull && *devNull >= 0) {
    ::close(*devNull);
  }
  if (pid < 0) {
    throw std::runtime_error(std::string("fork: ") + std::strerror(forkError));
  }
  ::setpgid(pid, pid); // as the child does: whichever runs first, the group exists on return
  return pid;
}

int exitCodeOf(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

} // namespace csiop::testsupport::detail
