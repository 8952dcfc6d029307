#include <gtest/gtest.h>

#include <csiop/driverdeployment/node_rollout.hpp>

#include "cached_pods.hpp"

namespace csiop::driverdeployment {
namespace {

Json pluginPod(const std::string& node, const std::string& hash, bool ready = true,
               bool terminating = false) {
  Json p = {
      {"metadata",
       {{"name", "x-node-" + node},
        {"uid", "uid-" + node},
        {"labels", {{"controller-revision-hash", hash}}}}},
      {"spec", {{"nodeName", node}}},
      {"status",
       {{"conditions", Json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}}}};
  if (terminating) {
    p["metadata"]["deletionTimestamp"] = "2026-11-25T10:00:00Z";
  }
  return p;
}

Json node(const std::string& name, bool cordoned = false, const std::string& allow = "") {
  Json n = {{"metadata", {{"name", name}}}, {"spec", Json::object()}};
  if (cordoned) {
    n["spec"]["unschedulable"] = true;
  }
  if (!allow.empty()) {
    n["metadata"]["annotations"] = {{kAllowNodePluginUpdateAnnotation, allow}};
  }
  return n;
}

Json userPod(const std::string& name, const std::string& node, const Json& volumes,
             const std::string& ownerKind = "ReplicaSet", const std::string& phase = "Running") {
  return {{"metadata",
           {{"name", name},
            {"namespace", "apps"},
            {"ownerReferences", Json::array({{{"kind", ownerKind}, {"name", "owner"}}})}}},
          {"spec", {{"nodeName", node}, {"volumes", volumes}}},
          {"status", {{"phase", phase}}}};
}

Json pv(const std::string& name, const std::string& driver, const std::string& claimNs,
        const std::string& claim) {
  return {
      {"metadata", {{"name", name}}},
      {"spec",
       {{"csi", {{"driver", driver}}}, {"claimRef", {{"namespace", claimNs}, {"name", claim}}}}}};
}

template <class T> std::vector<const Json*> ptrs(const T& objects) {
  std::vector<const Json*> out;
  for (const Json& o : objects) {
    out.push_back(&o);
  }
  return out;
}

class NodeRollout : public ::testing::Test {
protected:
  NodeRolloutPlan plan() {
    NodeRolloutInput in;
    in.currentHash = "new";
    cached = test::decoded(plugins);
    in.pluginPods = test::podPointers(cached);
    for (const Json& n : nodes) {
      in.nodes[n["metadata"]["name"]] = &n;
    }
    in.users = users;
    in.maxUnavailable = maxUnavailable;
    in.unavailable = unavailable;
    return planNodeRollout(in);
  }
  std::vector<std::string> replacedNodes(const NodeRolloutPlan& p) {
    std::vector<std::string> out;
    for (const auto& r : p.replace) {
      out.push_back(r.node);
    }
    return out;
  }

