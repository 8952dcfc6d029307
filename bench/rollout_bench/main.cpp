// rollout_bench: what a verified rollout (spec.rollout type Verified) costs and how fast it
// decides, on the machine's real node (the canary, running the real kubernetes-csi hostpath
// driver, with its smoke volume) plus fake (kwok) nodes for the batches (test/e2e/fake_nodes.hpp;
// their plugin registration is a stand-in), against the DaemonSet's own RollingUpdate for the
// same change; and the plugin's downtime on the real node with and without the pre-pull, the
// new image served by a slow local registry (test/cluster/nodetools' csiop-test-registry).
//
//   build/bench/rollout_bench [--fake-nodes 50] [--rate-kib 8192] [--extra-mib 64]
//
// Steps, one after the other on one cluster, the operator (`csi-operator run`, no -v) beside it:
//   good      Verified, the driver's image -> its second image: the canary's verdict (every gate
//             passed) and the rollout complete on every node (batches of 25 %, no soak);
//   crash     Verified, a flag the driver does not know: the verdict (PodReady) and the canary
//             back on the previous revision, Ready and registered;
//   publish   Verified, the driver's state directory read-only (it registers, cannot publish):
//             the verdict (SmokeVolume) and the rollback;
//   rolling   Unverified, the same change as `good`: the DaemonSet's RollingUpdate
//             (maxUnavailable 1) to every node updated and Ready;
//   pre-pull  Verified, an image only the registry has: the real node's plugin down (old pod
//             deleting) -> up (new pod Ready, driver registered), with prePullImages true, then
//             false (another image, so that it too is pulled).
// Each step's operator CPU time and API requests are the difference over the step. Times are
// polled (kubectl, every 200 ms): known to about 0.3 s.
//
// Uses its own cluster, bench-rollout (CSIOP_E2E_KEEP_CLUSTER=1 keeps it), and needs the image
// archives (CSIOP_IMAGE_ARCHIVES, default ../shared/upstream-images beside the checkout).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "driver.hpp"
#include "fake_nodes.hpp"
#include "own_cluster.hpp"
#include "probe.hpp"

namespace csiop::bench {
namespace {

using namespace std::chrono_literals;
using e2e::kubectl;

const std::string kCluster = "bench-rollout";
const std::string kHostpath = "registry.k8s.io/sig-storage/hostpathplugin:v1.17.0";
const std::string kHostpath2 = "localhost/csiop-test/upstream-hostpathplugin:2";
const std::string kOperatorImage = "localhost/csiop-test/operator:bench";

struct Row {
  std::string step;
  std::string what;
  double seconds = 0;
  std::optional<Usage> usage;
};

void apply(const DriverShape& shape) {
  const auto r = kubectl({"apply", "-f", "-"}, driverManifest(shape));
  if (!r.ok())
    throw std::runtime_error("kubectl apply: " + r.err);
}

std::string lastLine(const std::string& out) {
  std::string s = out;
  while (!s.empty() && s.back() == '\n')
    s.pop_back();
  return s.substr(s.rfind('\n') == std::string::npos ? 0 : s.rfind('\n') + 1);
}

class Bench {
public:
  Bench(int fakeNodes, e2e::OperatorProcess& op) : nodes_(fakeNodes + 1), op_(op) {}

  // The rollout complete on every node at a revision other than `from`.
  bool complete(const std::string& from) const {
    return rolloutField("phase") == "Complete" && rolloutField("revision") != from &&
           rolloutField("updated") == std::to_string(nodes_) && registeredNodes() == nodes_;
  }

  void good(std::vector<Row>& rows) {
    const std::string from = rolloutField("revision");
    const Usage before = usageOf(op_);
    const auto start = Clock::now();
    apply({.image = kHostpath2});
    // The rollout of the new revision seen in its canary phase first: a status written before
    // the operator's first pass of the change is not its verdict.
    std::string revision;
    until("the rollout started", start, 120s, [&] {
      revision = rolloutField("revision");
      return rolloutField("phase") == "Canary" && !revision.empty() && revision != from;
    });
    const double verdict = until("the canary's verdict", start, 300s, [&] {
      const std::string phase = rolloutField("phase");
      return rolloutField("revision") == revision &&
             (phase == "Soak" || phase == "Batch" || phase == "Complete");
    });
    const double total = until("the rollout complete", start, 600s, [&] { return complete(from); });
    rows.push_back({"good", "apply -> the canary passed every gate (smoke volume included)",
                    verdict, std::nullopt});
    rows.push_back(
        {"good", "apply -> every node updated, rollout Complete", total, usageOf(op_) - before});
  }

