#include <csiop/driverdeployment/compare.hpp>

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <vector>

#include <csiop/api/formats.hpp>
#include <csiop/render/merge_keys.hpp>

namespace csiop::driverdeployment {
namespace {

bool isQuantityField(const std::string& parent) {
  return parent == "limits" || parent == "requests";
}

// Walks `desired` against `live` and notes each path where live lacks it, up to `max` of them
// (a path whose parent differs is one difference, not one per field below it).
class Differ {
public:
  explicit Differ(std::size_t max) : max_(max) {}

  std::vector<std::string> found;

  // Whether enough differences were found (the walk stops).
  bool find(const Json& live, const Json& desired, const std::string& field,
            const std::string& parent, const std::string& path);

private:
  bool note(std::string path) {
    found.push_back(std::move(path));
    return found.size() >= max_;
  }
  bool findInList(const Json& live, const Json& desired, const std::string& field,
                  const std::string& path);

  std::size_t max_;
};

bool Differ::findInList(const Json& live, const Json& desired, const std::string& field,
                        const std::string& path) {
  if (const char* key = render::listMergeKey(field)) {
    for (std::size_t i = 0; i < desired.size(); ++i) {
      const Json& want = desired[i];
      const std::string itemPath = path + "[" + std::to_string(i) + "]";
      if (!want.is_object() || !want.contains(key)) {
        if (note(itemPath)) {
          return true;
        }
        continue;
      }
      const Json* match = nullptr;
      for (const auto& have : live) {
        if (have.is_object() && have.contains(key) && have[key] == want[key]) {
          match = &have;
          break;
        }
      }
      if (match == nullptr ? note(itemPath) : find(*match, want, "", field, itemPath)) {
        return true;
      }
    }
    return false;
  }
  if (live.size() != desired.size()) {
    return note(path);
  }
  for (std::size_t i = 0; i < desired.size(); ++i) {
    if (find(live[i], desired[i], "", field, path + "[" + std::to_string(i) + "]")) {
      return true;
    }
  }
  return false;
}

bool Differ::find(const Json& live, const Json& desired, const std::string& field,
                  const std::string& parent, const std::string& path) {
  const std::string here = path.empty() ? "." : path;
  if (desired.is_object()) {
    if (!live.is_object()) {
      return note(here);
    }
    for (const auto& [k, v] : desired.items()) {
      const auto it = live.find(k);
      const std::string sub = path + "." + k;
      if (it == live.end()) {
        // An empty map or list the server omits is no difference.
        if ((v.is_object() || v.is_array()) && v.empty()) {
          continue;
        }
        if (note(sub)) {
          return true;
        }
        continue;
      }
      if (find(*it, v, k, field, sub)) {
        return true;
      }
    }
    return false;
  }
  if (desired.is_array()) {
    return live.is_array() ? findInList(live, desired, field, here) : note(here);
  }
  if (live == desired) {
    return false;
  }
  if (isQuantityField(parent) && (live.is_string() || live.is_number()) &&
      (desired.is_string() || desired.is_number())) {
    const auto text = [](const Json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); };
    const auto a = quantityValue(text(live));
    const auto b = quantityValue(text(desired));
    if (a && b && std::fabs(*a - *b) <= 1e-9L * std::max(std::fabs(*a), 1.0L)) {
      return false;
    }
  }
  // Numbers may come back as another JSON number type (1 vs 1.0).
  if (live.is_number() && desired.is_number() &&
      live.get<long double>() == desired.get<long double>()) {
    return false;
  }
  return note(here);
}

} // namespace

std::optional<long double> quantityValue(const std::string& q) {
  if (!api::formats::isQuantity(q)) {
    return std::nullopt;
  }
  std::size_t split = q.size();
  static const std::map<std::string, long double> suffixes = {{"n", 1e-9L},
                                                              {"u", 1e-6L},
                                                              {"m", 1e-3L},
                                                              {"", 1.0L},
                                                              {"k", 1e3L},
                                                              {"M", 1e6L},
                                                              {"G", 1e9L},
                                                              {"T", 1e12L},
                                                              {"P", 1e15L},
                                                              {"E", 1e18L},
                                                              {"Ki", 1024.0L},
                                                              {"Mi", 1048576.0L},
                                                              {"Gi", 1073741824.0L},
                                                              {"Ti", 1099511627776.0L},
                                                              {"Pi", 1125899906842624.0L},
                                                              {"Ei", 1152921504606846976.0L}};
  // The suffix is what follows the number; an exponent ("e3") is part of strtold's number.
  char* end = nullptr;
  const long double number = std::strtold(q.c_str(), &end);
  split = static_cast<std::size_t>(end - q.c_str());
  const auto it = suffixes.find(q.substr(split));
  if (it == suffixes.end()) {
    return std::nullopt;
  }
  return number * it->second;
}

bool sameJson(const Json& a, const Json& b) {
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) {
      return false;
    }
    for (const auto& [k, v] : a.items()) {
      const auto it = b.find(k);
      if (it == b.end() || !sameJson(v, *it)) {
        return false;
      }
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) {
      return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!sameJson(a[i], b[i])) {
        return false;
      }
    }
    return true;
  }
  return a == b;
}

bool contains(const Json& live, const Json& desired) {
  return firstDifference(live, desired).empty();
}

std::string firstDifference(const Json& live, const Json& desired) {
  Differ differ(1);
  differ.find(live, desired, "", "", "");
  return differ.found.empty() ? std::string() : std::move(differ.found.front());
}

std::vector<std::string> differences(const Json& live, const Json& desired, std::size_t max) {
  Differ differ(max);
  if (max > 0) {
    differ.find(live, desired, "", "", "");
  }
  return std::move(differ.found);
}

bool onlyStatusDiffers(const Json& before, const Json& after) {
  const auto withoutStatus = [](Json o) {
    if (o.is_object()) {
      o.erase("status");
      if (const auto meta = o.find("metadata"); meta != o.end() && meta->is_object()) {
        meta->erase("resourceVersion");
        meta->erase("managedFields");
      }
    }
    return o;
  };
  return sameJson(withoutStatus(before), withoutStatus(after));
}

} // namespace csiop::driverdeployment
