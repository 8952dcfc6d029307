#include "own_cluster.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "harness.hpp"

namespace csiop::e2e {
namespace {

std::string lastLine(std::string out) {
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out.substr(out.rfind('\n') + 1); // npos + 1 == 0: a single line
}

} // namespace

bool startOwnCluster(const std::string& name, int nodes,
                     const std::vector<std::string>& apiserverArgs,
                     const std::vector<std::string>& upArgs) {
  const auto dir = sourceDir() / "test/cluster";
  std::vector<std::string> argv = {(dir / "up").string(), "--name", name, "--nodes",
                                   std::to_string(nodes)};
  for (const auto& arg : apiserverArgs) {
    argv.push_back("--apiserver-arg=" + arg);
  }
  argv.insert(argv.end(), upArgs.begin(), upArgs.end());
  const auto up = run(argv, {.timeout = std::chrono::minutes(30)});
  const auto build = run({(dir / "build").string()}, {.timeout = std::chrono::minutes(30)});
  if (!up.ok() || !build.ok()) {
    ADD_FAILURE() << (up.ok() ? build : up);
    return false;
  }
  const std::string binDir = lastLine(build.out);
  const auto env = writeArtifact(
      name + "-cluster.env",
      "KUBECONFIG=" + lastLine(up.out) + "\nKUBECTL=" + binDir + "/kubectl\nBIN_DIR=" + binDir +
          "\nNODES=" + std::to_string(nodes) + "\nEXTERNAL=0\nCLUSTER_NAME=" + name + "\n");
  // The harness's kubectl() and cluster() now speak to this cluster.
  ::setenv("CSIOP_E2E_ENV_FILE", env.c_str(), 1);
  // What a cluster admin installs before drivers with a snapshotter (see cluster-fixture).
  applySnapshotCrds();
  return true;
}

void stopOwnCluster(const std::string& name) {
  const char* keep = std::getenv("CSIOP_E2E_KEEP_CLUSTER");
  if (keep != nullptr && std::string(keep) == "1") {
    return;
  }
  const auto down = run({(sourceDir() / "test/cluster/down").string(), "--name", name});
  EXPECT_TRUE(down.ok()) << down;
}

} // namespace csiop::e2e

namespace csiop::e2e {

void OwnClusterTest::start(const std::string& name, int nodes,
                           const std::vector<std::string>& apiserverArgs,
                           const std::vector<std::string>& upArgs) {
  if (std::getenv("CSIOP_E2E_KUBECONFIG") != nullptr) {
    return; // see SetUp
  }
  started = startOwnCluster(name, nodes, apiserverArgs, upArgs);
}

void OwnClusterTest::finish(const std::string& name) {
  stopOperator();
  if (started) {
    stopOwnCluster(name);
  }
}

void OwnClusterTest::stopOperator() {
  if (op) {
    EXPECT_EQ(op->stop(), 0) << op->log();
    op.reset();
  }
}

void OwnClusterTest::SetUp() {
  if (!started) {
    GTEST_SKIP() << "needs a control plane of its own (none started; CSIOP_E2E_KUBECONFIG set?)";
  }
}

void OwnClusterTest::TearDown() {
  if (HasFailure() && op) {
    std::cerr << "operator log:\n" << op->log() << "\n";
  }
}

} // namespace csiop::e2e
