#include <csiop/driverdeployment/startup_taint.hpp>

#include <algorithm>

#include <csiop/api/json_access.hpp>

namespace csiop::driverdeployment {

using api::Json;

std::vector<std::string> taintKeysOf(const Json& node) {
  std::vector<std::string> keys;
  const Json& taints = api::member(api::member(node, "spec"), "taints");
  if (!taints.is_array()) {
    return keys;
  }
  for (const Json& taint : taints) {
    const std::string key = api::stringField(taint, "key");
    if (!key.empty() && std::find(keys.begin(), keys.end(), key) == keys.end()) {
      keys.push_back(key);
    }
  }
  return keys;
}

Json releasePatch(const Json& taints, const std::string& key) {
  if (!taints.is_array()) {
    return Json::array();
  }
  Json kept = Json::array();
  for (const Json& taint : taints) {
    if (api::stringField(taint, "key") != key) {
      kept.push_back(taint);
    }
  }
  if (kept.size() == taints.size()) {
    return Json::array();
  }
  return Json::array({Json{{"op", "test"}, {"path", "/spec/taints"}, {"value", taints}},
                      Json{{"op", "replace"}, {"path", "/spec/taints"}, {"value", kept}}});
}

} // namespace csiop::driverdeployment
