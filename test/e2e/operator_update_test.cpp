// An operator upgrade, as `helm upgrade` of the operator makes one: csi-operator writes the
// drivers, then csi-operator-next takes over (the same sources built as another version, each
// default sidecar image tag ending in "-next": test/e2e/CMakeLists.txt). With
// spec.operatorUpdates Manual (the default) the new operator writes nothing to the running
// workloads and says what it would change; approved, it rolls that change out once. Automatic
// rolls it out at once. Both roll their node plugins out verified (spec.rollout type Verified:
// a canary node, then the other), so "rolled out" is one verified rollout: each plugin pod
// replaced once, through the canary's gates. A change of the spec is never held. Writes are
// counted from the operator's own metrics (csiop_api_mutating_requests_total{resource}) and
// checked on the objects (generation, pods' uids, the rollout's status and events). The kwok
// nodes' plugin registration is registration_stand_in.hpp's (kwok has none).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "harness.hpp"
#include "operator_process.hpp"
#include "registration_stand_in.hpp"

namespace csiop::e2e {
namespace {

const std::string kRegistrar = "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.17.0";

std::string versionOf(const std::filesystem::path& binary) {
  const RunResult r = run({binary.string(), "version"});
  // "csi-operator <version>" on the first line
  const std::string first = r.out.substr(0, r.out.find('\n'));
  return first.substr(first.find(' ') + 1);
}

// hostpathAs(name), rolled out verified with no soak. The pre-pull is off: a kwok node pulls
// nothing, and without it the operator's only writes to pods are the plugin pods it replaces.
std::string withSpec(const std::string& name, const std::string& extra) {
  std::string yaml = hostpathAs(name);
  yaml.replace(
      yaml.find("spec:\n"), 6,
      "spec:\n" + extra +
          "  rollout:\n    type: Verified\n    soakSeconds: 0\n    prePullImages: false\n");
  return yaml;
}

Json daemonSet(const std::string& dd) {
  const RunResult r = kubectl({"get", "ds", dd + "-node", "-n", "csi-" + dd, "-o", "json"});
  return r.ok() ? Json::parse(r.out) : Json();
}

std::string registrarImage(const Json& ds) {
  if (!ds.is_object()) {
    return "";
  }
  for (const Json& c : ds["spec"]["template"]["spec"]["containers"]) {
    if (c["name"] == "node-driver-registrar") {
      return c["image"];
    }
  }
  return "";
}

// The node plugin pods' uids by node.
std::map<std::string, std::string> pluginPods(const std::string& dd) {
  std::map<std::string, std::string> out;
  const Json pods = kubectlJson({"get", "pods", "-n", "csi-" + dd});
  for (const Json& p : pods["items"]) {
    if (p["metadata"].contains("deletionTimestamp")) {
      continue;
    }
    out[p["spec"].value("nodeName", "")] = p["metadata"]["uid"];
  }
  return out;
}

std::string condition(const std::string& dd, const std::string& type, const char* field) {
  return kubectl({"get", "dd", dd, "-o",
                  "jsonpath={.status.conditions[?(@.type==\"" + type + "\")]." + field + "}"})
      .out;
}

std::string rolloutField(const std::string& dd, const std::string& field) {
  return kubectl({"get", "dd", dd, "-o", "jsonpath={.status.rollout.node." + field + "}"}).out;
}

// The messages of the events of `reason` about this DriverDeployment dd (not an earlier one of
// the name), one per occurrence.
std::vector<std::string> eventsOf(const std::string& dd, const std::string& reason) {
  std::vector<std::string> out;
  const std::string uid = kubectl({"get", "dd", dd, "-o", "jsonpath={.metadata.uid}"}).out;
  const Json events = kubectlJson({"get", "events", "-n", "default", "--field-selector",
                                   "involvedObject.uid=" + uid + ",reason=" + reason});
  for (const Json& e : events["items"]) {
    for (int i = 0; i < e.value("count", 1); ++i)
      out.push_back(e.value("message", ""));
  }
  return out;
}

// dd's node plugin rolled out verified to revision != `from`: complete on every node, each pod
// at the new revision.
bool rolledOutFrom(const std::string& dd, const std::string& from, std::string& seen) {
  seen = kubectl({"get", "dd", dd, "-o", "jsonpath={.status.rollout.node}"}).out;
  return rolloutField(dd, "phase") == "Complete" && rolloutField(dd, "revision") != from &&
         rolloutField(dd, "updated") == rolloutField(dd, "total");
}

Json workloadStatus(const std::string& dd) {
  const RunResult r = kubectl({"get", "dd", dd, "-o", "jsonpath={.status.workloads[0]}"});
  return r.ok() && !r.out.empty() ? Json::parse(r.out) : Json();
}

class OperatorUpdate : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    applyCrds();
    std::vector<std::string> nodes;
    const Json listed = kubectlJson({"get", "nodes", "-l", "type=kwok"});
    for (const Json& node : listed["items"])
      nodes.push_back(node["metadata"]["name"]);
    ASSERT_GE(nodes.size(), 2u) << "a canary and a batch need two nodes";
    registration.emplace(nodes, std::set<std::string>{"held", "auto"});
    current = versionOf(operatorBinary());
    next = versionOf(CSIOP_NEXT_OPERATOR_BINARY);
    ASSERT_FALSE(current.empty());
    ASSERT_EQ(next, current + "+next");
  }
  static void TearDownTestSuite() {
    for (const char* dd : {"held", "auto"}) {
      deleteDd(dd);
      kubectl(
          {"delete", "namespace", std::string("csi-") + dd, "--ignore-not-found", "--wait=false"});
    }
    op.reset();
    registration.reset();
  }
  void TearDown() override {
    if (HasFailure() && op) {
      std::cerr << "operator log:\n" << op->log() << "\n";
    }
  }

