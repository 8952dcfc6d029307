// A suite's own control plane, for suites that need API server flags of their own or that must
// not meet the others: test/cluster up/down under another name.
//
//   startOwnCluster("e2e-helm", 2, {"--enable-aggregator-routing=true"})
//       starts it and points the harness (cluster(), kubectl()) at it; reports a gtest failure
//       and returns false if it cannot start
//   stopOwnCluster("e2e-helm")    stops it, unless CSIOP_E2E_KEEP_CLUSTER=1
//
// Neither is for an external cluster ($CSIOP_E2E_KUBECONFIG): its API server cannot be
// reconfigured, so such suites skip there.
#pragma once

#include <string>
#include <vector>

namespace csiop::e2e {

bool startOwnCluster(const std::string& name, int nodes,
                     const std::vector<std::string>& apiserverArgs);
void stopOwnCluster(const std::string& name);

} // namespace csiop::e2e