  std::vector<Json> plugins;
  std::vector<CachedPod> cached; // plugins, as the pod cache keeps them
  std::vector<Json> nodes;
  std::map<std::string, NodeVolumeUsers> users;
  std::int32_t maxUnavailable = 1;
  std::int32_t unavailable = 0;
};

TEST_F(NodeRollout, OnlyIdleNodesAreReplacedOneAtATime) {
  plugins = {pluginPod("a", "old"), pluginPod("b", "old"), pluginPod("c", "new")};
  nodes = {node("a"), node("b"), node("c")};
  users["a"] = {{"apps/web-0"}, {"apps/web-0"}};
  const auto p = plan();
  EXPECT_EQ(p.updated, 1);
  EXPECT_EQ(p.outdated, 2);
  ASSERT_EQ(p.replace.size(), 1u);
  EXPECT_EQ(p.replace[0].pod, "x-node-b");
  EXPECT_EQ(p.replace[0].uid, "uid-b");
  EXPECT_EQ(p.replace[0].why, "no pod on the node uses a volume of the driver");
  ASSERT_EQ(p.waiting.size(), 1u);
  EXPECT_EQ(p.waiting[0].node, "a");
  EXPECT_EQ(p.waiting[0].reason, "VolumesInUse");
  EXPECT_EQ(p.waiting[0].message, "1 pod uses volumes of the driver (apps/web-0)");
}

TEST_F(NodeRollout, MaxUnavailableBoundsTheReplacementsAndCountsWhatIsAlreadyDown) {
  plugins = {pluginPod("a", "old"), pluginPod("b", "old"), pluginPod("c", "old"),
             pluginPod("d", "old")};
  nodes = {node("a"), node("b"), node("c"), node("d")};
  maxUnavailable = 2;
  auto p = plan();
  EXPECT_EQ(replacedNodes(p), (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(p.waiting.size(), 2u);
  EXPECT_EQ(p.waiting[0].reason, "MaxUnavailable");
  EXPECT_EQ(p.waiting[0].message, "ready to update (no pod on the node uses a volume of the "
                                  "driver); waiting for 2 node(s) at most to be unavailable");

  // A replacement under way (terminating, or the new pod not ready yet) uses the budget.
  plugins = {pluginPod("a", "old", true, true), pluginPod("b", "new", false), pluginPod("c", "old"),
             pluginPod("d", "old")};
  p = plan();
  EXPECT_TRUE(p.replace.empty());
  EXPECT_EQ(p.updated, 1);
  EXPECT_EQ(p.outdated, 2); // the terminating one is no longer counted as outdated
  // So does a node whose pod is missing altogether (the DaemonSet's numberUnavailable).
  plugins = {pluginPod("c", "old"), pluginPod("d", "old")};
  unavailable = 1;
  EXPECT_EQ(replacedNodes(plan()), (std::vector<std::string>{"c"}));
}

TEST_F(NodeRollout, AnAnnotatedOrDrainedNodeIsReplacedDespiteVolumes) {
  plugins = {pluginPod("a", "old"), pluginPod("b", "old"), pluginPod("c", "old"),
             pluginPod("d", "old")};
  nodes = {node("a", false, "true"), node("b", true), node("c", true), node("d", false, "yes")};
  users["a"] = {{"apps/web-0"}, {"apps/web-0"}};
  // b: drained, only a DaemonSet's pod is left; c: cordoned, but a drain is still evicting.
  users["b"] = {{"apps/logger-b"}, {}};
  users["c"] = {{"apps/web-1"}, {"apps/web-1"}};
  users["d"] = {{"apps/web-2"}, {"apps/web-2"}};
  maxUnavailable = 4;
  const auto p = plan();
  EXPECT_EQ(replacedNodes(p), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.replace[0].why, "the node is annotated csiop.dev/allow-node-plugin-update=true");
  EXPECT_EQ(p.replace[1].why,
            "the node is drained (cordoned; only pods a drain leaves use the driver's volumes)");
  ASSERT_EQ(p.waiting.size(), 2u);
  EXPECT_EQ(p.waiting[0].node, "c");
  EXPECT_EQ(p.waiting[0].reason, "VolumesInUse");
  EXPECT_EQ(p.waiting[1].node, "d");
  EXPECT_EQ(p.waiting[1].reason, "InvalidAnnotation");
  EXPECT_EQ(p.waiting[1].message,
            "annotation csiop.dev/allow-node-plugin-update on node d is \"yes\", not \"true\" or "
            "\"false\"; 1 pod uses volumes of the driver (apps/web-2)");
}

TEST_F(NodeRollout, NothingHappensBeforeTheDaemonSetRecordsARevision) {
  plugins = {pluginPod("a", "old")};
  NodeRolloutInput in;
  const std::vector<CachedPod> cachedPlugins = test::decoded(plugins);
  in.pluginPods = test::podPointers(cachedPlugins);
  const auto p = planNodeRollout(in);
  EXPECT_TRUE(p.replace.empty());
  EXPECT_TRUE(p.waiting.empty());
}

TEST(NodeVolumeUsersTest, InlineClaimAndEphemeralVolumesOfTheDriverOnly) {
  const std::vector<Json> pvs = {pv("pv-1", "a.csi", "apps", "data"),
                                 pv("pv-2", "a.csi", "apps", "web-3-scratch"),
                                 pv("pv-3", "b.csi", "apps", "other")};
  const std::vector<Json> pods = {
      userPod("web-0", "n1",
              Json::array({{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "data"}}}}})),
      userPod("web-1", "n1", Json::array({{{"name", "i"}, {"csi", {{"driver", "a.csi"}}}}}),
              "DaemonSet"),
      userPod("web-2", "n2",
              Json::array({{{"name", "o"}, {"persistentVolumeClaim", {{"claimName", "other"}}}}})),
      userPod("web-3", "n2", Json::array({{{"name", "scratch"}, {"ephemeral", Json::object()}}})),
      userPod("web-4", "n3", Json::array({{{"name", "i"}, {"csi", {{"driver", "a.csi"}}}}}),
              "ReplicaSet", "Succeeded"),
      userPod("web-5", "", Json::array({{{"name", "i"}, {"csi", {{"driver", "a.csi"}}}}}))};
  const std::vector<CachedPod> cached = test::decoded(pods);
  const auto users = volumeUsersByNode("a.csi", ptrs(pvs), test::podPointers(cached));
  ASSERT_EQ(users.size(), 2u);
  EXPECT_EQ(users.at("n1").pods, (std::vector<std::string>{"apps/web-0", "apps/web-1"}));
  EXPECT_EQ(users.at("n1").blocking, (std::vector<std::string>{"apps/web-0"}));
  EXPECT_EQ(users.at("n2").pods, (std::vector<std::string>{"apps/web-3"}));
}

TEST(NodeRolloutHelpers, TheNewestOwnedRevisionGivesTheCurrentHash) {
  const auto rev = [](const std::string& hash, std::int64_t n, const std::string& owner) {
    return Json{{"metadata",
                 {{"labels", {{"controller-revision-hash", hash}}},
                  {"ownerReferences", Json::array({{{"uid", owner}}})}}},
                {"revision", n}};
  };
  const std::vector<Json> revisions = {rev("h1", 1, "ds"), rev("h3", 3, "ds"), rev("h2", 2, "ds"),
                                       rev("other", 9, "another-ds")};
  EXPECT_EQ(currentRevisionHash(ptrs(revisions), "ds"), "h3");
  EXPECT_EQ(currentRevisionHash(ptrs(revisions), "none"), "");
}

TEST(NodeRolloutHelpers, MaxUnavailableIsANumberOrAPercentageRoundedUp) {
  EXPECT_EQ(resolveMaxUnavailable(Json(), 10), 1);
  EXPECT_EQ(resolveMaxUnavailable(Json(3), 10), 3);
  EXPECT_EQ(resolveMaxUnavailable(Json("25%"), 10), 3);
  EXPECT_EQ(resolveMaxUnavailable(Json("1%"), 10), 1);
  EXPECT_EQ(resolveMaxUnavailable(Json("0%"), 10), 1); // never stuck at zero
  EXPECT_EQ(resolveMaxUnavailable(Json(0), 10), 1);
  // As validated: zero-padded, and never more than every node.
  EXPECT_EQ(resolveMaxUnavailable(Json("0050%"), 10), 5);
  EXPECT_EQ(resolveMaxUnavailable(Json("100%"), 10), 10);
  EXPECT_EQ(resolveMaxUnavailable(Json("99999999999999999999%"), 10), 10);
  EXPECT_EQ(resolveMaxUnavailable(Json(std::int64_t{1} << 40), 10), 1'000'000);
}

} // namespace
} // namespace csiop::driverdeployment
