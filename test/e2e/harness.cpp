#include "harness.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

extern char** environ;

namespace csiop::e2e {
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
    if (fd_ >= 0)
      ::close(fd_);
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
  if (::pipe2(fds.data(), O_CLOEXEC) != 0)
    throw E2EError(std::string("pipe2: ") + std::strerror(errno));
  Pipe p;
  p.read = Fd(fds[0]);
  p.write = Fd(fds[1]);
  return p;
}

void setNonBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// RAII for the posix_spawn attribute objects.
struct SpawnSetup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attr{};
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  // The child gets its own process group, SIGPIPE at its default, nothing blocked.
  void ownProcessGroup() {
    sigset_t defaults, mask;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigemptyset(&mask);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &mask);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETSIGMASK);
  }
};

std::vector<std::string> buildEnv(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto key = entry.substr(0, entry.find('='));
    const bool overridden =
        std::any_of(extra.begin(), extra.end(), [&](const auto& kv) { return kv.first == key; });
    if (!overridden)
      env.push_back(entry);
  }
  for (const auto& [k, v] : extra)
    env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> cStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::filesystem::path workDir() {
  if (const char* e = std::getenv("CSIOP_E2E_WORK_DIR"); e != nullptr && *e != '\0')
    return e;
  return CSIOP_E2E_WORK_DIR;
}

std::filesystem::path envFilePath() {
  if (const char* e = std::getenv("CSIOP_E2E_ENV_FILE"); e != nullptr && *e != '\0')
    return e;
  return workDir() / "cluster.env";
}

std::string quoteArg(const std::string& a) {
  if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./:=,@%+") == std::string::npos)
    return a;
  std::string q = "'";
  for (char c : a) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

std::string indent(const std::string& text) {
  if (text.empty())
    return "    (empty)\n";
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out += "    " + line + "\n";
  return out;
}

} // namespace

std::string RunResult::command() const {
  std::string s;
  for (const auto& a : argv)
    s += (s.empty() ? "" : " ") + quoteArg(a);
  return s;
}

std::ostream& operator<<(std::ostream& os, const RunResult& r) {
  os << "$ " << r.command() << "\n  -> ";
  if (r.timedOut)
    os << "TIMED OUT (killed)";
  else
    os << "exit " << r.exitCode;
  return os << "\n  stdout:\n" << indent(r.out) << "  stderr:\n" << indent(r.err);
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  // A child that exits before reading all of stdin must not kill us with SIGPIPE.
  static std::once_flag sigpipe;
  std::call_once(sigpipe, [] { ::signal(SIGPIPE, SIG_IGN); });

  RunResult r;
  r.argv = argv;
  if (argv.empty())
    throw E2EError("run: empty argv");

  Pipe in = makePipe(), out = makePipe(), err = makePipe();
  SpawnSetup setup;
  if (options.input)
    posix_spawn_file_actions_adddup2(&setup.actions, in.read.get(), STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&setup.actions, out.write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&setup.actions, err.write.get(), STDERR_FILENO);
  setup.ownProcessGroup(); // a timeout kills the whole pipeline

  std::vector<std::string> args = argv;
  std::vector<std::string> env = buildEnv(options.env);
  auto cArgs = cStrings(args);
  auto cEnv = cStrings(env);
  pid_t pid = 0;
  const int rc =
      ::posix_spawnp(&pid, args[0].c_str(), &setup.actions, &setup.attr, cArgs.data(), cEnv.data());
  if (rc != 0) {
    r.exitCode = 127;
    r.err = "cannot run " + args[0] + ": " + std::strerror(rc);
    return r;
  }
  in.read.reset();
  out.write.reset();
  err.write.reset();
  if (!options.input)
    in.write.reset();

  const std::string input = options.input.value_or("");
  std::size_t written = 0;
  if (in.write.get() >= 0) {
    setNonBlocking(in.write.get());
    if (input.empty())
      in.write.reset();
  }
  setNonBlocking(out.read.get());
  setNonBlocking(err.read.get());

  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::array<char, 65536> buf{};
  while (out.read.get() >= 0 || err.read.get() >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timedOut = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    Fd* owners[3] = {};
    for (Fd* fd : {&out.read, &err.read, &in.write}) {
      if (fd->get() < 0)
        continue;
      fds[n].fd = fd->get();
      fds[n].events = fd == &in.write ? POLLOUT : POLLIN;
      owners[n++] = fd;
    }
    const int ready =
        ::poll(fds.data(), n, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR)
      throw E2EError(std::string("poll: ") + std::strerror(errno));
    for (nfds_t i = 0; i < n && ready > 0; ++i) {
      if (fds[i].revents == 0)
        continue;
      Fd& fd = *owners[i];
      if (&fd == &in.write) {
        const auto w = ::write(fd.get(), input.data() + written, input.size() - written);
        if (w > 0)
          written += static_cast<std::size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size())
          fd.reset();
        continue;
      }
      const auto got = ::read(fd.get(), buf.data(), buf.size());
      if (got > 0)
        (&fd == &out.read ? r.out : r.err).append(buf.data(), static_cast<std::size_t>(got));
      else if (got == 0 || (errno != EAGAIN && errno != EINTR))
        fd.reset();
    }
  }
  in.write.reset();
  out.read.reset();
  err.read.reset();

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    r.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.exitCode = 128 + WTERMSIG(status);
  return r;
}

