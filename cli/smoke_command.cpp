// `csi-operator smoke-volume DIR --nonce TEXT`: what the smoke pod of a verified rollout runs on
// a canary node, in the operator's own image (which holds only this binary), with the volume under
// test mounted at DIR. Three stages, each reported as it ends:
//   Write    create DIR/.csi-operator-smoke-<nonce> (it must not exist), write the nonce, fsync
//            the file and the directory;
//   Read     open it again and read it back: the same bytes;
//   Cleanup  remove it and fsync the directory.
// The kubelet has provisioned, attached and mounted the volume before the container starts; the
// operator reads those stages from the objects. A failure exits 1 and writes "<Stage>: <why>" to
// the termination log, which the kubelet copies into the pod's status for the operator to read;
// success writes the three stages' reports there, one per line, as on stdout.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "commands.hpp"

namespace csiop::cli {
namespace {

struct SmokeOptions {
  std::string dir;
  std::string nonce;
  std::string terminationLog = "/dev/termination-log";
};

// A failed stage: "<Stage>: <what>".
struct StageError {
  std::string stage;
  std::string message;
};

// A file descriptor closed on scope exit.
class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  // Closes now; the error of close(2), which is where some filesystems report a failed write.
  int close() {
    const int r = ::close(fd_);
    fd_ = -1;
    return r;
  }

private:
  int fd_;
};

std::string why(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

std::optional<std::string> syncDirectory(const std::string& dir) {
  const Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.ok()) {
    return why("opening " + dir);
  }
  if (::fsync(fd.get()) != 0) {
    return why("fsync of " + dir);
  }
  return std::nullopt;
}

std::optional<StageError> writeStage(const std::string& dir, const std::string& path,
                                     const std::string& content) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.ok()) {
    return StageError{"Write", why("creating " + path)};
  }
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return StageError{"Write", why("writing " + path)};
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) {
    return StageError{"Write", why("fsync of " + path)};
  }
  if (fd.close() != 0) {
    return StageError{"Write", why("closing " + path)};
  }
  if (auto failed = syncDirectory(dir)) {
    return StageError{"Write", *failed};
  }
  return std::nullopt;
}

std::optional<StageError> readStage(const std::string& path, const std::string& expected) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.ok()) {
    return StageError{"Read", why("opening " + path)};
  }
  std::string got;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return StageError{"Read", why("reading " + path)};
    }
    if (n == 0 || got.size() > expected.size()) {
      break;
    }
    got.append(buffer, static_cast<std::size_t>(n));
  }
  if (got != expected) {
    return StageError{"Read", "read back " + std::to_string(got.size()) + " bytes from " + path +
                                  " that differ from the " + std::to_string(expected.size()) +
                                  " bytes written"};
  }
  return std::nullopt;
}

std::optional<StageError> cleanupStage(const std::string& dir, const std::string& path) {
  if (::unlink(path.c_str()) != 0) {
    return StageError{"Cleanup", why("removing " + path)};
  }
  if (auto failed = syncDirectory(dir)) {
    return StageError{"Cleanup", *failed};
  }
  return std::nullopt;
}

// The kubelet reads at most 4096 bytes of the termination log; a log that cannot be written (no
// such file outside a pod) is not an error of the volume.
void terminationMessage(const std::string& file, const std::string& message) {
  if (file.empty()) {
    return;
  }
  std::ofstream out(file, std::ios::trunc);
  out << message.substr(0, 4096);
}

int runSmoke(const SmokeOptions& o, Streams& s) {
  const std::string path = o.dir + "/.csi-operator-smoke-" + o.nonce;
  const std::string content = "csi-operator smoke volume " + o.nonce + "\n";
  std::string report;
  const auto passed = [&](const std::string& line) {
    s.out << line << "\n";
    report += line + "\n";
  };
  std::optional<StageError> failed = writeStage(o.dir, path, content);
  if (!failed) {
    passed("Write: ok (" + std::to_string(content.size()) + " bytes, synced)");
    failed = readStage(path, content);
    if (!failed) {
      passed("Read: ok");
    }
    // Remove what Write made even when Read failed; report the first failure.
    if (auto cleanup = cleanupStage(o.dir, path); !cleanup) {
      passed("Cleanup: ok");
    } else if (!failed) {
      failed = std::move(cleanup);
    }
  }
  if (failed) {
    const std::string message = failed->stage + ": " + failed->message;
    s.err << "error: " << message << "\n";
    terminationMessage(o.terminationLog, message);
    return 1;
  }
  terminationMessage(o.terminationLog, report);
  return 0;
}

std::string checkNonce(const std::string& nonce) {
  if (nonce.empty() || nonce.size() > 128) {
    return "must be 1 to 128 characters";
  }
  for (const char c : nonce) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) {
      return "may hold only letters, digits, '-', '_' and '.'";
    }
  }
  return {};
}

} // namespace

Command addSmokeVolume(CLI::App& app) {
  auto o = std::make_shared<SmokeOptions>();
  auto* cmd = app.add_subcommand(
      "smoke-volume",
      "Write a nonce into DIR, read it back and remove it (the smoke pod of a verified rollout)");
  cmd->add_option("DIR", o->dir, "Where the volume under test is mounted")->required();
  cmd->add_option("--nonce", o->nonce, "What to write; names the file too")
      ->required()
      ->check(checkNonce);
  cmd->add_option(
         "--termination-log", o->terminationLog,
         "Where to write the stages' reports or \"<Stage>: <why>\" for the pod's status (\"\": "
         "nowhere)")
      ->capture_default_str();
  return [o](Streams& s) { return runSmoke(*o, s); };
}

} // namespace csiop::cli
