// Control-plane e2e tests: the local cluster itself, the DriverDeployment CRD as the real API
// server serves it (schema, enums, CEL), and every example's rendered objects: accepted by a
// strict server-side dry run, rolled out for real (kwok fakes the pods), deleted again.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "harness.hpp"

namespace csiop::e2e {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// kubectl prints API server warnings as "Warning: ..." on stderr.
std::vector<std::string> warnings(const std::string& err) {
  std::vector<std::string> out;
  for (const auto& l : lines(err))
    if (l.rfind("Warning:", 0) == 0)
      out.push_back(l);
  return out;
}

// Unknown or duplicate fields are errors under --validate=strict, and warnings otherwise; any
// warning at all (a deprecated API or label, a value the server doubts) means the rendered
// objects are not what the server expects, and fails the test.
void expectNoWarnings(const RunResult& r) {
  for (const auto& w : warnings(r.err)) {
    ADD_FAILURE() << "the API server warns: " << w << "\n" << r;
  }
}

// Runs f at scope exit unless dismissed (cleanup that must also happen after a failed ASSERT).
class Cleanup {
public:
  explicit Cleanup(std::function<void()> f) : f_(std::move(f)) {}
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;
  ~Cleanup() {
    if (!f_)
      return;
    try {
      f_();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "cleanup failed: " << e.what();
    }
  }
  void dismiss() { f_ = nullptr; }

private:
  std::function<void()> f_;
};

// ---------------------------------------------------------------------------------------------
// The cluster

TEST(Cluster, ServerVersionIsThePinnedK8sVersion) {
  const auto pinned = readEnvFile(sourceDir() / "test/cluster/versions.env");
  ASSERT_TRUE(pinned.count("K8S_VERSION")) << "test/cluster/versions.env has no K8S_VERSION=";
  const std::string expected = pinned.at("K8S_VERSION");
  ASSERT_FALSE(expected.empty());

  const auto version = kubectlJson({"version"});
  EXPECT_EQ(version["serverVersion"].value("gitVersion", ""), expected) << version.dump(2);
  if (!cluster().external) {
    EXPECT_EQ(version["clientVersion"].value("gitVersion", ""), expected)
        << "the fixture's kubectl is not the version-matched one: " << cluster().kubectl;
  }
}

TEST(Cluster, AllNodesRegisteredAndReady) {
  const auto nodes = kubectlJson({"get", "nodes"});
  const auto& items = nodes["items"];
  std::string summary;
  int ready = 0;
  for (const auto& node : items) {
    std::string status = "<no Ready condition>";
    for (const auto& c : node["status"].value("conditions", Json::array()))
      if (c.value("type", "") == "Ready")
        status = c.value("status", "");
    summary += node["metadata"].value("name", "?") + " Ready=" + status + "\n";
    ready += status == "True" ? 1 : 0;
  }
  EXPECT_EQ(static_cast<int>(items.size()), cluster().nodes) << summary;
  EXPECT_EQ(ready, static_cast<int>(items.size())) << summary;
}

// ---------------------------------------------------------------------------------------------
// The CRD

constexpr const char* kCrdName = "driverdeployments.csiop.dev";

TEST(Crd, AppliesServerSideAndBecomesEstablished) {
  const auto crds = csiOperator({"crds"});
  ASSERT_TRUE(crds.ok()) << crds;
  const auto applied =
      kubectl({"apply", "--server-side", "--field-manager=csiop-e2e", "-f", "-"}, crds.out);
  ASSERT_TRUE(applied.ok()) << applied;
  EXPECT_TRUE(contains(applied.out,
                       "customresourcedefinition.apiextensions.k8s.io/" + std::string(kCrdName)))
      << applied;
  expectNoWarnings(applied);

  Json crd;
  ASSERT_TRUE(waitFor(std::string("CRD ") + kCrdName + " Established and NamesAccepted", 60s,
                      [&](std::string& seen) {
                        crd = kubectlJson({"get", "crd", kCrdName});
                        seen = crd["status"].dump(2);
                        int ok = 0;
                        for (const auto& c : crd["status"].value("conditions", Json::array()))
                          if ((c.value("type", "") == "Established" ||
                               c.value("type", "") == "NamesAccepted") &&
                              c.value("status", "") == "True")
                            ++ok;
                        return ok == 2;
                      }));
  EXPECT_EQ(crd["spec"].value("scope", ""), "Cluster");
  EXPECT_EQ(crd["spec"]["names"].value("kind", ""), "DriverDeployment");
  const auto shortNames = crd["status"]["acceptedNames"].value("shortNames", Json::array());
  EXPECT_NE(std::find(shortNames.begin(), shortNames.end(), "dd"), shortNames.end())
      << crd["status"]["acceptedNames"].dump(2);
}

TEST(Crd, ExplainDescribesCsiDriverFields) {
  applyCrds();
  // The OpenAPI document kubectl explain reads is published shortly after Established.
  RunResult explain;
  ASSERT_TRUE(waitFor("kubectl explain driverdeployment.spec.csiDriver", 60s, [&](auto& seen) {
    explain = kubectl({"explain", "driverdeployment.spec.csiDriver"});
    seen = explain.err;
    return explain.ok();
  }));
  EXPECT_TRUE(contains(explain.out, "DriverDeployment")) << explain;
  for (const char* field : {"attachRequired", "fsGroupPolicy", "volumeLifecycleModes",
                            "podInfoOnMount", "requiresRepublish", "tokenRequests"})
    EXPECT_TRUE(contains(explain.out, std::string("  ") + field + "\t<")) << field << "\n"
                                                                          << explain;
  EXPECT_TRUE(contains(explain.out, "ReadWriteOnceWithFSType")) << "fsGroupPolicy enum\n"
                                                                << explain;
}

TEST(Crd, ShortNameDdWorks) {
  applyCrds();
  const auto get = kubectl({"get", "dd"});
  EXPECT_TRUE(get.ok()) << get;
  const auto list = kubectlJson({"get", "dd"});
  EXPECT_EQ(list.value("kind", ""), "List") << list.dump(2);
  const auto resources = kubectl({"api-resources", "--api-group=csiop.dev", "--no-headers"});
  ASSERT_TRUE(resources.ok()) << resources;
  // NAME SHORTNAMES APIVERSION NAMESPACED KIND
  std::istringstream row(resources.out);
  std::string name, shortNames, apiVersion, namespaced, kind;
  row >> name >> shortNames >> apiVersion >> namespaced >> kind;
  EXPECT_EQ(name, "driverdeployments") << resources;
  EXPECT_EQ(shortNames, "dd") << resources;
  EXPECT_EQ(namespaced, "false") << resources;
  EXPECT_EQ(kind, "DriverDeployment") << resources;
}

// ---------------------------------------------------------------------------------------------
// The examples, each as its own test

std::vector<std::filesystem::path> examples() {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(sourceDir() / "examples", ec))
    if (e.is_regular_file() && (e.path().extension() == ".yaml" || e.path().extension() == ".yml"))
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string exampleName(const testing::TestParamInfo<std::filesystem::path>& info) {
  std::string name = info.param.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

TEST(Examples, DirectoryHasExamples) {
  EXPECT_FALSE(examples().empty()) << "no *.yaml in " << (sourceDir() / "examples");
}

class Example : public testing::TestWithParam<std::filesystem::path> {};

// (a) The DriverDeployment itself passes the CRD schema and CEL rules.
TEST_P(Example, DriverDeploymentAcceptedByServerDryRun) {
  applyCrds();
  const auto r =
      kubectl({"apply", "--dry-run=server", "--validate=strict", "-f", GetParam().string()});
  EXPECT_TRUE(r.ok()) << r;
  EXPECT_TRUE(contains(r.out, "(server dry run)")) << r;
  expectNoWarnings(r);
}

std::string diagnostics(const std::string& ns) {
  std::ostringstream os;
  os << kubectl({"get", "daemonsets,deployments,statefulsets,pods", "-n", ns, "-o", "wide"})
     << kubectl({"get", "events", "-n", ns, "--sort-by=.lastTimestamp"});
  return os.str();
}

// Every field of `rendered` is stored with the same value in `live` (the server may add
// defaults, but must not prune, drop or normalize what the operator renders: an apply loop
// would otherwise see a permanent diff).
void collectChanges(const Json& rendered, const Json& live, const std::string& path,
                    std::vector<std::string>& changes) {
  if (rendered.is_object() && live.is_object()) {
    for (const auto& [key, value] : rendered.items()) {
      const auto it = live.find(key);
      if (it == live.end())
        changes.push_back(path + "." + key + ": dropped (rendered " + value.dump() + ")");
      else
        collectChanges(value, *it, path + "." + key, changes);
    }
  } else if (rendered.is_array() && live.is_array() && rendered.size() == live.size()) {
    for (std::size_t i = 0; i < rendered.size(); ++i)
      collectChanges(rendered[i], live[i], path + "[" + std::to_string(i) + "]", changes);
  } else if (rendered != live) {
    changes.push_back(path + ": rendered " + rendered.dump() + ", stored " + live.dump());
  }
}

std::string objectKey(const Json& o) {
  return o.value("kind", "") + " " + o["metadata"].value("namespace", "") + "/" +
         o["metadata"].value("name", "");
}

// (b) the rendered objects pass a strict server-side dry run, (c) roll out for real, (d) are
// deleted again, namespace included.
TEST_P(Example, RenderAppliesRollsOutAndDeletes) {
  const auto example = GetParam();
  const std::string stem = example.stem().string();

  const auto yaml = csiOperator({"render", "-f", example.string()});
  ASSERT_TRUE(yaml.ok()) << yaml;
  const auto json = csiOperator({"render", "-o", "json", "-f", example.string()});
  ASSERT_TRUE(json.ok()) << json;
  const auto items = Json::parse(json.out).at("items");
  ASSERT_FALSE(items.empty());
  const auto rendered = writeArtifact(stem + ".rendered.yaml", yaml.out);

  // What to create first and what to wait for, from the rendered objects.
  Json namespaces = Json::array();
  const Json* daemonSet = nullptr; // the node plugin (a StatefulSet with placement SinglePod)
  const Json* windowsDaemonSet = nullptr; // spec.windowsNode's
  std::vector<const Json*> controllers;
  for (const auto& item : items) {
    const std::string kind = item.value("kind", "");
    const std::string component =
        item["metadata"].value("labels", Json::object()).value("app.kubernetes.io/component", "");
    if (kind == "Namespace")
      namespaces.push_back(item);
    if ((kind == "DaemonSet" || kind == "StatefulSet") && component == "node-plugin") {
      ASSERT_EQ(daemonSet, nullptr) << "more than one node plugin rendered";
      daemonSet = &item;
    }
    if (kind == "DaemonSet" && component == "windows-node-plugin") {
      ASSERT_EQ(windowsDaemonSet, nullptr) << "more than one Windows node plugin rendered";
      windowsDaemonSet = &item;
    }
    if ((kind == "Deployment" || kind == "StatefulSet") && component == "controller-plugin")
      controllers.push_back(&item);
  }
  ASSERT_NE(daemonSet, nullptr) << "no node plugin in the rendered objects (" << rendered << ")";
  ASSERT_LE(controllers.size(), 1u) << "more than one controller workload rendered";
  const std::string ns = (*daemonSet)["metadata"].value("namespace", "");

  // Leftovers of an aborted earlier run would make the apply below an update. They are removed
  // on the fixture's own cluster; on an external cluster they may be someone's real install.
  const auto existing =
      kubectl({"get", "-f", rendered.string(), "--ignore-not-found", "-o", "name"});
  ASSERT_TRUE(existing.ok()) << existing;
  if (!existing.out.empty()) {
    ASSERT_FALSE(cluster().external)
        << "refusing to replace objects that already exist on the external cluster:\n"
        << existing.out;
    const auto stale = kubectl(
        {"delete", "-f", rendered.string(), "--ignore-not-found", "--wait", "--timeout=180s"}, {},
        240s);
    ASSERT_TRUE(stale.ok()) << stale;
    std::cout << "[   NOTE   ] removed leftovers of an earlier run:\n" << stale.out;
  }

  Cleanup cleanup([&] {
    const auto r = kubectl(
        {"delete", "-f", rendered.string(), "--ignore-not-found", "--wait", "--timeout=180s"}, {},
        240s);
    EXPECT_TRUE(r.ok()) << "cleanup\n" << r;
  });

  // (b) A server-side dry run of namespaced objects needs their namespace to exist, so the
  // rendered Namespace is created for real first; then the whole render goes in unchanged.
  if (!namespaces.empty()) {
    const Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", namespaces}};
    const auto created = kubectl({"apply", "--validate=strict", "-f", "-"}, list.dump());
    ASSERT_TRUE(created.ok()) << created;
  }
  const auto dryRun =
      kubectl({"apply", "--dry-run=server", "--validate=strict", "-f", "-"}, yaml.out);
  ASSERT_TRUE(dryRun.ok()) << dryRun;
  expectNoWarnings(dryRun);
  const auto dryRunLines = lines(dryRun.out);
  EXPECT_EQ(std::count_if(dryRunLines.begin(), dryRunLines.end(),
                          [](const auto& l) { return contains(l, "(server dry run)"); }),
            static_cast<long>(items.size()))
      << "one line per rendered object expected\n"
      << dryRun;

  // (c) Real server-side apply, then the node DaemonSet and the controller become ready.
  const auto apply =
      kubectl({"apply", "--server-side", "--field-manager=csiop-e2e", "-f", "-"}, yaml.out);
  ASSERT_TRUE(apply.ok()) << apply;
  expectNoWarnings(apply);

  const std::string dsName = (*daemonSet)["metadata"].value("name", "");
  const std::string dsKind = daemonSet->value("kind", "");
  const int nodes = cluster().nodes;
  // A node plugin of one pod (placement SinglePod) is ready once that pod is, on any one node.
  const bool singlePod = dsKind == "StatefulSet";
  const int expected = singlePod ? 1 : nodes;
  const bool dsReady =
      waitFor(dsKind + " " + ns + "/" + dsName + " ready on " + std::to_string(expected) + " nodes",
              120s, [&](std::string& seen) {
                const auto ds = kubectlJson({"get", dsKind, dsName, "-n", ns});
                const auto& st = ds["status"];
                seen = st.dump(2);
                return st.value("observedGeneration", 0) >= ds["metadata"].value("generation", 1) &&
                       (singlePod ? st.value("readyReplicas", -1) == 1
                                  : st.value("desiredNumberScheduled", -1) == nodes &&
                                        st.value("numberReady", -1) == nodes);
              });
  if (!dsReady)
    ADD_FAILURE() << diagnostics(ns);
  if (windowsDaemonSet != nullptr) {
    // The test clusters have no Windows node: the server accepts the pods' template (the dry
    // run above) and schedules them nowhere.
    const std::string name = (*windowsDaemonSet)["metadata"].value("name", "");
    const bool settled = waitFor(
        "DaemonSet " + ns + "/" + name + " observed on no node", 60s, [&](std::string& seen) {
          const auto ds = kubectlJson({"get", "daemonset", name, "-n", ns});
          const auto& st = ds["status"];
          seen = st.dump(2);
          return st.value("observedGeneration", 0) >= ds["metadata"].value("generation", 1) &&
                 st.value("desiredNumberScheduled", -1) == 0;
        });
    if (!settled)
      ADD_FAILURE() << diagnostics(ns);
  }

  if (!controllers.empty()) {
    const Json& c = *controllers.front();
    const std::string kind = c.value("kind", "");
    const std::string name = c["metadata"].value("name", "");
    const int replicas = c["spec"].value("replicas", 1);
    // Replicas that must not share a node (a vendor's required anti-affinity) are ready on at
    // most as many nodes as the cluster has.
    const Json required = c["spec"]["template"]["spec"]
                              .value("affinity", Json::object())
                              .value("podAntiAffinity", Json::object())
                              .value("requiredDuringSchedulingIgnoredDuringExecution", Json());
    const int schedulable =
        required.is_array() && !required.empty() ? std::min(replicas, nodes) : replicas;
    const bool controllerReady = waitFor(
        kind + " " + ns + "/" + name + " with " + std::to_string(schedulable) + " ready replicas",
        120s, [&](std::string& seen) {
          const auto w = kubectlJson({"get", kind, name, "-n", ns});
          const auto& st = w["status"];
          seen = "spec.replicas=" + w["spec"].value("replicas", Json(nullptr)).dump() +
                 " status=" + st.dump(2);
          return st.value("observedGeneration", 0) >= w["metadata"].value("generation", 1) &&
                 w["spec"].value("replicas", -1) == replicas &&
                 st.value("readyReplicas", 0) == schedulable;
        });
    if (!controllerReady)
      ADD_FAILURE() << diagnostics(ns);
  }

  // The server stored what was rendered.
  const auto live = kubectlJson({"get", "-f", rendered.string()});
  std::map<std::string, Json> liveByKey;
  for (const auto& o : live.value("items", Json::array()))
    liveByKey[objectKey(o)] = o;
  for (const auto& item : items) {
    const auto it = liveByKey.find(objectKey(item));
    if (it == liveByKey.end()) {
      ADD_FAILURE() << objectKey(item) << " not found after apply";
      continue;
    }
    std::vector<std::string> changes;
    collectChanges(item, it->second, "", changes);
    std::string all;
    for (const auto& c : changes)
      all += "  " + c + "\n";
    EXPECT_TRUE(changes.empty()) << objectKey(item) << " differs from the rendered object:\n"
                                 << all;
  }

  // (d) Delete exactly the rendered objects (the Namespace is one of them) and wait until gone.
  cleanup.dismiss();
  const auto del =
      kubectl({"delete", "-f", rendered.string(), "--wait", "--timeout=180s"}, {}, 240s);
  ASSERT_TRUE(del.ok()) << del;
  EXPECT_EQ(lines(del.out).size(), items.size()) << "one line per rendered object expected\n"
                                                 << del;
  const auto left = kubectl({"get", "-f", rendered.string(), "--ignore-not-found", "-o", "name"});
  EXPECT_TRUE(left.ok()) << left;
  EXPECT_EQ(left.out, "") << "still present after delete --wait\n" << left;
}

INSTANTIATE_TEST_SUITE_P(Examples, Example, testing::ValuesIn(examples()), exampleName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Example); // an empty examples/ fails above

// ---------------------------------------------------------------------------------------------
// Invalid DriverDeployments: rejected by the CRD schema / CEL with a clear message

Json minimalDriverDeployment(const std::string& name) {
  auto dd = Json::parse(R"({
    "apiVersion": "csiop.dev/v1alpha1",
    "kind": "DriverDeployment",
    "metadata": {"name": ""},
    "spec": {
      "driverName": "e2e-invalid.csi.example.com",
      "namespace": "csi-e2e-invalid",
      "driver": {"image": "registry.example.com/e2e/driver:v1"}
    }
  })");
  dd["metadata"]["name"] = name;
  return dd;
}

// `valid` (the control) passes a strict server-side dry run; `invalid`, which differs only in
// the broken field, is rejected by a real create with every `expected` text on stderr, and
// nothing is stored.
void expectRejected(const Json& valid, const Json& invalid,
                    const std::vector<std::string>& expected) {
  applyCrds();
  const std::string name = invalid["metadata"].value("name", "");
  Cleanup cleanup([&] { kubectl({"delete", "dd", name, "--ignore-not-found", "--wait"}); });

  const auto control =
      kubectl({"apply", "--dry-run=server", "--validate=strict", "-f", "-"}, valid.dump());
  ASSERT_TRUE(control.ok()) << "the valid control object was rejected\n" << control;

  const auto r = kubectl({"apply", "--validate=strict", "-f", "-"}, invalid.dump());
  EXPECT_NE(r.exitCode, 0) << r;
  EXPECT_FALSE(contains(r.out, "created")) << r;
  for (const auto& text : expected)
    EXPECT_TRUE(contains(r.err, text)) << "expected on stderr: " << text << "\n" << r;

  const auto stored = kubectl({"get", "dd", name, "--ignore-not-found", "-o", "name"});
  EXPECT_TRUE(stored.ok()) << stored;
  EXPECT_EQ(stored.out, "") << "the invalid object was stored";
}

TEST(InvalidDriverDeployment, FsGroupPolicyOutsideEnum) {
  auto valid = minimalDriverDeployment("e2e-invalid-fsgroup");
  valid["spec"]["csiDriver"]["fsGroupPolicy"] = "File";
  auto invalid = valid;
  invalid["spec"]["csiDriver"]["fsGroupPolicy"] = "Foo";
  expectRejected(valid, invalid,
                 {R"(spec.csiDriver.fsGroupPolicy: Unsupported value: "Foo")",
                  R"(supported values: "ReadWriteOnceWithFSType", "File", "None")"});
}

TEST(InvalidDriverDeployment, NameLongerThan40Characters) {
  const std::string name40 = "e2e-invalid-name-" + std::string(23, 'x');
  ASSERT_EQ(name40.size(), 40u);
  const auto valid = minimalDriverDeployment(name40);
  const auto invalid = minimalDriverDeployment(name40 + "y");
  expectRejected(valid, invalid,
                 {"metadata.name must be a DNS-1123 label", "at most 40 characters"});
}

TEST(InvalidDriverDeployment, TwoDefaultStorageClasses) {
  auto valid = minimalDriverDeployment("e2e-invalid-default-sc");
  valid["spec"]["storageClasses"] = Json::parse(R"([
    {"name": "e2e-invalid-sc-a", "isDefault": true},
    {"name": "e2e-invalid-sc-b", "isDefault": false}])");
  auto invalid = valid;
  invalid["spec"]["storageClasses"][1]["isDefault"] = true;
  expectRejected(valid, invalid,
                 {"spec.storageClasses: Invalid value",
                  "at most one storageClasses entry may set isDefault: true"});
}

