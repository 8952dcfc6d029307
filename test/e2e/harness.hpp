// End-to-end test harness: talk to the e2e cluster, poll for state; run processes (with
// test/support's run(), bash() and ChildProcess).
//
// The cluster comes from the ctest fixture `e2e_cluster` (test/e2e/cluster-fixture, registered
// in test/e2e/CMakeLists.txt): its setup test starts `test/cluster/up --name e2e` (or takes
// $CSIOP_E2E_KUBECONFIG) and writes an env file of KEY=value lines (KUBECONFIG, KUBECTL,
// BIN_DIR, NODES, ...). cluster() reads that file; its path is compiled in and can be
// overridden with $CSIOP_E2E_ENV_FILE. A test binary is added with csiop_add_e2e_test() in
// test/e2e/CMakeLists.txt: one ctest test per gtest test, label e2e, requiring the fixtures
// e2e_cluster and e2e_crd (the latter deletes the CRDs after its last user).
//
//   run({"prog", "arg"}, {.input = "...", .timeout = 30s})  argv, no shell; separate out/err
//   bash("a | b")                                          when a pipeline is clearer
//   kubectl({"get", "nodes"})                              version-matched kubectl, e2e cluster
//   kubectlJson({"get", "nodes"})                          adds `-o json`, throws unless exit 0
//   csiOperator({"render", "-f", "-"}, yaml)               the csi-operator binary under test
//   waitFor("what", 60s, [](std::string& seen) { ...; return done; })
//                                                          polls; on timeout ADD_FAILURE with
//                                                          "what" and the last `seen`
//   applyCrds()                                            installs the operator's CRDs
//
// Helpers that cannot return a result throw E2EError; gtest reports an exception escaping a
// test body as a failure of that test. RunResult prints itself (command, exit, stdout, stderr)
// for failure messages: `ASSERT_TRUE(r.ok()) << r;`.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <csiop/testsupport/process.hpp>

namespace csiop::e2e {

using namespace std::chrono_literals;
using Json = nlohmann::ordered_json;

struct E2EError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Running processes: test/support's (argv, no shell; separate out/err; timeouts; see
// <csiop/testsupport/process.hpp>).
using testsupport::bash;
using testsupport::ChildProcess;
using testsupport::run;
using testsupport::RunOptions;
using testsupport::RunResult;

struct Cluster {
  std::filesystem::path kubeconfig;
  std::filesystem::path kubectl; // version-matched kubectl (or the one on PATH, external)
  std::filesystem::path binDir;  // helm, kwokctl, ... (empty for an external cluster)
  int nodes = 0;                 // node count the cluster was started with / is expected to have
  bool external = false;         // $CSIOP_E2E_KUBECONFIG: not started by the fixture
  std::map<std::string, std::string> vars; // every line of the env file
};
// The fixture's cluster (read once); throws E2EError if the env file is missing.
const Cluster& cluster();

std::filesystem::path sourceDir();      // the checkout (CSIOP_SOURCE_DIR)
std::filesystem::path operatorBinary(); // $CSIOP_OPERATOR_BINARY or the built csi-operator
// Writes content under <build>/e2e/artifacts (kept for debugging) and returns the path.
std::filesystem::path writeArtifact(const std::string& name, std::string_view content);
// The directory `name` under the artifacts, made empty (a suite's certificates, its files).
std::filesystem::path artifactDirectory(const std::string& name);
// KEY=value lines (# comments and blank lines skipped; no shell quoting).
std::map<std::string, std::string> readEnvFile(const std::filesystem::path& path);

RunResult kubectl(const std::vector<std::string>& args,
                  const std::optional<std::string>& input = std::nullopt,
                  std::chrono::milliseconds timeout = 120s);
Json kubectlJson(const std::vector<std::string>& args,
                 const std::optional<std::string>& input = std::nullopt,
                 std::chrono::milliseconds timeout = 120s);
RunResult csiOperator(const std::vector<std::string>& args,
                      const std::optional<std::string>& input = std::nullopt);

// Polls probe every `interval` until it returns true (exceptions count as "not yet" and are
// recorded as the observed state). On timeout it reports a gtest failure at the caller's line
// naming `description` and the last observed state, and returns false (use
// ASSERT_TRUE(waitFor(...)) to stop the test there).
bool waitFor(std::string_view description, std::chrono::milliseconds timeout,
             const std::function<bool(std::string& observed)>& probe,
             std::chrono::milliseconds interval = 500ms,
             std::source_location caller = std::source_location::current());

// The directory of external-snapshotter's CRDs (snapshot.storage.k8s.io_*.yaml) as a cluster
// admin installs them: CSIOP_SNAPSHOT_MANIFESTS, else CSIOP_IMAGE_ARCHIVES/manifests, else
// shared/upstream-images/manifests beside the checkout (as test/cluster/snapshot-controller
// finds them); empty when there is none.
std::filesystem::path snapshotManifests();
// Applies those CRDs to the harness's cluster (a driver with a snapshotter needs them, and the
// operator reports them missing otherwise); false when there are none to apply.
bool applySnapshotCrds();

// `csi-operator crds | kubectl apply --server-side -f -`, then waits until every CRD is
// Established and served (kubectl get works). Idempotent; throws E2EError on failure.
// The CRDs are removed after all e2e tests by the ctest test e2e.crd.cleanup.
void applyCrds();

} // namespace csiop::e2e
