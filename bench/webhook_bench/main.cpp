// webhook_bench: throughput, latency and memory of the admission webhook's
// HTTPS server (webhook::WebhookServer) under sustained load.
//
// The server runs in a child process (this binary with --serve) pinned to one
// CPU; the load generator runs here, pinned to another. It opens N TLS
// keep-alive connections and sends AdmissionReviews for a fixed time: 70% a
// valid CREATE of examples/hostpath.yaml (allowed), 10% an invalid spec (422),
// 10% a driverName another DriverDeployment uses (403), 10% a second
// DriverDeployment for hostpath's driver name (403). Every answer is checked (uid echoed, allowed
// as expected). Prints reviews/s, latency percentiles, and the server's RSS at the start, middle
// and end of the measured window.
//
//   build/bench/webhook_bench [--connections 8] [--duration 20] [--warmup 2] [--rate 0]
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include <csiop/api/yaml.hpp>
#include <csiop/webhook/admission.hpp>

#include "load.hpp"
#include "pki.hpp"
#include "reviews.hpp"
#include "server.hpp"

namespace {

namespace wb = csiop::bench::webhook;

// What one review costs without the server: webhook::review alone, for `budget`.
double handlerMicros(const std::vector<wb::ReviewKind>& mix, std::chrono::milliseconds budget) {
  const csiop::webhook::ClusterView cluster = wb::benchCluster();
  csiop::webhook::Reservations reservations([] { return std::chrono::steady_clock::now(); });
  std::vector<std::string> bodies;
  for (const auto& k : mix) {
    bodies.push_back(k.prefix + "0000-handler-uid" + k.suffix);
  }
  const auto start = std::chrono::steady_clock::now();
  std::size_t n = 0;
  std::size_t sink = 0;
  while (std::chrono::steady_clock::now() - start < budget) {
    for (const auto& body : bodies) {
      sink += csiop::webhook::review(body, cluster, reservations).body.size();
    }
    n += bodies.size();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return sink == 0 ? 0 : seconds * 1e6 / static_cast<double>(n);
}

// The first three fields of /proc/loadavg: how busy the machine was.
std::string loadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

double percentileMs(const std::vector<std::uint32_t>& sorted, double p) {
  if (sorted.empty()) {
    return 0;
  }
  const auto rank = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return static_cast<double>(sorted[rank]) / 1e6;
}

double ownCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

int bench(int connections, double duration, double warmup, double rate, int serverCpu,
          int clientCpu) {
  const auto cpus = std::thread::hardware_concurrency();
  if (serverCpu >= 0 && clientCpu >= 0 && cpus < 2) {
    std::cerr << "webhook_bench: one CPU only; not pinning\n";
    serverCpu = clientCpu = -1;
  }

  // The serving certificate, in a directory as the server reads it.
  const wb::TestPki pki("webhook-bench-ca");
  const wb::CertDir dir(pki.server("IP:127.0.0.1,DNS:localhost"));
  const std::filesystem::path& certDir = dir.path();

  const std::string loadBefore = loadAverage();
  std::vector<wb::ReviewKind> mix = wb::reviewMix();
  wb::ServerProcess server(std::filesystem::read_symlink("/proc/self/exe").string(), certDir,
                           serverCpu);
  const pid_t serverPid = server.pid();
  if (clientCpu >= 0 && !wb::pinToCpu(clientCpu)) {
    std::cerr << "webhook_bench: cannot pin the load generator to CPU " << clientCpu << "\n";
  }
  const double handlerUs = handlerMicros(mix, std::chrono::milliseconds(500));
  const wb::ProcessStats idle = wb::processStats(serverPid);

  wb::LoadOptions options;
  options.port = server.port();
  options.caPem = pki.caPem();
  options.connections = connections;
  options.warmup = std::chrono::milliseconds(static_cast<long>(warmup * 1000));
  options.duration = std::chrono::milliseconds(static_cast<long>(duration * 1000));
  options.rate = rate;
  options.mix = mix;
  wb::ProcessStats atStart;
  wb::ProcessStats atMiddle;
  wb::ProcessStats atEnd;
  std::size_t minRss = SIZE_MAX;
  std::size_t maxRss = 0;
  double clientCpuAtStart = 0;
  double clientCpuAtEnd = 0;
  options.onPhase = [&](const char* phase) {
    const wb::ProcessStats now = wb::processStats(serverPid);
    const std::string p = phase;
    if (p == "start") {
      atStart = now;
      clientCpuAtStart = ownCpuSeconds();
    } else if (p == "middle") {
      atMiddle = now;
    } else if (p == "end") {
      atEnd = now;
      clientCpuAtEnd = ownCpuSeconds();
    }
    minRss = std::min(minRss, now.rssBytes);
    maxRss = std::max(maxRss, now.rssBytes);
  };

  const wb::LoadResult result = wb::runLoad(options);
  const wb::ProcessStats after = wb::processStats(serverPid);
  const int serverExit = server.stop();

  const double throughput = static_cast<double>(result.reviews) / result.seconds;
  const double p50 = percentileMs(result.latenciesNs, 0.50);
  const double p99 = percentileMs(result.latenciesNs, 0.99);
  const double p999 = percentileMs(result.latenciesNs, 0.999);
  const double max =
      result.latenciesNs.empty() ? 0 : static_cast<double>(result.latenciesNs.back()) / 1e6;
  const double measured = static_cast<double>(options.duration.count()) / 1000.0;
  const auto percentOfCore = [&](double cpu) { return cpu / measured * 100.0; };

  const std::string mode =
      rate > 0 ? "open loop at " + std::to_string(static_cast<long>(rate)) + " reviews/s"
               : "closed loop (one review in flight per connection)";
  const auto cpuName = [](int cpu) {
    return cpu >= 0 ? "CPU " + std::to_string(cpu) : std::string("any CPU");
  };
  const auto count = [&result](const char* name) {
    const auto it = result.kinds.find(name);
    return static_cast<unsigned long long>(it == result.kinds.end() ? 0 : it->second);
  };
  std::printf("webhook_bench: %d TLS keep-alive connections, %s, %.0f s measured after %.0f s "
              "warm-up\n",
              connections, mode.c_str(), duration, warmup);
  std::printf("  server: pid %d on %s; load generator on %s; %s; machine load average before: "
              "%s (%u CPUs)\n",
              static_cast<int>(serverPid), cpuName(serverCpu).c_str(), cpuName(clientCpu).c_str(),
              result.tls.c_str(), loadBefore.c_str(), cpus);
  std::printf("  mix per 10 reviews: 7 valid CREATE of examples/hostpath.yaml (%zu-byte body, "
              "allowed), 1 invalid spec (422), 1 driverName of another DriverDeployment (403), "
              "1 second DriverDeployment for hostpath's driverName (403)\n",
              mix.front().prefix.size() + mix.front().suffix.size() + 36);
  std::printf("  webhook::review alone: %.1f us per review (in the load generator's process)\n",
              handlerUs);
  std::printf("throughput: %llu reviews in %.1f s = %.0f reviews/s (valid %llu, invalid %llu, "
              "duplicate %llu, hostpath's name %llu)\n",
              static_cast<unsigned long long>(result.reviews), result.seconds, throughput,
              count("valid CREATE"), count("invalid spec"), count("duplicate driverName"),
              count("hostpath's driverName"));
  std::printf("latency: p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms\n", p50, p99, p999,
              max);
  if (rate > 0) {
    std::printf("  of which the load generator's own lag behind schedule: p50 %.3f ms, p99 %.3f "
                "ms, p99.9 %.3f ms\n",
                percentileMs(result.sendLagNs, 0.50), percentileMs(result.sendLagNs, 0.99),
                percentileMs(result.sendLagNs, 0.999));
  }
  std::printf("server RSS: idle %.1f MiB; start %.1f MiB, middle %.1f MiB, end %.1f MiB "
              "(min %.1f, max %.1f over per-second samples; peak VmHWM %.1f MiB)\n",
              mib(idle.rssBytes), mib(atStart.rssBytes), mib(atMiddle.rssBytes),
              mib(atEnd.rssBytes), mib(minRss), mib(maxRss), mib(after.peakRssBytes));
  // The server's CPU time per review tells its capacity on a core of its own,
  // even when other work on the machine takes a share of that core.
  const double serverCpuSeconds = atEnd.cpuSeconds - atStart.cpuSeconds;
  const double cpuPerReviewUs =
      result.reviews == 0 ? 0 : serverCpuSeconds * 1e6 / static_cast<double>(result.reviews);
  std::printf("CPU in the measured window: server %.0f%%, load generator %.0f%% of one core; "
              "server CPU per review %.0f us (%.0f reviews/s on a whole core)\n",
              percentOfCore(serverCpuSeconds), percentOfCore(clientCpuAtEnd - clientCpuAtStart),
              cpuPerReviewUs, cpuPerReviewUs > 0 ? 1e6 / cpuPerReviewUs : 0.0);
  std::printf("errors: %llu unexpected answers, %llu failed connections%s%s; server exit %d\n",
              static_cast<unsigned long long>(result.unexpected),
              static_cast<unsigned long long>(result.failedConnections),
              result.firstProblem.empty() ? "" : "; first: ", result.firstProblem.c_str(),
              serverExit);
  // Throughput is a target of the closed loop (as fast as the server answers);
  // an open loop offers a fixed rate and only tells whether it was kept.
  const char* fast = rate > 0               ? "not measured (open loop)"
                     : throughput >= 10'000 ? "met"
                                            : "MISSED";
  std::printf("targets: >= 10000 reviews/s %s, p99 <= 2 ms %s\n", fast,
              p99 <= 2.0 ? "met" : "MISSED");
  return result.unexpected == 0 && result.failedConnections == 0 && serverExit == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Throughput, latency and memory of the admission webhook under sustained load"};
  int connections = 8;
  double duration = 20;
  double warmup = 2;
  double rate = 0;
  int serverCpu = 0;
  int clientCpu = 1;
  bool noPin = false;
  std::string serveDir;
  app.add_option("-c,--connections", connections, "TLS keep-alive connections")
      ->check(CLI::Range(1, 500))
      ->capture_default_str();
  app.add_option("-d,--duration", duration, "seconds measured")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  app.add_option("-w,--warmup", warmup, "seconds of load before measuring")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str();
  app.add_option("-r,--rate", rate,
                 "reviews/s over all connections (open loop, latency from when each was due); "
                 "0: closed loop, as fast as the server answers")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--server-cpu", serverCpu, "CPU the server is pinned to")->capture_default_str();
  app.add_option("--client-cpu", clientCpu, "CPU the load generator is pinned to")
      ->capture_default_str();
  app.add_flag("--no-pin", noPin, "pin neither");
  app.add_option("--serve", serveDir, "(internal) be the server, with this certificate directory")
      ->group("");
  CLI11_PARSE(app, argc, argv);

  try {
    if (!serveDir.empty()) {
      return wb::serve(serveDir);
    }
    if (noPin) {
      serverCpu = clientCpu = -1;
    }
    return bench(connections, duration, warmup, rate, serverCpu, clientCpu);
  } catch (const std::exception& e) {
    std::cerr << "webhook_bench: " << e.what() << "\n";
    return 1;
  }
}