  // Stops the running operator (if any) and starts `binary` (empty: csi-operator).
  static bool startOperator(const std::string& log, const std::filesystem::path& binary) {
    if (op) {
      EXPECT_EQ(op->stop(), 0);
    }
    OperatorInvocation invocation{{"run", "-v", "2"}, {}, binary};
    op = std::make_unique<OperatorProcess>(log, invocation);
    return op->waitReady(60s);
  }

  static inline std::unique_ptr<OperatorProcess> op;
  static inline std::optional<RegistrationStandIn> registration;
  static inline std::string current;
  static inline std::string next;
};

TEST_F(OperatorUpdate, ManualHoldsTheNewOperatorsChangeUntilApprovedAutomaticRollsItAtOnce) {
  ASSERT_TRUE(startOperator("update-operator.log", {}));
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, withSpec("held", "")).ok());
  ASSERT_TRUE(
      kubectl({"apply", "-f", "-"}, withSpec("auto", "  operatorUpdates: Automatic\n")).ok());
  for (const char* dd : {"held", "auto"}) {
    ASSERT_TRUE(
        waitFor(std::string(dd) + "'s node plugin runs on every node", 60s, [&](std::string& seen) {
          const Json ds = daemonSet(dd);
          seen = ds.dump();
          return registrarImage(ds) == kRegistrar &&
                 ds["status"].value("numberReady", -1) ==
                     ds["status"].value("desiredNumberScheduled", -2) &&
                 ds["status"].value("numberReady", 0) > 0 &&
                 rolloutField(dd, "phase") == "Complete" &&
                 kubectl({"get", "dd", dd, "-o", "jsonpath={.status.nodes.registered}"}).out ==
                     std::to_string(ds["status"].value("numberReady", 0));
        }));
  }
  const std::string heldRevision = rolloutField("held", "revision");
  const std::string autoRevision = rolloutField("auto", "revision");
  const auto autoPods = pluginPods("auto");
  EXPECT_EQ(workloadStatus("held").value("renderedBy", ""), current);
  const std::int64_t heldGeneration = daemonSet("held")["metadata"]["generation"];
  const std::int64_t autoGeneration = daemonSet("auto")["metadata"]["generation"];
  const auto heldPods = pluginPods("held");

  // The upgrade.
  ASSERT_TRUE(startOperator("update-operator-next.log", CSIOP_NEXT_OPERATOR_BINARY));
  EXPECT_TRUE(waitFor("Automatic: the new default images are rolled out, verified", 90s,
                      [&](std::string& seen) {
                        return registrarImage(daemonSet("auto")) == kRegistrar + "-next" &&
                               rolledOutFrom("auto", autoRevision, seen);
                      }));
  EXPECT_TRUE(waitFor("Manual: OperatorUpdateHeld names the change", 60s, [&](std::string& seen) {
    seen = condition("held", "OperatorUpdateHeld", "message");
    return condition("held", "OperatorUpdateHeld", "status") == "True" &&
           seen.find("operator " + next + " would change what the spec did not: DaemonSet " +
                     "csi-held/held-node (rendered by " + current + "): container ") !=
               std::string::npos &&
           seen.find("container node-driver-registrar: image " + kRegistrar + " -> " + kRegistrar +
                     "-next") != std::string::npos &&
           seen.find("csiop.dev/approve-operator-update=" + next) != std::string::npos;
  }));
  ASSERT_TRUE(op->waitForNoWrites(3s, 60s));
  EXPECT_EQ(daemonSet("held")["metadata"]["generation"], heldGeneration);
  EXPECT_EQ(registrarImage(daemonSet("held")), kRegistrar);
  EXPECT_EQ(pluginPods("held"), heldPods) << "a held node plugin pod was replaced";
  EXPECT_EQ(daemonSet("auto")["metadata"]["generation"], autoGeneration + 1);
  // Automatic's one change is the only write to a DaemonSet: two requests, as for any first
  // change of a workload the operator created (the fields its create set are handed over to
  // its apply, then the apply); and its rollout the only writes to pods: each of its plugin
  // pods deleted once, none of Manual's.
  EXPECT_EQ(op->writesTo("daemonsets"), 2);
  EXPECT_EQ(op->writesTo("pods"), static_cast<double>(autoPods.size()));
  EXPECT_EQ(eventsOf("auto", "RolloutStarted").size(), 1u);
  EXPECT_EQ(eventsOf("auto", "CanaryPassed").size(), 1u);
  EXPECT_EQ(eventsOf("auto", "RolloutComplete").size(), 1u);
  for (const auto& [node, uid] : pluginPods("auto"))
    EXPECT_NE(autoPods.at(node), uid) << node << "'s plugin pod was not replaced";
  EXPECT_EQ(rolloutField("held", "revision"), heldRevision);
  EXPECT_TRUE(eventsOf("held", "RolloutStarted").empty());
  const Json held = workloadStatus("held");
  EXPECT_EQ(held.value("renderedBy", ""), current) << held;
  EXPECT_TRUE(held.value("held", false)) << held;
  EXPECT_EQ(workloadStatus("auto").value("renderedBy", ""), next);
  const RunResult events = kubectl({"get", "events", "-n", "default", "--field-selector",
                                    "involvedObject.name=held,reason=OperatorUpdateHeld"});
  EXPECT_NE(events.out.find("OperatorUpdateHeld"), std::string::npos) << events;

  // Approved: exactly one verified rollout.
  ASSERT_TRUE(
      kubectl({"annotate", "dd", "held", std::string("csiop.dev/approve-operator-update=") + next})
          .ok());
  EXPECT_TRUE(waitFor("approved: the change is rolled out, verified", 90s, [&](std::string& seen) {
    return registrarImage(daemonSet("held")) == kRegistrar + "-next" &&
           rolledOutFrom("held", heldRevision, seen);
  }));
  EXPECT_TRUE(waitFor("OperatorUpdateHeld is False", 30s, [&](std::string& seen) {
    seen = condition("held", "OperatorUpdateHeld", "status");
    return seen == "False";
  }));
  ASSERT_TRUE(op->waitForNoWrites(3s, 60s));
  EXPECT_EQ(daemonSet("held")["metadata"]["generation"], heldGeneration + 1);
  EXPECT_EQ(op->writesTo("daemonsets"), 4);
  EXPECT_EQ(op->writesTo("pods"), static_cast<double>(autoPods.size() + heldPods.size()));
  EXPECT_EQ(eventsOf("held", "RolloutStarted").size(), 1u);
  EXPECT_EQ(eventsOf("held", "RolloutComplete").size(), 1u);
  for (const auto& [node, uid] : pluginPods("held"))
    EXPECT_NE(heldPods.at(node), uid) << node << "'s plugin pod was not replaced";
  EXPECT_EQ(workloadStatus("held").value("renderedBy", ""), next);
}