  void bad(std::vector<Row>& rows, const std::string& step, const DriverShape& shape,
           const std::string& gate) {
    const std::string plugin = realNodePlugin();
    const Usage before = usageOf(op_);
    const auto start = Clock::now();
    apply(shape);
    const double verdict = until(step + "'s verdict", start, 300s, [&] {
      const std::string phase = rolloutField("phase");
      return (phase == "RollingBack" || phase == "RolledBack") &&
             rolloutField("failedGate") == gate;
    });
    const std::string revision =
        plugin.substr(plugin.find(' ') + 1, plugin.rfind(' ') - plugin.find(' ') - 1);
    const double back = until(step + "'s rollback", start, 300s, [&] {
      const std::string now = realNodePlugin();
      return rolloutField("phase") == "RolledBack" &&
             now.find(" " + revision + " true") != std::string::npos && realNodeRegistered();
    });
    rows.push_back(
        {step, "apply -> verdict (" + gate + " failed on the canary)", verdict, std::nullopt});
    rows.push_back({step, "apply -> the canary rolled back, Ready and registered", back,
                    usageOf(op_) - before});
  }

  void rolling(std::vector<Row>& rows) {
    // To the first image under the DaemonSet's own RollingUpdate first (not timed).
    apply({.image = kHostpath, .verified = false});
    until("the RollingUpdate back to the first image", Clock::now(), 600s, dsRolledOut);
    const Usage before = usageOf(op_);
    const auto start = Clock::now();
    apply({.image = kHostpath2, .verified = false});
    std::this_thread::sleep_for(1s); // the DaemonSet's generation moves first
    const double total = until("the RollingUpdate", start, 900s, dsRolledOut);
    rows.push_back({"rolling",
                    "apply -> every node updated and Ready (RollingUpdate, "
                    "maxUnavailable 1)",
                    total, usageOf(op_) - before});
  }

  void prePull(std::vector<Row>& rows, const std::string& image, bool prePull) {
    const std::string from = rolloutField("revision");
    const std::string old = realNodePlugin();
    const std::string oldUid = old.substr(0, old.find(' '));
    const Usage before = usageOf(op_);
    const auto start = Clock::now();
    apply({.image = image, .pullPolicy = "IfNotPresent", .prePull = prePull});
    const double down = until("the real node's plugin pod deleted", start, 600s,
                              [&] { return realNodePlugin().rfind(oldUid, 0) != 0; });
    const double up = until("the real node's new plugin up", start, 600s, [&] {
      const std::string now = realNodePlugin();
      return !now.empty() && now.rfind(oldUid, 0) != 0 && now.ends_with(" true") &&
             realNodeRegistered();
    });
    const double total = until("the rollout complete", start, 900s, [&] { return complete(from); });
    const std::string with = prePull ? "prePullImages true" : "prePullImages false";
    rows.push_back(
        {"pre-pull", with + ": apply -> the real node's plugin pod deleted", down, std::nullopt});
    rows.push_back({"pre-pull",
                    with + ": the real node's plugin down (deleted -> new pod Ready "
                           "and registered)",
                    up - down, std::nullopt});
    rows.push_back({"pre-pull", with + ": apply -> every node updated, rollout Complete", total,
                    usageOf(op_) - before});
  }

private:
  static bool dsRolledOut() {
    const auto r = kubectl({"get", "ds", std::string(kDd) + "-node", "-n", kNamespace, "-o",
                            "jsonpath={.metadata.generation} {.status.observedGeneration} "
                            "{.status.desiredNumberScheduled} {.status.updatedNumberScheduled} "
                            "{.status.numberReady}"});
    std::istringstream in(r.out);
    long generation = -1, observed = -2, desired = -1, updated = -2, ready = -3;
    in >> generation >> observed >> desired >> updated >> ready;
    return generation == observed && desired == updated && updated == ready;
  }

