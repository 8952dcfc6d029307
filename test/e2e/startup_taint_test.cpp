// spec.startupTaint on 50 fake (kwok) nodes created with the taint, as a node pool would register
// them: kwok plays their kubelets and registration_stand_in.hpp their plugin registration (a
// stand-in: upstream has no fake kubelet that registers CSI plugins). Every node is released once
// its CSINode lists the driver and none before; a writer adding taints at the same time loses
// none; a taint put back is removed again; a node where the driver is not registered stays held.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fake_nodes.hpp"
#include "harness.hpp"
#include "operator_process.hpp"

namespace csiop::e2e {
namespace {

const std::string kKey = "example.com/storage-not-ready";
const std::string kDriver = "held.csi.example.com";
const int kNodes = 50;

std::string manifest() {
  return R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: held}
spec:
  driverName: )" +
         kDriver + R"(
  namespace: csi-held
  csiDriver: {attachRequired: false, volumeLifecycleModes: [Ephemeral]}
  driver: {image: example.com/held-driver:v1}
  startupTaint: {key: )" +
         kKey + "}\n";
}

bool hasTaint(const Json& node, const std::string& key) {
  if (!node.is_object())
    return false;
  for (const Json& t : node.value("spec", Json::object()).value("taints", Json::array())) {
    if (t.value("key", "") == key)
      return true;
  }
  return false;
}

// The fake nodes' taints, then their CSINodes: a node seen without the startup taint whose
// CSINode, read after it, does not list the driver was released before its driver registered.
struct Snapshot {
  std::map<std::string, Json> nodes;
  std::set<std::string> registered;
};

Snapshot snapshot() {
  Snapshot s;
  const Json nodes = kubectlJson({"get", "nodes", "-l", "csiop.dev/test-pool=fake"});
  for (const Json& n : nodes["items"])
    s.nodes[n["metadata"]["name"]] = n;
  const Json csiNodes = kubectlJson({"get", "csinodes"});
  for (const Json& c : csiNodes["items"]) {
    for (const Json& d : c.value("spec", Json::object()).value("drivers", Json::array())) {
      if (d.value("name", "") == kDriver)
        s.registered.insert(c["metadata"]["name"].get<std::string>());
    }
  }
  return s;
}

std::string heldCount() {
  return kubectl({"get", "dd", "held", "-o", "jsonpath={.status.nodes.held}"}).out;
}

class StartupTaint : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    applyCrds();
    op = std::make_unique<OperatorProcess>("startup-taint-operator.log");
    ASSERT_TRUE(op->waitReady(60s));
  }
  static void TearDownTestSuite() {
    if (op) {
      EXPECT_EQ(op->stop(), 0) << op->log();
      op.reset();
    }
  }
  void TearDown() override {
    if (HasFailure() && op)
      std::cerr << "operator log:\n" << op->log() << "\n";
  }

  static inline std::unique_ptr<OperatorProcess> op;
};