Background::Background(const std::vector<std::string>& argv, const std::filesystem::path& log,
                       const std::vector<std::pair<std::string, std::string>>& extraEnv)
    : log_(log) {
  if (argv.empty())
    throw E2EError("Background: empty argv");
  SpawnSetup setup;
  posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&setup.actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&setup.actions, STDOUT_FILENO, STDERR_FILENO);
  setup.ownProcessGroup();
  std::vector<std::string> args = argv;
  std::vector<std::string> env = buildEnv(extraEnv);
  auto cArgs = cStrings(args);
  auto cEnv = cStrings(env);
  pid_t pid = 0;
  const int rc =
      ::posix_spawnp(&pid, args[0].c_str(), &setup.actions, &setup.attr, cArgs.data(), cEnv.data());
  if (rc != 0)
    throw E2EError("cannot run " + args[0] + ": " + std::strerror(rc));
  pid_ = pid;
}

Background::~Background() {
  if (running()) {
    ::kill(-pid_, SIGKILL);
    wait(10s);
  }
}

bool Background::running() {
  if (exit_)
    return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }
  return r == 0;
}

void Background::signal(int sig) {
  if (running())
    ::kill(-pid_, sig);
}

std::optional<int> Background::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline)
      return std::nullopt;
    std::this_thread::sleep_for(20ms);
  }
  return exit_;
}

std::string Background::log() const {
  std::ifstream in(log_);
  return {std::istreambuf_iterator<char>(in), {}};
}

RunResult bash(const std::string& script, const RunOptions& options) {
  return run({"bash", "-o", "pipefail", "-c", script}, options);
}

std::map<std::string, std::string> readEnvFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in)
    throw E2EError("cannot read " + path.string());
  std::map<std::string, std::string> vars;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      continue;
    vars[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return vars;
}

const Cluster& cluster() {
  static const Cluster c = [] {
    const auto path = envFilePath();
    if (!std::filesystem::exists(path))
      throw E2EError("no e2e cluster: " + path.string() +
                     " does not exist. The ctest fixture e2e.cluster.up writes it; run the tests "
                     "through ctest (ctest -L e2e) or run test/e2e/cluster-fixture up " +
                     path.string() + " " + operatorBinary().string());
    Cluster k;
    k.vars = readEnvFile(path);
    const auto get = [&](const std::string& key) {
      const auto it = k.vars.find(key);
      if (it == k.vars.end() || it->second.empty())
        throw E2EError(path.string() + " has no " + key + "=");
      return it->second;
    };
    k.kubeconfig = get("KUBECONFIG");
    k.kubectl = get("KUBECTL");
    k.nodes = std::stoi(get("NODES"));
    k.binDir = k.vars.count("BIN_DIR") ? k.vars["BIN_DIR"] : "";
    k.external = k.vars.count("EXTERNAL") && k.vars["EXTERNAL"] == "1";
    return k;
  }();
  return c;
}

std::filesystem::path sourceDir() {
  return CSIOP_SOURCE_DIR;
}

std::filesystem::path operatorBinary() {
  if (const char* e = std::getenv("CSIOP_OPERATOR_BINARY"); e != nullptr && *e != '\0')
    return e;
  return CSIOP_OPERATOR_BINARY;
}

std::filesystem::path writeArtifact(const std::string& name, std::string_view content) {
  const auto dir = workDir() / "artifacts";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!f)
    throw E2EError("cannot write " + path.string());
  return path;
}

RunResult kubectl(const std::vector<std::string>& args, const std::optional<std::string>& input,
                  std::chrono::milliseconds timeout) {
  const Cluster& c = cluster();
  std::vector<std::string> argv = {c.kubectl.string(), "--kubeconfig=" + c.kubeconfig.string(),
                                   // discovery/OpenAPI cache of this build, not ~/.kube/cache
                                   "--cache-dir=" + (workDir() / "kube-cache").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {.input = input, .timeout = timeout});
}

