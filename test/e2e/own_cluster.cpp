#include "own_cluster.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include <csiop/testsupport/local_cluster.hpp>

#include "harness.hpp"

namespace csiop::e2e {

bool startOwnCluster(const std::string& name, int nodes,
                     const std::vector<std::string>& apiserverArgs,
                     const std::vector<std::string>& upArgs) {
  std::vector<std::string> args;
  for (const auto& arg : apiserverArgs) {
    args.push_back("--apiserver-arg=" + arg);
  }
  args.insert(args.end(), upArgs.begin(), upArgs.end());
  std::filesystem::path kubeconfig;
  std::filesystem::path binDir;
  try {
    kubeconfig = testsupport::clusterUp(sourceDir(), name, nodes, args);
    binDir = testsupport::clusterBinDir(sourceDir());
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
    return false;
  }
  const auto env = writeArtifact(
      name + "-cluster.env",
      "KUBECONFIG=" + kubeconfig.string() + "\nKUBECTL=" + (binDir / "kubectl").string() +
          "\nBIN_DIR=" + binDir.string() + "\nNODES=" + std::to_string(nodes) +
          "\nEXTERNAL=0\nCLUSTER_NAME=" + name + "\n");
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
  const auto down = testsupport::clusterDown(sourceDir(), name);
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
