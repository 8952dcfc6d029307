#include <gtest/gtest.h>

#include <csiop/driverdeployment/startup_taint.hpp>

namespace csiop::driverdeployment {
namespace {

using api::Json;

Json taint(const std::string& key, const std::string& effect, const std::string& value = "") {
  Json t = {{"key", key}, {"effect", effect}};
  if (!value.empty()) {
    t["value"] = value;
  }
  return t;
}

TEST(StartupTaint, ANodesTaintKeysEachOnce) {
  const Json node = {{"spec",
                      {{"taints", Json::array({taint("a", "NoSchedule"), taint("b", "NoExecute"),
                                               taint("a", "NoExecute")})}}}};
  EXPECT_EQ(taintKeysOf(node), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(taintKeysOf(Json{{"spec", Json::object()}}).empty());
  EXPECT_TRUE(taintKeysOf(Json{{"spec", {{"taints", "bad"}}}}).empty());
}

TEST(StartupTaint, TheReleaseRemovesEveryTaintOfTheKeyTestedAgainstTheListRead) {
  const Json taints =
      Json::array({taint("example.com/storage", "NoSchedule"), taint("other", "NoSchedule", "x"),
                   taint("example.com/storage", "NoExecute", "pending")});
  const Json patch = releasePatch(taints, "example.com/storage");
  ASSERT_EQ(patch.size(), 2u);
  EXPECT_EQ(patch[0], Json({{"op", "test"}, {"path", "/spec/taints"}, {"value", taints}}))
      << "another writer's change since the read makes the API server refuse it";
  EXPECT_EQ(patch[1], Json({{"op", "replace"},
                            {"path", "/spec/taints"},
                            {"value", Json::array({taint("other", "NoSchedule", "x")})}}));
  const Json only = Json::array({taint("example.com/storage", "NoSchedule")});
  EXPECT_EQ(releasePatch(only, "example.com/storage")[1]["value"], Json::array());
}

TEST(StartupTaint, NothingToReleaseIsNoPatch) {
  EXPECT_EQ(releasePatch(Json::array({taint("other", "NoSchedule")}), "example.com/storage"),
            Json::array());
  EXPECT_EQ(releasePatch(Json(), "example.com/storage"), Json::array());
}

} // namespace
} // namespace csiop::driverdeployment
