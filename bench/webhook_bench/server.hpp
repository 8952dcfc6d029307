// The server side of webhook_bench: a WebhookServer in a process of its own,
// pinned to one CPU, and what /proc tells about that process.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include <csiop/webhook/admission.hpp>

namespace csiop::bench::webhook {

// A DriverDeployment the server's cluster holds, and its driver name.
struct Stored {
  const char* name;
  const char* driver;
};
// The cluster the server judges against, as the operator's cache shows it: kTaken, and kHostpath
// (examples/hostpath.yaml, whose CREATE the mix repeats); no CSIDrivers. A create racing one
// admitted moments ago, not in the cache yet, waits until the cache shows its holder (the
// webhook's tests cover it): the API server's storing, not the webhook's work, so not in the mix.
inline constexpr Stored kTaken{"existing", "taken.csi.example.com"};
inline constexpr Stored kHostpath{"hostpath", "hostpath.csi.k8s.io"};
csiop::webhook::ClusterView benchCluster();

// The server process's main: a WebhookServer on 127.0.0.1 (an ephemeral port)
// serving the certificate in `certDir`; writes "port N" to stdout once it
// listens and serves until SIGTERM or SIGINT. Returns the exit code.
int serve(const std::filesystem::path& certDir);

// Runs `self --serve certDir` as a child pinned to `cpu` (-1: not pinned) and
// waits (10 s at most) for its port: the first line it writes to stdout
// begins "port N"; announcement() is that line, for a child that tells more.
// The child ends with the parent.
class ServerProcess {
public:
  ServerProcess(const std::string& self, const std::filesystem::path& certDir, int cpu);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::uint16_t port() const { return port_; }
  const std::string& announcement() const { return announcement_; }
  // SIGTERM, then waits; the child's exit code (128+N for signal N).
  int stop();

private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::string announcement_;
};

struct ProcessStats {
  std::size_t rssBytes = 0;     // VmRSS
  std::size_t peakRssBytes = 0; // VmHWM
  double cpuSeconds = 0;        // user + system
};
ProcessStats processStats(pid_t pid);

// Pins the calling thread (and its future children) to `cpu`; false if it cannot.
bool pinToCpu(int cpu);

} // namespace csiop::bench::webhook