Json kubectlJson(const std::vector<std::string>& args, const std::optional<std::string>& input,
                 std::chrono::milliseconds timeout) {
  auto withOutput = args;
  withOutput.insert(withOutput.end(), {"-o", "json"});
  const auto r = kubectl(withOutput, input, timeout);
  if (!r.ok()) {
    std::ostringstream msg;
    msg << r;
    throw E2EError(msg.str());
  }
  try {
    return Json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    throw E2EError("kubectl printed invalid JSON (" + std::string(e.what()) + "): " + r.command());
  }
}

RunResult csiOperator(const std::vector<std::string>& args,
                      const std::optional<std::string>& input) {
  std::vector<std::string> argv = {operatorBinary().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {.input = input, .timeout = 60s});
}

bool waitFor(std::string_view description, std::chrono::milliseconds timeout,
             const std::function<bool(std::string& observed)>& probe,
             std::chrono::milliseconds interval, std::source_location caller) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout;
  std::string observed;
  int attempts = 0;
  for (;;) {
    ++attempts;
    observed.clear();
    try {
      if (probe(observed))
        return true;
    } catch (const std::exception& e) {
      observed = std::string("exception: ") + e.what();
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      break;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(interval, deadline - now));
  }
  const auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start);
  ADD_FAILURE_AT(caller.file_name(), static_cast<int>(caller.line()))
      << "timed out after " << std::fixed << std::setprecision(1) << secs.count() << "s ("
      << attempts << " attempts) waiting for " << description << "\nlast observed state:\n"
      << (observed.empty() ? std::string("(nothing recorded)") : observed);
  return false;
}

void applyCrds() {
  const auto crds = csiOperator({"crds"});
  std::ostringstream msg;
  if (!crds.ok()) {
    msg << "csi-operator crds failed:\n" << crds;
    throw E2EError(msg.str());
  }
  const auto applied = kubectl(
      {"apply", "--server-side", "--field-manager=csiop-e2e", "-f", "-", "-o", "name"}, crds.out);
  if (!applied.ok()) {
    msg << "applying the CRDs failed:\n" << applied;
    throw E2EError(msg.str());
  }
  // "customresourcedefinition.apiextensions.k8s.io/<plural>.<group>" per line
  std::vector<std::string> names;
  std::istringstream lines(applied.out);
  for (std::string line; std::getline(lines, line);)
    if (const auto slash = line.find('/'); slash != std::string::npos)
      names.push_back(line.substr(slash + 1));
  if (names.empty())
    throw E2EError("kubectl apply named no CRDs:\n" + applied.out);
  for (const auto& name : names) {
    const bool served = waitFor("CRD " + name + " Established and served", 60s, [&](auto& seen) {
      const auto crd = kubectlJson({"get", "customresourcedefinition", name});
      bool established = false;
      for (const auto& c : crd["status"].value("conditions", Json::array()))
        established |= c.value("type", "") == "Established" && c.value("status", "") == "True";
      seen = crd["status"].dump(2);
      if (!established)
        return false;
      const auto list = kubectl({"get", name});
      seen += "\n" + list.err;
      return list.ok();
    });
    if (!served)
      throw E2EError("CRD " + name + " did not become Established and served");
  }
}

std::filesystem::path snapshotManifests() {
  const auto has = [](const std::filesystem::path& dir) {
    return std::filesystem::exists(dir / "snapshot.storage.k8s.io_volumesnapshotclasses.yaml");
  };
  if (const char* dir = std::getenv("CSIOP_SNAPSHOT_MANIFESTS"); dir != nullptr && *dir != '\0') {
    return has(dir) ? std::filesystem::path(dir) : std::filesystem::path();
  }
  if (const char* dir = std::getenv("CSIOP_IMAGE_ARCHIVES"); dir != nullptr && *dir != '\0') {
    if (has(std::filesystem::path(dir) / "manifests")) {
      return std::filesystem::path(dir) / "manifests";
    }
  }
  const auto beside = sourceDir().parent_path() / "shared/upstream-images/manifests";
  return has(beside) ? beside : std::filesystem::path();
}

bool applySnapshotCrds() {
  const auto dir = snapshotManifests();
  if (dir.empty()) {
    return false;
  }
  for (const char* crd : {"volumesnapshotclasses", "volumesnapshotcontents", "volumesnapshots"}) {
    const auto applied =
        kubectl({"apply", "--server-side", "--force-conflicts", "-f",
                 (dir / ("snapshot.storage.k8s.io_" + std::string(crd) + ".yaml")).string()});
    if (!applied.ok()) {
      throw E2EError("applying the snapshot CRDs: " + applied.err);
    }
  }
  return true;
}

} // namespace csiop::e2e
