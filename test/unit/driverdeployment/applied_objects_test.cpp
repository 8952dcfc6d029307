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