TEST_F(OperatorUpdate, ADowngradeIsHeldAlikeAndAChangeOfTheSpecIsNot) {
  // Back to the earlier operator: its rendering differs from the running one, and it is not
  // the spec's.
  ASSERT_TRUE(startOperator("update-operator-back.log", {}));
  EXPECT_TRUE(waitFor("the downgrade is held", 60s, [&](std::string& seen) {
    seen = condition("held", "OperatorUpdateHeld", "message");
    return condition("held", "OperatorUpdateHeld", "status") == "True" &&
           seen.find("image " + kRegistrar + "-next -> " + kRegistrar) != std::string::npos;
  }));
  ASSERT_TRUE(op->waitForNoWrites(3s, 60s));
  EXPECT_EQ(op->writesTo("daemonsets"), 1) << "only Automatic's DaemonSet goes back";
  EXPECT_EQ(registrarImage(daemonSet("held")), kRegistrar + "-next");

  // A change of the spec is the admin's: applied, with what this operator renders.
  ASSERT_TRUE(kubectl({"patch", "dd", "held", "--type=json", "-p",
                       R"([{"op":"add","path":"/spec/driver/args/-","value":"--v=6"}])"})
                  .ok());
  EXPECT_TRUE(waitFor("the spec change is applied", 60s, [&](std::string& seen) {
    const Json ds = daemonSet("held");
    seen = ds.dump();
    return registrarImage(ds) == kRegistrar && seen.find("--v=6") != std::string::npos;
  }));
  EXPECT_TRUE(waitFor("nothing is held any more", 30s, [&](std::string& seen) {
    seen = condition("held", "OperatorUpdateHeld", "status");
    return seen == "False";
  }));
  EXPECT_EQ(workloadStatus("held").value("renderedBy", ""), current);
}

} // namespace
} // namespace csiop::e2e
