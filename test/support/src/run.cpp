#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <sstream>
#include <utility>

#include <csiop/testsupport/process.hpp>

#include "spawn.hpp"

namespace csiop::testsupport {
namespace {

// Owns one file descriptor.
class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = -1;
  }

private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

Pipe makePipe() {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  }
  Pipe p;
  p.read = Fd(fds[0]);
  p.write = Fd(fds[1]);
  return p;
}

void setNonBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

std::string quoteArg(const std::string& a) {
  if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./:=,@%+") == std::string::npos) {
    return a;
  }
  std::string q = "'";
  for (char c : a) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

std::string indent(const std::string& text) {
  if (text.empty()) {
    return "    (empty)\n";
  }
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out += "    " + line + "\n";
  }
  return out;
}

// Feeds `input` to the child and collects its stdout (and stderr, when piped) until both are
// closed or the deadline passes; then the child's group is killed and `r.timedOut` set.
void exchange(pid_t pid, const std::string& input, Fd& in, Fd& out, Fd& err,
              std::chrono::steady_clock::time_point deadline, RunResult& r) {
  std::size_t written = 0;
  if (in.get() >= 0) {
    setNonBlocking(in.get());
    if (input.empty()) {
      in.reset();
    }
  }
  setNonBlocking(out.get());
  if (err.get() >= 0) {
    setNonBlocking(err.get());
  }
  std::array<char, 65536> buf{};
  while (out.get() >= 0 || err.get() >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timedOut = true;
      ::kill(-pid, SIGKILL);
      return;
    }
    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    Fd* owners[3] = {};
    for (Fd* fd : {&out, &err, &in}) {
      if (fd->get() < 0) {
        continue;
      }
      fds[n].fd = fd->get();
      fds[n].events = fd == &in ? POLLOUT : POLLIN;
      owners[n++] = fd;
    }
    const int ready =
        ::poll(fds.data(), n, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    for (nfds_t i = 0; i < n && ready > 0; ++i) {
      if (fds[i].revents == 0) {
        continue;
      }
      Fd& fd = *owners[i];
      if (&fd == &in) {
        const auto w = ::write(fd.get(), input.data() + written, input.size() - written);
        if (w > 0) {
          written += static_cast<std::size_t>(w);
        }
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) {
          fd.reset();
        }
        continue;
      }
      const auto got = ::read(fd.get(), buf.data(), buf.size());
      if (got > 0) {
        (&fd == &out ? r.out : r.err).append(buf.data(), static_cast<std::size_t>(got));
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        fd.reset();
      }
    }
  }
}

} // namespace

std::string RunResult::command() const {
  std::string s;
  for (const auto& a : argv) {
    s += (s.empty() ? "" : " ") + quoteArg(a);
  }
  return s;
}

std::ostream& operator<<(std::ostream& os, const RunResult& r) {
  os << "$ " << r.command() << "\n  -> ";
  if (r.timedOut) {
    os << "TIMED OUT (killed)";
  } else {
    os << "exit " << r.exitCode;
  }
  return os << "\n  stdout:\n" << indent(r.out) << "  stderr:\n" << indent(r.err);
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  // A child that exits before reading all of stdin must not kill us with SIGPIPE.
  static std::once_flag sigpipe;
  std::call_once(sigpipe, [] { ::signal(SIGPIPE, SIG_IGN); });

  RunResult r;
  r.argv = argv;
  if (argv.empty()) {
    throw std::invalid_argument("run: empty argv");
  }
  Pipe in = makePipe(), out = makePipe();
  Pipe err = options.inheritStderr ? Pipe{} : makePipe();
  detail::SpawnRequest request{argv, &options.env, options.input ? in.read.get() : -1,
                               out.write.get(), err.write.get()};
  pid_t pid = 0;
  try {
    pid = detail::spawn(request);
  } catch (const detail::CannotRun& e) {
    r.exitCode = 127;
    r.err = e.what();
    return r;
  }
  in.read.reset();
  out.write.reset();
  err.write.reset();
  if (!options.input) {
    in.write.reset();
  }
  exchange(pid, options.input.value_or(""), in.write, out.read, err.read,
           std::chrono::steady_clock::now() + options.timeout, r);
  in.write.reset();
  out.read.reset();
  err.read.reset();

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    r.exitCode = detail::exitCodeOf(status);
  }
  return r;
}

RunResult bash(const std::string& script, const RunOptions& options) {
  return run({"bash", "-o", "pipefail", "-c", script}, options);
}

} // namespace csiop::testsupport