TEST_F(StartupTaint, EachNodeIsReleasedOnlyOnceTheDriverIsRegisteredAndNoOtherTaintIsLost) {
  FakeNodes nodes("held", kNodes, {kKey});
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, manifest()).ok());
  // Meanwhile another writer adds a taint of its own to every node, one at a time (a JSON patch
  // appending to the list, atomic on the server): none of them may be lost to a removal.
  std::size_t written = 0;
  std::size_t releasedEarly = 0;
  std::string early;
  const bool released = waitFor("every fake node released", 180s, [&](std::string& seen) {
    if (written < nodes.names().size()) {
      const std::string patch = R"([{"op": "add", "path": "/spec/taints/-", "value": )"
                                R"({"key": "example.com/writer", "effect": "PreferNoSchedule"}}])";
      kubectl({"patch", "node", nodes.names()[written], "--type", "json", "-p", patch});
      ++written;
    }
    const Snapshot s = snapshot();
    std::size_t free = 0;
    for (const auto& [name, node] : s.nodes) {
      if (hasTaint(node, kKey))
        continue;
      ++free;
      if (!s.registered.contains(name)) {
        ++releasedEarly;
        early += " " + name;
      }
    }
    seen = std::to_string(free) + " of " + std::to_string(s.nodes.size()) + " released, " +
           std::to_string(s.registered.size()) + " registered, " + std::to_string(written) +
           " writer taints added";
    return written == nodes.names().size() && free == s.nodes.size();
  });
  EXPECT_TRUE(released);
  EXPECT_EQ(releasedEarly, 0u) << "released before the driver was registered:" << early;
  const Snapshot after = snapshot();
  for (const auto& [name, node] : after.nodes) {
    EXPECT_TRUE(hasTaint(node, "example.com/writer")) << name << " lost the writer's taint";
    EXPECT_TRUE(hasTaint(node, "csiop.dev/test-pool")) << name << " lost its pool's taint";
  }
  EXPECT_TRUE(waitFor("status.nodes.held 0", 30s, [](std::string& seen) {
    seen = heldCount();
    return seen == "0";
  }));
  const std::string events = kubectl({"get", "events", "-n", "default", "--field-selector",
                                      "involvedObject.name=held,reason=StartupTaintRemoved", "-o",
                                      "jsonpath={.items[*].message}"})
                                 .out;
  EXPECT_NE(events.find("removed the startup taint " + kKey + " from "), std::string::npos)
      << events;

  // A node manager puts the taint back on one node: removed again, the writer's taint kept.
  const std::string node = nodes.names().front();
  const std::string putBack = R"([{"op": "add", "path": "/spec/taints/-", "value": {"key": ")" +
                              kKey + R"(", "effect": "NoSchedule"}}])";
  ASSERT_TRUE(kubectl({"patch", "node", node, "--type", "json", "-p", putBack}).ok());
  EXPECT_TRUE(waitFor("the taint put back removed again", 30s, [&](std::string& seen) {
    const Json n = kubectlJson({"get", "node", node});
    seen = n.value("spec", Json::object()).value("taints", Json::array()).dump();
    return !hasTaint(n, kKey) && hasTaint(n, "example.com/writer");
  }));
  ASSERT_TRUE(kubectl({"delete", "dd", "held", "--wait=true", "--timeout=120s"}).ok());
}

TEST_F(StartupTaint, ANodeWhereTheDriverIsNotRegisteredStaysHeldAndCounted) {
  FakeNodes nodes("unregistered", 2, {kKey});
  // The node plugin is kept off the second node: nothing registers the driver there.
  ASSERT_TRUE(kubectl({"label", "node", nodes.names()[1], "csiop.dev/no-plugin=true"}).ok());
  std::string held = manifest();
  held += R"(  node:
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: csiop.dev/no-plugin, operator: DoesNotExist}
)";
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, held).ok());
  EXPECT_TRUE(waitFor("the first node released, the second held", 120s, [&](std::string& seen) {
    Snapshot s = snapshot();
    seen = "held " + heldCount();
    return !hasTaint(s.nodes[nodes.names()[0]], kKey) &&
           hasTaint(s.nodes[nodes.names()[1]], kKey) && heldCount() == "1";
  }));
  const std::string ready =
      kubectl({"get", "dd", "held", "-o",
               R"(jsonpath={.status.conditions[?(@.type=="Ready")].message})"})
          .out;
  EXPECT_NE(ready.find("(1 kept from workloads by the startup taint)"), std::string::npos) << ready;
  std::this_thread::sleep_for(5s);
  EXPECT_TRUE(hasTaint(kubectlJson({"get", "node", nodes.names()[1]}), kKey));
  ASSERT_TRUE(kubectl({"delete", "dd", "held", "--wait=true", "--timeout=120s"}).ok());
}

} // namespace
} // namespace csiop::e2e
