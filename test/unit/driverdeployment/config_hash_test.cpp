#include <gtest/gtest.h>

#include <csiop/driverdeployment/config_hash.hpp>

namespace csiop::driverdeployment {
namespace {

render::ConfigReference ref(const std::string& kind, const std::string& name) {
  return {kind, "csi-x", name, false};
}

Json configMap(const Json& data) {
  return {{"metadata", {{"name", "settings"}, {"resourceVersion", "1"}}}, {"data", data}};
}

TEST(ConfigHash, DependsOnContentOnly) {
  const std::string a =
      configContentHash({{ref("ConfigMap", "settings"), configMap({{"a", "1"}, {"b", "2"}})}});
  EXPECT_EQ(a.size(), 32u);
  // Key order, metadata and resourceVersion do not count.
  Json reordered = configMap({{"b", "2"}, {"a", "1"}});
  reordered["metadata"]["resourceVersion"] = "99";
  reordered["metadata"]["labels"] = {{"x", "y"}};
  EXPECT_EQ(configContentHash({{ref("ConfigMap", "settings"), reordered}}), a);
  // A value, a key, binaryData, the reference itself and absence do.
  EXPECT_NE(
      configContentHash({{ref("ConfigMap", "settings"), configMap({{"a", "1"}, {"b", "3"}})}}), a);
  EXPECT_NE(
      configContentHash({{ref("ConfigMap", "settings"), configMap({{"a", "1"}, {"c", "2"}})}}), a);
  Json binary = configMap({{"a", "1"}, {"b", "2"}});
  binary["binaryData"] = {{"k", "AAE="}};
  EXPECT_NE(configContentHash({{ref("ConfigMap", "settings"), binary}}), a);
  EXPECT_NE(configContentHash({{ref("Secret", "settings"), configMap({{"a", "1"}, {"b", "2"}})}}),
            a);
  EXPECT_NE(configContentHash({{ref("ConfigMap", "settings"), std::nullopt}}), a);
  // No two contents print alike ("a=1\nb" and "a" = "1\nb=...").
  EXPECT_NE(configContentHash({{ref("ConfigMap", "s"), configMap({{"a", "1\nb=2"}})}}),
            configContentHash({{ref("ConfigMap", "s"), configMap({{"a", "1"}, {"b", "2"}})}}));
}

TEST(ConfigHash, SaysNothingOfTheContent) {
  const std::string h =
      configContentHash({{ref("Secret", "creds"), configMap({{"password", "aHVudGVyMg=="}})}});
  EXPECT_EQ(h.find("aHVudGVyMg"), std::string::npos);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
}

} // namespace
} // namespace csiop::driverdeployment