  int nodes_;
  e2e::OperatorProcess& op_;
};

void print(const std::vector<Row>& rows, int fakeNodes, int rateKiB, int extraMiB) {
  std::printf("\nrollout_bench: the real node (canary) + %d fake nodes; registry %d KiB/s, "
              "%d MiB added to each pre-pull image\n\n",
              fakeNodes, rateKiB, extraMiB);
  std::printf("| step | measurement | s | operator CPU (s) | API requests | writes |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    if (r.usage)
      std::printf("| %s | %s | %.1f | %.2f | %.0f | %.0f |\n", r.step.c_str(), r.what.c_str(),
                  r.seconds, r.usage->cpu, r.usage->requests, r.usage->writes);
    else
      std::printf("| %s | %s | %.1f | | | |\n", r.step.c_str(), r.what.c_str(), r.seconds);
  }
}

int runBench(int fakeNodes, int rateKiB, int extraMiB) {
  const std::filesystem::path source = e2e::sourceDir();
  const auto archives = source.parent_path() / "shared/upstream-images";
  if (std::getenv("CSIOP_IMAGE_ARCHIVES") == nullptr && std::filesystem::exists(archives))
    ::setenv("CSIOP_IMAGE_ARCHIVES", archives.c_str(), 1);
  const char* dir = std::getenv("CSIOP_IMAGE_ARCHIVES");
  if (dir == nullptr) {
    std::cerr << "rollout_bench: no image archives (CSIOP_IMAGE_ARCHIVES)\n";
    return 2;
  }
  if (!e2e::startOwnCluster(kCluster, 0, {}, {"--real-node"}))
    return 1;
  std::vector<Row> rows;
  int code = 0;
  try {
    const auto images = e2e::run({(source / "test/cluster/images").string(), "--name", kCluster,
                                  "--operator-binary", e2e::operatorBinary().string(), "--tag",
                                  kOperatorImage, "--import"},
                                 {.timeout = std::chrono::minutes(15)});
    if (!images.ok())
      throw std::runtime_error("test/cluster/images: " + images.err);
    const auto testImages = e2e::run({(source / "test/cluster/images").string()},
                                     {.timeout = std::chrono::minutes(15)});
    const std::filesystem::path registryBinary =
        std::filesystem::path(lastLine(testImages.out)) / "tools/csiop-test-registry";
    const std::string tar = std::string(dir) + "/hostpathplugin.tar";
    e2e::ChildProcess registry({registryBinary.string(), "--listen", "127.0.0.1:5000", "--rate-kib",
                                std::to_string(rateKiB), "--extra-mib", std::to_string(extraMiB),
                                "--image", tar + "=csiop-test/slow-hostpath:1", "--image",
                                tar + "=csiop-test/slow-hostpath:2"},
                               e2e::writeArtifact("rollout-bench-registry.log", ""));
    until("the registry", Clock::now(), 300s, [&] {
      if (!registry.running())
        throw std::runtime_error("the registry exited: " + registry.log());
      return registry.log().find("ready") != std::string::npos;
    });
    e2e::applyCrds();
    e2e::FakeNodes fake("bench-fake", fakeNodes);
    e2e::OperatorProcess op("rollout-bench-operator.log",
                            e2e::OperatorInvocation{{"run", "--smoke-image", kOperatorImage,
                                                     "--smoke-image-pull-policy", "Never"},
                                                    {},
                                                    {}});
    if (!op.waitReady(60s))
      throw std::runtime_error("the operator is not ready: " + op.log());
    Bench bench(fakeNodes, op);
    apply({.image = kHostpath});
    until("the first rollout", Clock::now(), 600s, [&] { return bench.complete(""); });

    bench.good(rows);
    bench.bad(rows, "crash", {.image = kHostpath2, .arg = "--no-such-flag"}, "PodReady");
    bench.bad(rows, "publish", {.image = kHostpath2, .readOnlyState = true}, "SmokeVolume");
    bench.rolling(rows);
    apply({.image = kHostpath2}); // Verified again, on the same template: nothing rolls
    until("Verified again", Clock::now(), 120s, [] { return rolloutField("phase") == "Complete"; });
    bench.prePull(rows, "localhost:5000/csiop-test/slow-hostpath:1", true);
    bench.prePull(rows, "localhost:5000/csiop-test/slow-hostpath:2", false);
    kubectl({"delete", "dd", kDd, "--wait=true", "--timeout=120s"});
    op.stop();
  } catch (const std::exception& e) {
    std::cerr << "rollout_bench: " << e.what() << "\n";
    code = 1;
  }
  print(rows, fakeNodes, rateKiB, extraMiB);
  e2e::stopOwnCluster(kCluster);
  return code;
}

} // namespace
} // namespace csiop::bench

int main(int argc, char** argv) {
  CLI::App app{"A verified rollout on the real node plus fake nodes, timed"};
  int fakeNodes = 50;
  int rateKiB = 8192;
  int extraMiB = 64;
  app.add_option("--fake-nodes", fakeNodes, "Fake (kwok) nodes beside the real one")
      ->capture_default_str();
  app.add_option("--rate-kib", rateKiB, "The local registry's rate per blob, KiB/s")
      ->capture_default_str();
  app.add_option("--extra-mib", extraMiB, "MiB of random bytes added to each pre-pull image")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return csiop::bench::runBench(fakeNodes, rateKiB, extraMiB);
}
