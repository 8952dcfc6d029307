// What a production operator must survive, against the real control plane: being killed in
// the middle of its work, the API server going away (and changes made behind its back while
// it was away, which only a relist after the 410 can reveal), and a second replica under
// leader election. Each case runs its own operator processes.
#include <gtest/gtest.h>

#include <csignal>
#include <regex>
#include <set>
#include <thread>

#include "harness.hpp"
#include "operator_process.hpp"

namespace csiop::e2e {
namespace {

// Every object the renderer wants for DriverDeployment `name` exists, the DriverDeployment's
// status is current, and it does not report a conflict over its own driver name.
bool converged(const std::string& name, std::string& seen) {
  const auto live = kubectl({"get", "dd", name, "-o", "json"});
  if (!live.ok()) {
    seen = live.err;
    return false;
  }
  const Json dd = Json::parse(live.out);
  if (dd.value("status", Json::object()).value("observedGeneration", Json(-1)) !=
      dd["metadata"]["generation"]) {
    seen = name + ": status not current: " + dd.value("status", Json::object()).dump();
    return false;
  }
  if (ddCondition(name, "DriverNameConflict") == "True") {
    seen = name + ": DriverNameConflict";
    return false;
  }
  const auto rendered = csiOperator({"render", "-o", "json", "-f", "-"}, live.out);
  if (!rendered.ok()) {
    seen = rendered.err;
    return false;
  }
  for (const auto& o : Json::parse(rendered.out)["items"]) {
    std::vector<std::string> what = {o["kind"], o["metadata"]["name"]};
    if (o["metadata"].contains("namespace")) {
      what.insert(what.end(), {"-n", o["metadata"]["namespace"]});
    }
    if (!exists(what)) {
      seen = name + ": missing " + what[0] + " " + what[1];
      return false;
    }
  }
  return true;
}

// Sets the driver's args of hostpathAs(`name`) to [`arg`] and waits until the node plugin's
// DaemonSet carries them.
bool editIsRolledOut(const std::string& name, const std::string& arg) {
  const Json patch = {{"spec", {{"driver", {{"args", Json::array({arg})}}}}}};
  const auto r = kubectl({"patch", "dd", name, "--type=merge", "-p", patch.dump()});
  if (!r.ok()) {
    ADD_FAILURE() << r;
    return false;
  }
  return waitFor("the edit of " + name + " is rolled out", 60s, [&](std::string& seen) {
    seen = kubectl({"get", "ds", name + "-node", "-n", "csi-" + name, "-o",
                    "jsonpath={.spec.template.spec.containers[0].args}"})
               .out;
    return seen == Json::array({arg}).dump();
  });
}

std::string uidOf(const std::vector<std::string>& what) {
  std::vector<std::string> args = {"get"};
  args.insert(args.end(), what.begin(), what.end());
  args.insert(args.end(), {"-o", "jsonpath={.metadata.uid}"});
  return kubectl(args).out;
}

// The fixture's own cluster, whose components the test may stop and start.
std::filesystem::path localClusterStateDir() {
  return cluster().kubeconfig.parent_path();
}

RunResult clusterComponent(const std::string& action, const std::string& component) {
  return run({(sourceDir() / "test/cluster/component").string(), "--name",
              cluster().vars.at("CLUSTER_NAME"), action, component},
             {.timeout = 180s});
}

class OperatorResilience : public ::testing::Test {
protected:
  void SetUp() override { applyCrds(); }
  void TearDown() override {
    for (auto* op : {&first, &second}) {
      if (HasFailure() && *op) {
        std::cerr << "operator log:\n" << (*op)->log() << "\n";
      }
    }
  }

  std::unique_ptr<OperatorProcess> first;
  std::unique_ptr<OperatorProcess> second;
};

TEST_F(OperatorResilience, KilledMidReconcileThenRestartedConverges) {
  first = std::make_unique<OperatorProcess>("resilience-kill-1.log");
  ASSERT_TRUE(first->waitReady(60s));
  // Watch CSIDrivers appear: the first claim means the operator is at work on the batch.
  const auto watchLog = writeArtifact("resilience-kill-csidrivers.txt", "");
  ChildProcess watch({cluster().kubectl.string(), "--kubeconfig=" + cluster().kubeconfig.string(),
                      "get", "csidrivers", "--watch", "-o", "name"},
                     watchLog);
  std::this_thread::sleep_for(1s); // the watch is open
  std::string batch;
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) {
    names.push_back("kill-" + std::to_string(i));
    batch += "---\n" + hostpathAs(names.back());
  }
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, batch).ok());
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (readFile(watchLog).find("kill-") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(2ms);
  }
  first->process().signal(SIGKILL);
  ASSERT_EQ(first->process().wait(10s), 128 + SIGKILL);
  watch.signal(SIGKILL);
  // The kill left work undone (else this test would not test a restart).
  int unfinished = 0;
  for (const auto& n : names) {
    std::string seen;
    unfinished += converged(n, seen) ? 0 : 1;
  }
  ASSERT_GT(unfinished, 0) << "the operator finished the whole batch before it was killed";

  second = std::make_unique<OperatorProcess>("resilience-kill-2.log");
  ASSERT_TRUE(second->waitReady(60s));
  for (const auto& n : names) {
    EXPECT_TRUE(waitFor(n + " converges after the restart", 60s,
                        [&](std::string& seen) { return converged(n, seen); }));
  }
  for (const auto& n : names) {
    deleteDd(n);
    EXPECT_FALSE(exists({"csidriver", n + ".csi.k8s.io"}));
    kubectl({"delete", "namespace", "csi-" + n, "--wait=false"});
  }
}

