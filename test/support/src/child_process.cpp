#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include <csiop/testsupport/process.hpp>

#include "spawn.hpp"

namespace csiop::testsupport {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log,
                           EnvVars env)
    : env_(std::move(env)) {
  start(argv, log);
}

ChildProcess::~ChildProcess() {
  if (running()) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void ChildProcess::start(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  const int logFd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logFd < 0) {
    throw std::runtime_error("open " + log.string() + ": " + std::strerror(errno));
  }
  try {
    pid_ = detail::spawn({argv, &env_, -1, logFd, logFd});
  } catch (...) {
    ::close(logFd);
    throw;
  }
  ::close(logFd);
  log_ = log;
}

void ChildProcess::restart(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  if (running()) {
    throw std::logic_error("ChildProcess::restart: the process still runs");
  }
  exit_.reset();
  start(argv, log);
}

bool ChildProcess::running() {
  if (exit_) {
    return false;
  }
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_ = detail::exitCodeOf(status);
    return false;
  }
  return r == 0;
}

void ChildProcess::signal(int sig) {
  if (running()) {
    ::kill(-pid_, sig);
  }
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return exit_;
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  signal(SIGTERM);
  wait(grace);
  if (running()) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    exit_ = detail::exitCodeOf(status);
  }
  return exit_.value_or(-1);
}

std::string ChildProcess::log() const {
  std::ifstream in(log_);
  return {std::istreambuf_iterator<char>(in), {}};
}

} // namespace csiop::testsupport
