// Total accessors for JSON that the user wrote: a field of the wrong type reads
// as absent instead of throwing (type errors are reported by validation).
#pragma once

#include <string>
#include <string_view>

#include <csiop/api/types.hpp>

namespace csiop::api {

// object[key], or a null that lives forever when `object` is not an object or has no `key`:
// for reading nested fields without a check at every level.
inline const Json& member(const Json& object, std::string_view key) {
  static const Json kNull;
  if (!object.is_object()) {
    return kNull;
  }
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

inline std::string stringField(const Json& object, std::string_view key,
                               std::string fallback = {}) {
  if (object.is_object()) {
    const auto it = object.find(key);
    if (it != object.end() && it->is_string()) {
      return it->get<std::string>();
    }
  }
  return fallback;
}

// A string field of an object's metadata ("name", "uid", ...), "" when absent.
inline std::string metadataField(const Json& object, std::string_view key) {
  if (object.is_object()) {
    const auto it = object.find("metadata");
    if (it != object.end()) {
      return stringField(*it, key);
    }
  }
  return {};
}

inline bool isTrue(const Json& object, std::string_view key) {
  if (object.is_object()) {
    const auto it = object.find(key);
    return it != object.end() && it->is_boolean() && it->get<bool>();
  }
  return false;
}

} // namespace csiop::api
