#include <gtest/gtest.h>

#include <csiop/driverdeployment/compare.hpp>

namespace csiop::driverdeployment {
namespace {

Json j(const char* text) {
  return Json::parse(text);
}

TEST(Compare, ServerDefaultsAndOtherManagersFieldsAreNoDifference) {
  const Json desired = j(R"({"spec": {"replicas": 1, "template": {"spec": {"containers": [
    {"name": "a", "image": "x", "args": ["--v"]}]}}}})");
  const Json live = j(R"({"metadata": {"resourceVersion": "7"}, "spec": {"replicas": 1,
    "revisionHistoryLimit": 10, "template": {"spec": {"dnsPolicy": "ClusterFirst", "containers": [
    {"name": "a", "image": "x", "args": ["--v"], "terminationMessagePath": "/dev/termination-log"}]}}},
    "status": {"readyReplicas": 1}})");
  EXPECT_TRUE(contains(live, desired));
  EXPECT_EQ(firstDifference(live, desired), "");
}

TEST(Compare, FindsChangedScalarsAndTheirPath) {
  const Json desired =
      j(R"({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "y"}]}}}})");
  const Json live =
      j(R"({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}})");
  EXPECT_FALSE(contains(live, desired));
  EXPECT_EQ(firstDifference(live, desired), ".spec.template.spec.containers[0].image");
}

TEST(Compare, KeyedListsMatchByKeyAndIgnoreForeignItems) {
  const Json desired =
      j(R"({"containers": [{"name": "b", "image": "2"}, {"name": "a", "image": "1"}]})");
  const Json live =
      j(R"({"containers": [{"name": "a", "image": "1"}, {"name": "injected", "image": "s"},
    {"name": "b", "image": "2"}]})");
  EXPECT_TRUE(contains(live, desired));
  EXPECT_FALSE(contains(j(R"({"containers": [{"name": "a", "image": "1"}]})"), desired));
}

TEST(Compare, AtomicListsMustMatchExactly) {
  EXPECT_FALSE(contains(j(R"({"args": ["a", "b", "c"]})"), j(R"({"args": ["a", "b"]})")));
  EXPECT_FALSE(contains(j(R"({"args": ["b", "a"]})"), j(R"({"args": ["a", "b"]})")));
  EXPECT_TRUE(contains(j(R"({"args": ["a", "b"]})"), j(R"({"args": ["a", "b"]})")));
}

TEST(Compare, QuantitiesCompareByValue) {
  EXPECT_TRUE(contains(j(R"({"requests": {"cpu": "500m", "memory": "1Gi"}})"),
                       j(R"({"requests": {"cpu": "0.5", "memory": "1024Mi"}})")));
  EXPECT_TRUE(contains(j(R"({"limits": {"cpu": "2"}})"), j(R"({"limits": {"cpu": 2}})")));
  EXPECT_FALSE(contains(j(R"({"requests": {"cpu": "500m"}})"), j(R"({"requests": {"cpu": "1"}})")));
  // Only under limits/requests: elsewhere strings are strings.
  EXPECT_FALSE(contains(j(R"({"x": "500m"})"), j(R"({"x": "0.5"})")));
}

TEST(Compare, EmptyCollectionsTheServerOmitsAreNoDifference) {
  EXPECT_TRUE(contains(j(R"({"spec": {}})"), j(R"({"spec": {"tolerations": [], "labels": {}}})")));
  EXPECT_FALSE(contains(j(R"({"spec": {}})"), j(R"({"spec": {"tolerations": [{}]}})")));
}

TEST(Compare, MissingFieldsAndTypeChanges) {
  EXPECT_FALSE(contains(j(R"({"a": 1})"), j(R"({"b": 1})")));
  EXPECT_FALSE(contains(j(R"({"a": "1"})"), j(R"({"a": 1})")));
  EXPECT_FALSE(contains(j(R"({"a": [1]})"), j(R"({"a": {"b": 1}})")));
  EXPECT_TRUE(contains(j(R"({"a": 1.0})"), j(R"({"a": 1})")));
}

TEST(Compare, SameJsonIgnoresKeyOrderOnly) {
  EXPECT_TRUE(sameJson(j(R"({"a": 1, "b": {"c": [1, {"d": 2, "e": 3}]}})"),
                       j(R"({"b": {"c": [1, {"e": 3, "d": 2}]}, "a": 1})")));
  EXPECT_FALSE(sameJson(j(R"({"a": [1, 2]})"), j(R"({"a": [2, 1]})")));
  EXPECT_FALSE(sameJson(j(R"({"a": 1})"), j(R"({"a": 1, "b": null})")));
}

TEST(Compare, OnlyStatusDiffersIsTheEchoOfAStatusWrite) {
  const Json before = Json::parse(R"({"metadata":{"name":"a","resourceVersion":"1",
    "generation":2,"finalizers":["f"],"managedFields":[{"manager":"m","operation":"Apply"}]},
    "spec":{"x":1},"status":{"observedGeneration":1}})");
  Json after = before;
  after["status"]["observedGeneration"] = 2;
  after["metadata"]["resourceVersion"] = "2";
  after["metadata"]["managedFields"].push_back({{"manager", "m"}, {"subresource", "status"}});
  EXPECT_TRUE(onlyStatusDiffers(before, after));
  for (const char* path : {"/spec/x", "/metadata/generation", "/metadata/finalizers",
                           "/metadata/annotations", "/metadata/deletionTimestamp"}) {
    Json changed = after;
    changed[Json::json_pointer(path)] = "changed";
    EXPECT_FALSE(onlyStatusDiffers(before, changed)) << path;
  }
}

TEST(Compare, QuantityValues) {
  EXPECT_NEAR(static_cast<double>(*quantityValue("100m")), 0.1, 1e-12);
  EXPECT_EQ(quantityValue("2Ki"), 2048.0L);
  EXPECT_EQ(quantityValue("1e3"), 1000.0L);
  EXPECT_EQ(quantityValue("1E"), 1e18L);
  EXPECT_FALSE(quantityValue("1 Gi").has_value());
  EXPECT_FALSE(quantityValue("abc").has_value());
}

} // namespace
} // namespace csiop::driverdeployment
