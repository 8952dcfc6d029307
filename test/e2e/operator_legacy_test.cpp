// A cluster without storage.k8s.io/v1 CSIDriver (as Kubernetes 1.12-1.13 were): the operator
// installs the csi.storage.k8s.io/v1alpha1 CSIDriver CRD and registers drivers through it.
// The suite starts its own one-node control plane, `e2e-legacy`, with the API server's
// storage.k8s.io/v1 csidrivers resource switched off, and stops it at the end
// (CSIOP_E2E_KEEP_CLUSTER=1 keeps it).
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness.hpp"
#include "operator_process.hpp"
#include "own_cluster.hpp"

namespace csiop::e2e {
namespace {

const std::string kClusterName = "e2e-legacy";

class LegacyCluster : public OwnClusterTest {
protected:
  static void SetUpTestSuite() {
    start(kClusterName, 1, {"--runtime-config=storage.k8s.io/v1/csidrivers=false"});
  }
  static void TearDownTestSuite() { finish(kClusterName); }

  static std::string legacyDriver(const std::string& jsonpath) {
    return kubectl({"get", "csidrivers.csi.storage.k8s.io", "hostpath.csi.k8s.io", "-o",
                    "jsonpath=" + jsonpath})
        .out;
  }
};

TEST_F(LegacyCluster, InstallsTheLegacyCrdAndRegistersTheDriverThroughIt) {
  const auto resources = kubectl({"api-resources", "--api-group=storage.k8s.io", "-o", "name"});
  ASSERT_TRUE(resources.ok()) << resources;
  ASSERT_EQ(resources.out.find("csidrivers"), std::string::npos)
      << "the cluster must not serve storage.k8s.io/v1 CSIDriver\n"
      << resources;

  op = std::make_unique<OperatorProcess>("legacy-operator.log");
  ASSERT_TRUE(op->waitReady(60s));
  EXPECT_NE(op->log().find("using the legacy csi.storage.k8s.io/v1alpha1 CSIDriver API"),
            std::string::npos)
      << op->log();
  const auto crd = kubectl({"get", "crd", "csidrivers.csi.storage.k8s.io", "-o",
                            "jsonpath={.status.conditions[?(@.type==\"Established\")].status}"});
  EXPECT_EQ(crd.out, "True") << crd;

  ASSERT_TRUE(kubectl({"apply", "-f", (sourceDir() / "examples/hostpath.yaml").string()}).ok());
  ASSERT_TRUE(waitFor("the legacy CSIDriver is created with the two fields it knows", 30s,
                      [&](std::string& seen) {
                        seen = legacyDriver("{.spec}");
                        return seen == R"({"attachRequired":true,"podInfoOnMountVersion":"v1"})";
                      }));
  const std::string ddUid =
      kubectl({"get", "dd", "hostpath", "-o", "jsonpath={.metadata.uid}"}).out;
  EXPECT_EQ(legacyDriver("{.metadata.annotations.csiop\\.dev/owner-uid}"), ddUid);
  EXPECT_TRUE(waitFor("the node plugin exists", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "ds", "-n", "csi-hostpath", "-o", "name"}).out;
    return seen == "daemonset.apps/hostpath-node\n";
  }));

  // The legacy API has no immutable fields: attachRequired changes in place.
  const std::string driverUid = legacyDriver("{.metadata.uid}");
  ASSERT_TRUE(
      kubectl(
          {"patch", "dd", "hostpath", "--type=merge", "-p",
           R"({"spec": {"csiDriver": {"attachRequired": false}, "controller": {"attacher": {"enabled": false}}}})"})
          .ok());
  EXPECT_TRUE(waitFor("attachRequired is updated in place", 30s, [&](std::string& seen) {
    seen = legacyDriver("{.metadata.uid} {.spec.attachRequired}");
    return seen == driverUid + " false";
  }));

  deleteDd("hostpath");
  EXPECT_TRUE(waitFor("the legacy CSIDriver is deleted with its DriverDeployment", 30s,
                      [&](std::string& seen) {
                        seen = kubectl({"get", "csidrivers.csi.storage.k8s.io", "-o", "name"}).out;
                        return seen.empty();
                      }));
}

} // namespace
} // namespace csiop::e2e
