#include "patch.hpp"

#include <csiop/render/merge_keys.hpp>

#include <csiop/api/json_access.hpp>
#include <string>

namespace csiop::render {
namespace {

using api::Json;

Json withoutDirectives(const Json& v) {
  if (v.is_object()) {
    Json out = Json::object();
    for (const auto& [k, item] : v.items()) {
      if (k != "$patch" && !item.is_null()) {
        out[k] = withoutDirectives(item);
      }
    }
    return out;
  }
  if (v.is_array()) {
    Json out = Json::array();
    for (const auto& item : v) {
      out.push_back(withoutDirectives(item));
    }
    return out;
  }
  return v;
}

Json mergeValue(const std::string& field, Json base, const Json& patch);

Json mergeList(Json base, const Json& patch, const char* key) {
  for (const auto& item : patch) {
    if (!item.is_object() || !item.contains(key)) {
      base.push_back(withoutDirectives(item));
      continue;
    }
    const bool remove = api::stringField(item, "$patch") == "delete";
    bool matched = false;
    for (auto it = base.begin(); it != base.end(); ++it) {
      if (it->is_object() && it->contains(key) && (*it)[key] == item[key]) {
        matched = true;
        if (remove) {
          base.erase(it);
        } else {
          *it = strategicMerge(std::move(*it), item);
        }
        break;
      }
    }
    if (!matched && !remove) {
      base.push_back(withoutDirectives(item));
    }
  }
  return base;
}

Json mergeValue(const std::string& field, Json base, const Json& patch) {
  if (base.is_object() && patch.is_object()) {
    return strategicMerge(std::move(base), patch);
  }
  if (base.is_array() && patch.is_array()) {
    if (const char* key = listMergeKey(field)) {
      return mergeList(std::move(base), patch, key);
    }
  }
  return withoutDirectives(patch);
}

} // namespace

Json strategicMerge(Json base, const Json& patch) {
  if (!base.is_object() || !patch.is_object()) {
    return withoutDirectives(patch);
  }
  for (const auto& [k, v] : patch.items()) {
    if (k == "$patch") {
      continue;
    }
    if (v.is_null()) {
      base.erase(k);
    } else if (base.contains(k)) {
      base[k] = mergeValue(k, std::move(base[k]), v);
    } else {
      base[k] = withoutDirectives(v);
    }
  }
  return base;
}

} // namespace csiop::render
