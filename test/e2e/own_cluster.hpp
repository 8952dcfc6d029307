// A suite's own control plane, for suites that need API server flags of their own or that must
// not meet the others: test/cluster up/down under another name.
//
//   startOwnCluster("e2e-helm", 2, {"--enable-aggregator-routing=true"})
//       starts it and points the harness (cluster(), kubectl()) at it; reports a gtest failure
//       and returns false if it cannot start
//   stopOwnCluster("e2e-helm")    stops it, unless CSIOP_E2E_KEEP_CLUSTER=1
//
// OwnClusterTest is the fixture of such a suite: its SetUpTestSuite calls start(...), its
// TearDownTestSuite calls finish(name), which stops `op` (the suite's operator, if any) and
// then the cluster. With an external cluster ($CSIOP_E2E_KUBECONFIG), whose API server cannot
// be reconfigured, start() does nothing and every test skips. A failing test prints `op`'s log.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operator_process.hpp"

namespace csiop::e2e {

// upArgs: further options of test/cluster/up, e.g. {"--real-node"}.
bool startOwnCluster(const std::string& name, int nodes,
                     const std::vector<std::string>& apiserverArgs,
                     const std::vector<std::string>& upArgs = {});
void stopOwnCluster(const std::string& name);

class OwnClusterTest : public ::testing::Test {
protected:
  static void start(const std::string& name, int nodes,
                    const std::vector<std::string>& apiserverArgs,
                    const std::vector<std::string>& upArgs = {});
  static void finish(const std::string& name);
  static void stopOperator(); // SIGTERM, expects exit 0 within 30 s
  void SetUp() override;
  void TearDown() override;

  static inline bool started = false;
  static inline std::unique_ptr<OperatorProcess> op;
};

} // namespace csiop::e2e