TEST(InvalidDriverDeployment, UnknownFieldWithStrictValidation) {
  const auto valid = minimalDriverDeployment("e2e-invalid-unknown-field");
  auto invalid = valid;
  invalid["spec"]["csiDriver"]["attachRequiredd"] = true;
  expectRejected(valid, invalid,
                 {"strict decoding error", R"(unknown field "spec.csiDriver.attachRequiredd")"});
}

// The cross-field rules of the Windows node plugin and of placement NodePlugin are in the CRD
// too, so the API server refuses them without the webhook (none runs in this cluster).
TEST(InvalidDriverDeployment, CsiProxyPipesWithAHostProcessWindowsNodePlugin) {
  auto valid = minimalDriverDeployment("e2e-invalid-windows-pipes");
  valid["spec"]["windowsNode"] = Json::parse(R"({"hostProcess": true})");
  auto invalid = valid;
  invalid["spec"]["windowsNode"]["csiProxyPipes"] = Json::array({"filesystem-v1"});
  expectRejected(valid, invalid,
                 {"spec.windowsNode.csiProxyPipes: Forbidden",
                  "csiProxyPipes is not for a HostProcess driver"});
}

TEST(InvalidDriverDeployment, HostPIDInTheWindowsNodePlugin) {
  // Control: a disabled Windows node plugin keeps its settings unchecked, as the webhook does.
  auto valid = minimalDriverDeployment("e2e-invalid-windows-hostpid");
  valid["spec"]["windowsNode"] = Json::parse(R"({"enabled": false, "hostPID": true})");
  auto invalid = valid;
  invalid["spec"]["windowsNode"].erase("enabled");
  expectRejected(valid, invalid,
                 {"spec.windowsNode.hostPID: Forbidden",
                  "Windows pods cannot share the host's process namespace"});
}

