#include "process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace csiop::bench {
namespace {

std::runtime_error systemError(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

// argv as execv wants it; the strings must outlive the call.
std::vector<char*> cArgv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) {
    out.push_back(const_cast<char*>(a.c_str()));
  }
  out.push_back(nullptr);
  return out;
}

int decodeStatus(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

} // namespace

Captured runCapture(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    throw std::invalid_argument("runCapture: empty argv");
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw systemError("pipe");
  }
  auto args = cArgv(argv);
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw systemError("fork");
  }
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    const int devNull = ::open("/dev/null", O_RDONLY);
    ::dup2(devNull, STDIN_FILENO);
    ::close_range(3, ~0U, 0); // e.g. the benchmark's API connections
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  Captured result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.out.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exitCode = decodeStatus(status);
  return result;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log,
                           std::vector<std::string> env)
    : env_(std::move(env)) {
  start(argv, log);
}

void ChildProcess::restart(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  if (running()) {
    throw std::logic_error("ChildProcess::restart: the process still runs");
  }
  exit_.reset();
  start(argv, log);
}

void ChildProcess::start(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  if (argv.empty()) {
    throw std::invalid_argument("ChildProcess: empty argv");
  }
  const int logFd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logFd < 0) {
    throw systemError("open " + log.string());
  }
  auto args = cArgv(argv);
  // The environment is built before fork: the child may only make async-signal-safe calls.
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto name = entry.substr(0, entry.find('=') + 1);
    const bool overridden = std::any_of(
        env_.begin(), env_.end(), [&](const std::string& v) { return v.rfind(name, 0) == 0; });
    if (!overridden) {
      environment.push_back(entry);
    }
  }
  environment.insert(environment.end(), env_.begin(), env_.end());
  auto envp = cArgv(environment);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(logFd);
    throw systemError("fork");
  }
  if (pid_ == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) {
      ::_exit(1); // the benchmark died before prctl
    }
    const int devNull = ::open("/dev/null", O_RDONLY);
    ::dup2(devNull, STDIN_FILENO);
    ::dup2(logFd, STDOUT_FILENO);
    ::dup2(logFd, STDERR_FILENO);
    ::close_range(3, ~0U, 0); // the benchmark's API connections are not the operator's
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(logFd);
}

ChildProcess::~ChildProcess() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

bool ChildProcess::running() {
  if (exit_) {
    return false;
  }
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_ = decodeStatus(status);
    return false;
  }
  return r == 0;
}

void ChildProcess::signal(int sig) {
  if (running()) {
    ::kill(pid_, sig);
  }
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  signal(SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (running()) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exit_ = decodeStatus(status);
  }
  return exit_.value_or(-1);
}

MemoryUsage readMemory(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  MemoryUsage m;
  std::string line;
  while (std::getline(in, line)) {
    const auto value = [&](const char* key) {
      return line.rfind(key, 0) == 0 ? std::stol(line.substr(std::strlen(key))) : -1L;
    };
    if (line.rfind("VmRSS:", 0) == 0) {
      m.rssKb = value("VmRSS:");
    } else if (line.rfind("VmHWM:", 0) == 0) {
      m.hwmKb = value("VmHWM:");
    } else if (line.rfind("RssAnon:", 0) == 0) {
      m.anonKb = value("RssAnon:");
    }
  }
  return m;
}

double readCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  // "pid (comm) state ppid ...": comm may hold spaces and ')', so count from the last ')'.
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos) {
    return -1;
  }
  std::istringstream fields(stat.substr(paren + 1));
  std::string skipped;
  for (int i = 3; i <= 13; ++i) { // state .. cmajflt
    fields >> skipped;
  }
  unsigned long long utime = 0;
  unsigned long long stime = 0;
  if (!(fields >> utime >> stime)) {
    return -1;
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

CpuMeter::CpuMeter(pid_t pid, std::chrono::milliseconds sampleEvery)
    : pid_(pid), startAt_(std::chrono::steady_clock::now()), startCpu_(readCpuSeconds(pid)) {
  if (sampleEvery.count() > 0) {
    sampler_ = std::thread([this, sampleEvery] { sample(sampleEvery); });
  }
}

CpuMeter::~CpuMeter() {
  stopSampling();
}

void CpuMeter::sample(std::chrono::milliseconds every) {
  auto lastAt = startAt_;
  double last = startCpu_;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, every, [this] { return stopping_; })) {
    const double cpu = readCpuSeconds(pid_);
    const auto now = std::chrono::steady_clock::now();
    const double wall = std::chrono::duration<double>(now - lastAt).count();
    if (cpu >= 0 && last >= 0 && wall > 0) {
      peak_ = std::max(peak_.value_or(0.0), (cpu - last) / wall * 1000);
    }
    last = cpu;
    lastAt = now;
  }
}

void CpuMeter::stopSampling() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (sampler_.joinable()) {
    sampler_.join();
  }
}

std::optional<CpuUsage> CpuMeter::finish() {
  stopSampling();
  const double cpu = readCpuSeconds(pid_);
  if (cpu < 0 || startCpu_ < 0) {
    return std::nullopt;
  }
  CpuUsage u;
  u.wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - startAt_).count();
  u.cpuSeconds = cpu - startCpu_;
  u.peakMillicores = peak_;
  return u;
}

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw systemError("socket");
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw systemError("bind 127.0.0.1:0");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

} // namespace csiop::bench
