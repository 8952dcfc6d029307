// controller/applied_objects.hpp: when a pass may skip comparing a child with what it applies.
#include <gtest/gtest.h>

#include <csiop/driverdeployment/applied_objects.hpp>

namespace csiop::driverdeployment {
namespace {

using api::Json;

Json desired(const std::string& image) {
  return {
      {"apiVersion", "apps/v1"},
      {"kind", "DaemonSet"},
      {"metadata", {{"name", "d-node"}, {"namespace", "csi"}}},
      {"spec", {{"template", {{"spec", {{"containers", {{{"name", "c"}, {"image", image}}}}}}}}}}};
}

// The server's answer to a write of `desired`: at `version`, with `ready` pods in its status.
Json written(const Json& desired, const std::string& version, int ready) {
  Json out = desired;
  out["metadata"]["uid"] = "ds-uid";
  out["metadata"]["resourceVersion"] = version;
  out["metadata"]["generation"] = 1;
  out["status"] = {{"numberReady", ready}};
  return out;
}

CachedChild cached(const Json& object) {
  return decodeChild(Json(object));
}

TEST(AppliedObjects, AChildIsUnchangedAtTheVersionItsWriteMadeAndAtStatusChangesAfterIt) {
  AppliedObjects applied;
  const Json want = desired("x:1");
  const Json result = written(want, "10", 0);
  applied.remember(want, result);
  EXPECT_TRUE(applied.unchangedSinceApplied(want, cached(result)));
  // The DaemonSet controller's status updates: compared no more.
  EXPECT_TRUE(applied.unchangedSinceApplied(want, cached(written(want, "11", 1))));
  EXPECT_TRUE(applied.unchangedSinceApplied(want, cached(written(want, "12", 2))));
  // What the pass would apply changed, or someone changed the spec: compare again.
  EXPECT_FALSE(applied.unchangedSinceApplied(desired("x:2"), cached(written(want, "12", 2))));
  EXPECT_FALSE(applied.unchangedSinceApplied(want, cached(written(desired("x:0"), "13", 2))));
  applied.forget("DaemonSet csi/d-node");
  EXPECT_FALSE(applied.unchangedSinceApplied(want, cached(result)));
}

// Before the cache shows the version the write made, a later version's content is unknown:
// compared once (a status-only version seen first is no proof of what the write left).
TEST(AppliedObjects, AVersionAfterTheWritesOwnIsComparedUntilTheWritesOwnIsSeen) {
  AppliedObjects applied;
  const Json want = desired("x:1");
  applied.remember(want, written(want, "10", 0));
  EXPECT_FALSE(applied.unchangedSinceApplied(want, cached(written(want, "11", 1))));
}

// A child compared and found to hold what the pass applies (after a restart, or after a
// status change the cache showed first) counts as applied from then on.
TEST(AppliedObjects, AVerifiedChildCountsAsApplied) {
  AppliedObjects applied;
  const Json want = desired("x:1");
  const CachedChild live = cached(written(want, "20", 1));
  EXPECT_FALSE(applied.unchangedSinceApplied(want, live));
  applied.verified(want, live);
  EXPECT_TRUE(applied.unchangedSinceApplied(want, live));
  EXPECT_TRUE(applied.unchangedSinceApplied(want, cached(written(want, "21", 2))));
  EXPECT_FALSE(applied.unchangedSinceApplied(want, cached(written(desired("y"), "22", 2))));
}

// The API server's warnings of each child's last write, for the APIWarnings condition: kept
// while the child stays as written (verified too), replaced by the next write's, per owner.
TEST(AppliedObjects, TheWarningsOfEachChildsLastWriteByOwner) {
  AppliedObjects applied;
  Json mine = desired("x:1");
  mine["metadata"]["labels"] = {{"csiop.dev/driverdeployment", "d"}};
  Json other = mine;
  other["metadata"]["name"] = "e-node";
  other["metadata"]["labels"]["csiop.dev/driverdeployment"] = "e";
  applied.remember(mine, written(mine, "10", 0),
                   {"unknown field \"spec.x\"", "1", "2", "3", "4", "5 (not kept)"});
  applied.remember(other, written(other, "11", 0), {"deprecated"});
  EXPECT_EQ(applied.warningsOf("d"),
            (std::vector<std::string>{"DaemonSet csi/d-node: unknown field \"spec.x\"",
                                      "DaemonSet csi/d-node: 1", "DaemonSet csi/d-node: 2",
                                      "DaemonSet csi/d-node: 3", "DaemonSet csi/d-node: 4"}));
  applied.verified(mine, cached(written(mine, "12", 1)));
  EXPECT_EQ(applied.warningsOf("d").size(), 5u) << "verified as written: the warnings stay";
  applied.remember(mine, written(mine, "13", 1));
  EXPECT_TRUE(applied.warningsOf("d").empty()) << "the next write drew none";
  EXPECT_EQ(applied.warningsOf("e"),
            (std::vector<std::string>{"DaemonSet csi/e-node: deprecated"}));
  for (int i = 0; i < 3; ++i) {
    Json child = mine;
    child["metadata"]["name"] = "c" + std::to_string(i);
    applied.remember(child, written(child, "20", 0), {"a", "b", "c", "d", "e"});
  }
  const auto listed = applied.warningsOf("d");
  ASSERT_EQ(listed.size(), AppliedObjects::kWarningsListed + 1);
  EXPECT_EQ(listed.back(), "and 5 more");
}

// A write's generation the cache does not show yet: the status is the old spec's.
TEST(AppliedObjects, TheCacheIsBehindAWriteUntilItShowsItsGeneration) {
  AppliedObjects applied;
  const Json want = desired("x:1");
  Json result = written(want, "30", 0);
  result["metadata"]["generation"] = 2;
  applied.remember(want, result);
  EXPECT_TRUE(applied.behindLastApply(written(want, "29", 3)));
  EXPECT_FALSE(applied.behindLastApply(result));
}

} // namespace
} // namespace csiop::driverdeployment