TEST(InvalidDriverDeployment, WindowsNodePluginSelectingLinuxNodes) {
  auto valid = minimalDriverDeployment("e2e-invalid-windows-os");
  valid["spec"]["windowsNode"] =
      Json::parse(R"({"nodeSelector": {"kubernetes.io/os": "windows", "pool": "win"}})");
  auto invalid = valid;
  invalid["spec"]["windowsNode"]["nodeSelector"]["kubernetes.io/os"] = "linux";
  expectRejected(valid, invalid,
                 {"spec.windowsNode.nodeSelector: Invalid value",
                  "nodeSelector kubernetes.io/os must be windows"});
}

TEST(InvalidDriverDeployment, ControllerPodFieldsWithPlacementNodePlugin) {
  auto valid = minimalDriverDeployment("e2e-invalid-placement");
  valid["spec"]["controller"] = Json::parse(R"({"placement": "NodePlugin"})");
  valid["spec"]["node"] =
      Json::parse(R"({"serviceAccount": {"annotations": {"example.com/role": "csi"}}})");
  // One field that names the pod's identity, one that needs pods of the controller's own.
  for (const auto& [field, value] :
       {std::pair{"serviceAccount", valid["spec"]["node"]["serviceAccount"]},
        std::pair{"podDisruptionBudget", Json{{"maxUnavailable", 1}}}}) {
    SCOPED_TRACE(field);
    auto invalid = valid;
    invalid["spec"]["controller"][field] = value;
    expectRejected(valid, invalid,
                   {"spec.controller.placement: Forbidden",
                    "with placement NodePlugin or SinglePod there is no controller workload"});
  }
}

