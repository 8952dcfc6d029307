// endpoint_abuse: the operator's endpoints against an attacker on loopback.
//
// The admission webhook (webhook::WebhookServer, TLS, its options as the
// operator sets them) and the health probe server (http::HttpServer, default
// options) run in a child process, in one io_context on one thread as the
// operator runs them, pinned to one CPU; the attacker and the normal clients
// run here, pinned to another. For each scenario the attacker opens its
// connections and keeps them; then the API server's part (13 reviews, each on
// a new TLS connection from 127.0.0.2, 10 s timeout each, as a webhook's
// timeoutSeconds) and the kubelet's (10 GET /healthz, each on a new
// connection, 1 s timeout each, as a probe's timeoutSeconds) are timed one
// after the other. Prints, per scenario: what the attacker opened and still
// holds, the reviews and probes answered with their p50 and p99 latency, and
// the server's RSS before and during the attack.
//
//   build/bench/endpoint_abuse [--connections 512] [--addresses 16] [--bodies 40]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include <csiop/webhook/admission.hpp>

#include "../webhook_bench/pki.hpp"
#include "../webhook_bench/reviews.hpp"
#include "../webhook_bench/server.hpp"
#include "clients.hpp"
#include "servers.hpp"

namespace {

namespace wb = csiop::bench::webhook;
namespace ep = csiop::bench::endpoint;

constexpr const char* kApiServer = "127.0.0.2"; // the normal clients' address

// `count` loopback addresses 127.0.<block>.1, .2, ...
std::vector<std::string> addresses(int block, int count) {
  std::vector<std::string> all;
  for (int i = 1; i <= count; ++i) {
    all.push_back("127.0." + std::to_string(block) + "." + std::to_string(i));
  }
  return all;
}

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

std::string loadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

struct Probes {
  int answered = 0;
  int total = 0;
  std::vector<double> ms; // of the answered ones, sorted
  std::string firstProblem;