TEST_F(OperatorResilience, RecoversFromAnApiServerRestartAndSeesWhatChangedMeanwhile) {
  if (cluster().external) {
    GTEST_SKIP() << "needs the local control plane: the test stops and starts its API server";
  }
  first = std::make_unique<OperatorProcess>("resilience-apiserver.log");
  ASSERT_TRUE(first->waitReady(60s));
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, hostpathAs("away")).ok());
  ASSERT_TRUE(
      waitFor("away converges", 60s, [&](std::string& seen) { return converged("away", seen); }));
  const std::string dsUid = uidOf({"ds", "away-node", "-n", "csi-away"});
  ASSERT_FALSE(dsUid.empty());

  ASSERT_TRUE(clusterComponent("stop", "kube-apiserver").ok());
  // Behind the operator's back: the node plugin's DaemonSet disappears from etcd, so no watch
  // ever delivers its deletion. Only a relist (the API server answers the resumed watches
  // with 410 Gone: its new watch cache starts after their resourceVersion) can find out.
  const auto env = readEnvFile(localClusterStateDir() / "cluster.env");
  const auto del =
      run({"curl", "-fsS", "-X", "POST",
           "http://127.0.0.1:" + env.at("ETCD_CLIENT_PORT") + "/v3/kv/deleterange", "-d",
           Json{{"key", run({"bash", "-c",
                             "printf %s /registry/daemonsets/csi-away/away-node | "
                             "base64 -w0"})
                            .out}}
               .dump()});
  EXPECT_TRUE(del.ok()) << del;
  EXPECT_NE(del.out.find(R"("deleted":"1")"), std::string::npos) << del;
  std::this_thread::sleep_for(3s); // the operator meets a dead API server and retries
  ASSERT_TRUE(clusterComponent("start", "kube-apiserver").ok());

  EXPECT_TRUE(waitFor("the DaemonSet deleted while the API server was away is recreated", 90s,
                      [&](std::string& seen) {
                        seen = uidOf({"ds", "away-node", "-n", "csi-away"});
                        return !seen.empty() && seen != dsUid;
                      }));
  EXPECT_TRUE(first->process().running()) << "recovered without a restart";
  const std::string log = first->log();
  EXPECT_TRUE(
      std::regex_search(log, std::regex("watch daemonsets from [0-9]+: expired; relisting")))
      << log;
  // And it keeps reconciling: a spec edit is rolled out.
  EXPECT_TRUE(editIsRolledOut("away", "--v=4"));
  deleteDd("away");
  kubectl({"delete", "namespace", "csi-away", "--wait=false"});
}

TEST_F(OperatorResilience, UnderLeaderElectionOnlyTheLeaderWritesAndAFollowerTakesOver) {
  const auto certs = artifactDirectory("resilience-leader-certs");
  ASSERT_TRUE(issueServingCertificate(certs, "leader-ca"));
  const int webhookPorts[] = {freeLoopbackPort(), freeLoopbackPort()};
  const auto replica = [&](const std::string& log, int webhookPort) {
    return std::make_unique<OperatorProcess>(
        log, std::vector<std::string>{
                 "--leader-elect", "--leader-election-namespace", "default", "--leader-election-id",
                 "csi-operator-e2e-election", "--webhook-port", std::to_string(webhookPort),
                 "--webhook-host", "127.0.0.1", "--webhook-cert-dir", certs.string()});
  };
  first = replica("resilience-leader-a.log", webhookPorts[0]);
  second = replica("resilience-leader-b.log", webhookPorts[1]);
  // Both are ready (warm caches on every replica) and both serve the webhook; one leads.
  ASSERT_TRUE(first->waitReady(60s));
  ASSERT_TRUE(second->waitReady(60s));
  for (const int webhookPort : webhookPorts) {
    const auto r = run({"curl", "-fsS", "--cacert", (certs / "leader-ca.crt").string(),
                        "https://127.0.0.1:" + std::to_string(webhookPort) + "/readyz"});
    EXPECT_TRUE(r.ok() && r.out == "ok") << "every replica serves the webhook\n" << r;
  }
  OperatorProcess* leader = nullptr;
  OperatorProcess* follower = nullptr;
  ASSERT_TRUE(waitFor("one replica leads", 30s, [&](std::string& seen) {
    const double a = first->metric("csiop_leader");
    const double b = second->metric("csiop_leader");
    seen = "csiop_leader: " + std::to_string(a) + " / " + std::to_string(b);
    if (a + b != 1) {
      return false;
    }
    leader = a == 1 ? first.get() : second.get();
    follower = a == 1 ? second.get() : first.get();
    return true;
  }));

  // Each replica applied the CRD at start; from here on only the leader may write.
  const double leaderWrites = leader->mutatingRequests();
  const double followerWrites = follower->mutatingRequests();
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, hostpathAs("elect")).ok());
  ASSERT_TRUE(
      waitFor("elect converges", 60s, [&](std::string& seen) { return converged("elect", seen); }));
  EXPECT_GT(leader->mutatingRequests(), leaderWrites);
  EXPECT_EQ(follower->mutatingRequests(), followerWrites) << "the follower wrote";

  leader->process().signal(SIGKILL);
  ASSERT_TRUE(
      waitFor("the follower takes over after the lease expires", 45s, [&](std::string& seen) {
        seen = follower->log();
        return follower->metric("csiop_leader") == 1;
      }));
  EXPECT_TRUE(editIsRolledOut("elect", "--v=3"));
  EXPECT_GT(follower->mutatingRequests(), followerWrites);
  deleteDd("elect");
  kubectl({"delete", "namespace", "csi-elect", "--wait=false"});
  EXPECT_EQ(follower->stop(), 0);
}

} // namespace
} // namespace csiop::e2e