TEST(InvalidDriverDeployment, WhatNeedsANodePluginOnEveryNodeWithPlacementSinglePod) {
  auto valid = minimalDriverDeployment("e2e-invalid-single-pod");
  valid["spec"]["controller"] = Json::parse(R"({"placement": "SinglePod"})");
  for (const auto& [field, value] :
       {std::pair{"startupTaint", Json{{"key", "csiop.dev/e2e-not-ready"}}},
        std::pair{"rollout", Json{{"type", "Verified"}}}}) {
    SCOPED_TRACE(field);
    auto invalid = valid;
    invalid["spec"][field] = value;
    expectRejected(valid, invalid,
                   {std::string("spec.") +
                        (std::string(field) == "rollout" ? "rollout.type" : field) + ": Forbidden",
                    "not with controller.placement SinglePod"});
  }
}

TEST(InvalidDriverDeployment, PlacementChangesNeitherToNorFromSinglePod) {
  applyCrds();
  const std::string name = "e2e-invalid-placement-change";
  Cleanup cleanup([&] { kubectl({"delete", "dd", name, "--ignore-not-found", "--wait"}); });
  auto dd = minimalDriverDeployment(name);
  dd["spec"]["controller"] = Json::parse(R"({"placement": "NodePlugin"})");
  const auto create = kubectl({"apply", "--validate=strict", "-f", "-"}, dd.dump());
  ASSERT_TRUE(create.ok()) << create;
  // Control: from one placement of many pods to the other.
  dd["spec"]["controller"]["placement"] = "Workload";
  const auto update = kubectl({"apply", "--validate=strict", "-f", "-"}, dd.dump());
  ASSERT_TRUE(update.ok()) << update;

  dd["spec"]["controller"]["placement"] = "SinglePod";
  const auto change = kubectl({"apply", "--validate=strict", "-f", "-"}, dd.dump());
  EXPECT_NE(change.exitCode, 0) << change;
  EXPECT_TRUE(contains(change.err, "spec.controller.placement: Forbidden: controller.placement "
                                   "cannot change to or from SinglePod"))
      << change;
  EXPECT_EQ(kubectlJson({"get", "dd", name})["spec"]["controller"].value("placement", ""),
            "Workload");
}