  void add(const ep::Probe& probe) {
    ++total;
    if (probe.answered) {
      ++answered;
      ms.insert(std::upper_bound(ms.begin(), ms.end(), probe.ms), probe.ms);
    } else if (firstProblem.empty()) {
      firstProblem = probe.problem;
    }
  }
  double percentile(double p) const {
    if (ms.empty()) {
      return 0;
    }
    return ms[static_cast<std::size_t>(p * static_cast<double>(ms.size() - 1) + 0.5)];
  }
  std::string summary() const {
    char text[160];
    std::snprintf(text, sizeof text, "%d/%d answered, p50 %.2f ms, p99 %.2f ms", answered, total,
                  percentile(0.50), percentile(0.99));
    return std::string(text) +
           (firstProblem.empty() ? "" : " (first failure: " + firstProblem + ")");
  }
};

struct Scenario {
  std::string name;
  // Opens the attacker's connections to the webhook and health endpoints; says what it opened.
  std::function<std::string(ep::Clients&, const ep::Endpoint& webhook, const ep::Endpoint& health)>
      attack;
};

// What every scenario shares.
struct Setup {
  std::string self; // this program, run with --serve as the server
  std::filesystem::path certDir;
  int serverCpu;
  std::string caPem;
  wb::ReviewKind review;
  int reviews;
  int probes;
};

struct Outcome {
  bool served = false; // every normal request answered
  int serverExit = 0;
};

// One scenario against a server process of its own (so that its RSS tells
// this scenario's alone): attack, time the normal clients, print.
Outcome play(const Setup& setup, const Scenario& scenario) {
  wb::ServerProcess server(setup.self, setup.certDir, setup.serverCpu);
  unsigned webhookPort = 0;
  unsigned healthPort = 0;
  if (std::sscanf(server.announcement().c_str(), "port %u health %u", &webhookPort, &healthPort) !=
      2) {
    throw std::runtime_error("the server said \"" + server.announcement() + "\"");
  }
  const ep::Endpoint webhook{static_cast<std::uint16_t>(webhookPort), true};
  const ep::Endpoint health{static_cast<std::uint16_t>(healthPort), false};
  ep::Clients clients(setup.caPem);

  const wb::ProcessStats before = wb::processStats(server.pid());
  const std::string opened = scenario.attack(clients, webhook, health);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const wb::ProcessStats during = wb::processStats(server.pid());

  Probes reviews;
  for (int i = 0; i < setup.reviews; ++i) {
    char uid[40];
    std::snprintf(uid, sizeof uid, "e0d0a5b1-0000-4000-8000-%012d", i);
    reviews.add(clients.review(webhook, setup.review.prefix + uid + setup.review.suffix, kApiServer,
                               std::chrono::seconds(10)));
  }
  Probes probes;
  for (int i = 0; i < setup.probes; ++i) {
    probes.add(clients.healthz(health, kApiServer, std::chrono::seconds(1)));
  }
  const std::size_t heldWebhook = clients.held(webhook);
  const std::size_t heldHealth = clients.held(health);
  const wb::ProcessStats after = wb::processStats(server.pid());

  std::printf("%s\n", scenario.name.c_str());
  if (!opened.empty()) {
    std::printf("  attacker: %s; still held after the normal requests: webhook %zu, health %zu\n",
                opened.c_str(), heldWebhook, heldHealth);
  }
  std::printf("  reviews: %s\n", reviews.summary().c_str());
  std::printf("  /healthz: %s\n", probes.summary().c_str());
  std::printf("  server RSS: %.1f MiB before, %.1f MiB under attack (%+.1f MiB), %.1f MiB after "
              "the normal requests; peak (VmHWM) %.1f MiB\n",
              mib(before.rssBytes), mib(during.rssBytes),
              mib(during.rssBytes) - mib(before.rssBytes), mib(after.rssBytes),
              mib(after.peakRssBytes));
  std::fflush(stdout);
  clients.release();
  return Outcome{reviews.answered == reviews.total && probes.answered == probes.total,
                 server.stop()};
}

int bench(int connections, int spread, int bodies, int serverCpu, int clientCpu) {
  const wb::TestPki pki("endpoint-abuse-ca");
  const wb::CertDir certDir(pki.server("IP:127.0.0.1,DNS:localhost"));
  if (clientCpu >= 0 && !wb::pinToCpu(clientCpu)) {
    std::cerr << "endpoint_abuse: cannot pin the clients to CPU " << clientCpu << "\n";
  }
  const Setup setup{std::filesystem::read_symlink("/proc/self/exe").string(),
                    certDir.path(),
                    serverCpu,
                    pki.caPem(),
                    wb::reviewMix().front(),
                    13,
                    10};
  const auto cpuName = [](int cpu) {
    return cpu >= 0 ? "CPU " + std::to_string(cpu) : std::string("any CPU");
  };
  std::printf("endpoint_abuse: the webhook (TLS, ECDSA P-256) and health servers in one "
              "io_context, a process of their own per scenario, on %s; clients on %s; machine "
              "load average %s (%u CPUs)\n",
              cpuName(serverCpu).c_str(), cpuName(clientCpu).c_str(), loadAverage().c_str(),
              std::thread::hardware_concurrency());
  std::printf("normal clients from %s: %d reviews (a valid CREATE of examples/hostpath.yaml, "
              "%zu bytes) each on a new TLS connection, 10 s timeout; %d GET /healthz each on a "
              "new connection, 1 s timeout\n\n",
              kApiServer, setup.reviews,
              setup.review.prefix.size() + setup.review.suffix.size() + 36, setup.probes);

  const auto both = [](ep::Clients& clients, const ep::Endpoint& webhook,
                       const ep::Endpoint& health, ep::Hold hold, int count,
                       const std::vector<std::string>& from) {
    const auto n = static_cast<std::size_t>(count);
    const std::size_t w = clients.flood(webhook, hold, n, from);
    const std::size_t h = clients.flood(health, hold, n, from);
    return "opened webhook " + std::to_string(w) + " of " + std::to_string(count) + ", health " +
           std::to_string(h) + " of " + std::to_string(count);
  };
  const auto holdBodies = [bodies](ep::Clients& clients, const ep::Endpoint& webhook,
                                   const std::vector<std::string>& from) {
    clients.holdBodies(webhook, static_cast<std::size_t>(bodies), from,
                       csiop::webhook::kMaxReviewBytes, csiop::webhook::kMaxReviewBytes - 1);
    return std::to_string(bodies) + " bodies sent but their last byte";
  };
  const std::string spreadText =
      std::to_string(spread) + " addresses (127.0.1.1-" + std::to_string(spread) + ")";
  const std::vector<Scenario> scenarios = {
      {"no attack",
       [](ep::Clients&, const ep::Endpoint&, const ep::Endpoint&) { return std::string(); }},
      {std::to_string(connections) + " idle keep-alive connections to each port from 127.0.0.1",
       [&](ep::Clients& c, const ep::Endpoint& w, const ep::Endpoint& h) {
         return both(c, w, h, ep::Hold::KeepAlive, connections, {"127.0.0.1"});
       }},
      {std::to_string(2 * connections) + " idle keep-alive connections to each port from " +
           spreadText,
       [&](ep::Clients& c, const ep::Endpoint& w, const ep::Endpoint& h) {
         return both(c, w, h, ep::Hold::KeepAlive, 2 * connections, addresses(1, spread));
       }},
      {std::to_string(2 * connections) +
           " silent connections (not a byte sent) to each port from " + spreadText,
       [&](ep::Clients& c, const ep::Endpoint& w, const ep::Endpoint& h) {
         return both(c, w, h, ep::Hold::Silent, 2 * connections, addresses(1, spread));
       }},
      {std::to_string(bodies) + " connections to the webhook holding a 7 MiB body each, from "
                                "127.0.0.1",
       [&](ep::Clients& c, const ep::Endpoint& w, const ep::Endpoint&) {
         return holdBodies(c, w, {"127.0.0.1"});
       }},
      {std::to_string(bodies) + " connections to the webhook holding a 7 MiB body each, from " +
           std::to_string(bodies) + " addresses (127.0.2.1-" + std::to_string(bodies) + ")",
       [&](ep::Clients& c, const ep::Endpoint& w, const ep::Endpoint&) {
         return holdBodies(c, w, addresses(2, bodies));
       }},
  };
  bool allServed = true;
  bool allExited = true;
  for (const auto& scenario : scenarios) {
    const Outcome outcome = play(setup, scenario);
    allServed = allServed && outcome.served;
    allExited = allExited && outcome.serverExit == 0;
    std::printf("\n");
  }
  std::printf("every normal request answered in every scenario: %s; servers exited cleanly: %s\n",
              allServed ? "yes" : "NO", allExited ? "yes" : "NO");
  return allServed && allExited ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"The operator's webhook and health endpoints against an attacker on loopback"};
  int connections = 512;
  int spread = 16;
  int bodies = 40;
  int serverCpu = 0;
  int clientCpu = 1;
  bool noPin = false;
  std::string serveDir;
  app.add_option("-c,--connections", connections,
                 "idle keep-alive connections per port from one address (twice as many from "
                 "--addresses)")
      ->check(CLI::Range(1, 4000))
      ->capture_default_str();
  app.add_option("-a,--addresses", spread, "attacker addresses of the spread scenarios")
      ->check(CLI::Range(1, 250))
      ->capture_default_str();
  app.add_option("-b,--bodies", bodies, "connections holding a 7 MiB body")
      ->check(CLI::Range(1, 250))
      ->capture_default_str();
  app.add_option("--server-cpu", serverCpu, "CPU the servers are pinned to")->capture_default_str();
  app.add_option("--client-cpu", clientCpu, "CPU the clients are pinned to")->capture_default_str();
  app.add_flag("--no-pin", noPin, "pin neither");
  app.add_option("--serve", serveDir, "(internal) be the servers, with this certificate directory")
      ->group("");
  CLI11_PARSE(app, argc, argv);

  try {
    if (!serveDir.empty()) {
      return ep::serveEndpoints(serveDir);
    }
    if (noPin || std::thread::hardware_concurrency() < 2) {
      serverCpu = clientCpu = -1;
    }
    return bench(connections, spread, bodies, serverCpu, clientCpu);
  } catch (const std::exception& e) {
    std::cerr << "endpoint_abuse: " << e.what() << "\n";
    return 1;
  }
}
