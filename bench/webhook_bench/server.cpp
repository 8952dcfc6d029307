#include "server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <csiop/webhook/server.hpp>

namespace csiop::bench::webhook {
namespace {

std::runtime_error systemError(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

} // namespace

csiop::webhook::ClusterView benchCluster() {
  return csiop::webhook::ClusterView{
      [](const std::string& driverName) {
        std::vector<std::string> users;
        for (const Stored& stored : {kTaken, kHostpath}) {
          if (driverName == stored.driver) {
            users.emplace_back(stored.name);
          }
        }
        return users;
      },
      [](const std::string&) -> const csiop::webhook::Json* { return nullptr; },
      [](const std::string&, const std::string&, const std::string&) { return std::string(); }};
}

int serve(const std::filesystem::path& certDir) {
  boost::asio::io_context io(1);
  csiop::webhook::WebhookOptions options;
  options.bindAddress = "127.0.0.1:0";
  options.certDir = certDir;
  options.log = [](std::string_view line) { std::cerr << "webhook server: " << line << "\n"; };
  // Every author a cluster admin (no API server here): one remembered answer per review.
  csiop::webhook::WebhookServer server(io.get_executor(), options, benchCluster(),
                                       csiop::webhook::fixedAuthority(true), [] { return true; });
  server.start();
  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&server](const boost::system::error_code& ec, int) {
    if (!ec) {
      server.stop();
    }
  });
  std::printf("port %u\n", static_cast<unsigned>(server.port()));
  std::fflush(stdout);
  io.run();
  return 0;
}

bool pinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return ::sched_setaffinity(0, sizeof set, &set) == 0;
}

ServerProcess::ServerProcess(const std::string& self, const std::filesystem::path& certDir,
                             int cpu) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw systemError("pipe");
  }
  const std::string dir = certDir.string();
  std::vector<std::string> argv = {self, "--serve", dir};
  std::vector<char*> args;
  for (auto& a : argv) {
    args.push_back(a.data());
  }
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    throw systemError("fork");
  }
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) {
      ::_exit(1);
    }
    if (cpu >= 0 && !pinToCpu(cpu)) {
      std::fprintf(stderr, "webhook_bench: cannot pin the server to CPU %d\n", cpu);
      ::_exit(1);
    }
    ::dup2(fds[1], STDOUT_FILENO);
    ::execv(self.c_str(), args.data());
    std::fprintf(stderr, "webhook_bench: exec %s: %s\n", self.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string line;
  pollfd p{fds[0], POLLIN, 0};
  while (line.find('\n') == std::string::npos && ::poll(&p, 1, 10'000) > 0) {
    char buffer[64];
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n <= 0) {
      break;
    }
    line.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  unsigned port = 0;
  if (std::sscanf(line.c_str(), "port %u", &port) != 1 || port == 0 || port > 65535) {
    stop();
    throw std::runtime_error("the webhook server did not start (it printed \"" + line + "\")");
  }
  port_ = static_cast<std::uint16_t>(port);
  announcement_ = line.substr(0, line.find('\n'));
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    stop();
  }
}

int ServerProcess::stop() {
  if (pid_ <= 0) {
    return -1;
  }
  ::kill(pid_, SIGTERM);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

ProcessStats processStats(pid_t pid) {
  ProcessStats stats;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    std::size_t kib = 0;
    fields >> key >> kib;
    if (key == "VmRSS:") {
      stats.rssBytes = kib * 1024;
    } else if (key == "VmHWM:") {
      stats.peakRssBytes = kib * 1024;
    }
  }
  // /proc/PID/stat: utime and stime are fields 14 and 15, counted after the
  // command name in parentheses (which may hold spaces).
  std::ifstream statFile("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat{std::istreambuf_iterator<char>(statFile), {}};
  if (const auto close = stat.rfind(')'); close != std::string::npos) {
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    unsigned long long ticks = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i >= 14) {
        ticks += std::stoull(field);
      }
    }
    stats.cpuSeconds = static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return stats;
}

} // namespace csiop::bench::webhook