TEST(InvalidDriverDeployment, DriverNameIsImmutable) {
  applyCrds();
  const std::string name = "e2e-invalid-immutable";
  Cleanup cleanup([&] { kubectl({"delete", "dd", name, "--ignore-not-found", "--wait"}); });
  auto dd = minimalDriverDeployment(name);
  dd["spec"]["driverName"] = "e2e-immutable-a.csi.example.com";
  const auto create = kubectl({"apply", "--validate=strict", "-f", "-"}, dd.dump());
  ASSERT_TRUE(create.ok()) << create;

  // Control: other spec fields can change.
  dd["spec"]["driver"]["image"] = "registry.example.com/e2e/driver:v2";
  const auto update = kubectl({"apply", "--validate=strict", "-f", "-"}, dd.dump());
  ASSERT_TRUE(update.ok()) << update;

  dd["spec"]["driverName"] = "e2e-immutable-b.csi.example.com";
  const auto rename = kubectl({"apply", "--validate=strict", "-f", "-"}, dd.dump());
  EXPECT_NE(rename.exitCode, 0) << rename;
  EXPECT_TRUE(contains(rename.err, "spec.driverName: Forbidden: driverName is immutable"))
      << rename;

  const auto stored = kubectlJson({"get", "dd", name});
  EXPECT_EQ(stored["spec"].value("driverName", ""), "e2e-immutable-a.csi.example.com");
  EXPECT_EQ(stored["spec"]["driver"].value("image", ""), "registry.example.com/e2e/driver:v2");
}

} // namespace
} // namespace csiop::e2e
