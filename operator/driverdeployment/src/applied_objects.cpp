#include <csiop/driverdeployment/applied_objects.hpp>

#include <functional>

#include <csiop/api/annotations.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/object_key.hpp>

namespace csiop::driverdeployment {
namespace {

using api::Json;
using api::metadataField;

std::string hashOf(const Json& desired) {
  return std::to_string(std::hash<std::string>{}(desired.dump()));
}

// The DriverDeployment a child is made for: its owner label.
std::string ownerOf(const Json& desired) {
  return api::stringField(api::member(api::member(desired, "metadata"), "labels"),
                          api::kOwnerLabel);
}

std::int64_t generationOf(const Json& object) {
  const Json generation = object.value("metadata", Json::object()).value("generation", Json(0));
  return generation.is_number_integer() ? generation.get<std::int64_t>() : 0;
}

} // namespace

void AppliedObjects::remember(const Json& desired, const Json& result,
                              std::vector<std::string> warnings) {
  if (warnings.size() > kWarningsPerChild) {
    warnings.resize(kWarningsPerChild);
  }
  record(desired, result, std::nullopt, std::move(warnings));
}

void AppliedObjects::verified(const Json& desired, const CachedChild& live) {
  std::vector<std::string> warnings;
  if (const auto it = applied_.find(keyOf(desired).str());
      it != applied_.end() && it->second.desiredHash == hashOf(desired)) {
    warnings = it->second.warnings;
  }
  record(desired, live.head, live.content, std::move(warnings));
}

void AppliedObjects::record(const Json& desired, const Json& object,
                            std::optional<std::uint64_t> content,
                            std::vector<std::string> warnings) {
  applied_[keyOf(desired).str()] = {ownerOf(desired),
                                    hashOf(desired),
                                    metadataField(object, "resourceVersion"),
                                    metadataField(object, "uid"),
                                    generationOf(object),
                                    content,
                                    std::move(warnings)};
}

std::vector<std::string> AppliedObjects::warningsOf(const std::string& owner) const {
  std::vector<std::string> out;
  std::size_t more = 0;
  for (const auto& [key, applied] : applied_) {
    if (applied.owner != owner) {
      continue;
    }
    for (const std::string& text : applied.warnings) {
      if (out.size() < kWarningsListed) {
        out.push_back(key + ": " + text);
      } else {
        ++more;
      }
    }
  }
  if (more > 0) {
    out.push_back("and " + std::to_string(more) + " more");
  }
  return out;
}

void AppliedObjects::forget(const std::string& key) {
  applied_.erase(key);
}

void AppliedObjects::forgetOwner(const std::string& owner) {
  std::erase_if(applied_, [&](const auto& entry) { return entry.second.owner == owner; });
}

bool AppliedObjects::unchangedSinceApplied(const Json& desired, const CachedChild& live) {
  const auto it = applied_.find(keyOf(desired).str());
  if (it == applied_.end() || it->second.desiredHash != hashOf(desired)) {
    return false;
  }
  Applied& a = it->second;
  if (a.resourceVersion == metadataField(live.head, "resourceVersion")) {
    a.content = live.content;
    return true;
  }
  return a.content && *a.content == live.content;
}

bool AppliedObjects::changedSinceApplied(const Json& desired) const {
  const auto it = applied_.find(keyOf(desired).str());
  return it != applied_.end() && it->second.desiredHash != hashOf(desired);
}

bool AppliedObjects::behindLastApply(const Json& live) const {
  const auto it = applied_.find(keyOf(live).str());
  const Json generation = live.value("metadata", Json::object()).value("generation", Json(0));
  return it != applied_.end() && it->second.uid == metadataField(live, "uid") &&
         generation.is_number_integer() && it->second.generation > generation.get<std::int64_t>();
}

} // namespace csiop::driverdeployment
