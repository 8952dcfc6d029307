#include <csiop/driverdeployment/field_ownership.hpp>

#include <algorithm>

#include <csiop/api/json_access.hpp>

namespace csiop::driverdeployment {

bool writtenBy(const Json& object, std::string_view manager) {
  const Json& entries = api::member(api::member(object, "metadata"), "managedFields");
  if (!entries.is_array()) {
    return false;
  }
  return std::any_of(entries.begin(), entries.end(), [&](const Json& e) {
    return api::stringField(e, "manager") == manager && api::stringField(e, "subresource").empty();
  });
}

std::optional<Json> ownershipUpgrade(const Json& object, const std::string& manager) {
  const Json& entries = api::member(api::member(object, "metadata"), "managedFields");
  if (!entries.is_array()) {
    return std::nullopt;
  }
  std::optional<std::size_t> update;
  bool applies = false;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Json& e = entries[i];
    if (api::stringField(e, "manager") != manager || !api::stringField(e, "subresource").empty()) {
      continue;
    }
    const std::string operation = api::stringField(e, "operation");
    if (operation == "Update" && !update) {
      update = i;
    }
    applies |= operation == "Apply";
  }
  if (!update) {
    return std::nullopt;
  }
  const std::string at = "/metadata/managedFields/" + std::to_string(*update);
  // The tests make a stale index fail instead of changing someone else's entry.
  Json patch = Json::array({{{"op", "test"}, {"path", at + "/manager"}, {"value", manager}},
                            {{"op", "test"}, {"path", at + "/operation"}, {"value", "Update"}}});
  if (applies) {
    patch.push_back({{"op", "remove"}, {"path", at}});
  } else {
    patch.push_back({{"op", "replace"}, {"path", at + "/operation"}, {"value", "Apply"}});
  }
  return patch;
}

} // namespace csiop::driverdeployment
