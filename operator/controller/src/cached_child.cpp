#include <csiop/controller/cached_child.hpp>

#include <functional>
#include <string_view>
#include <vector>

#include <csiop/kube/field_mask.hpp>

namespace csiop::controller {
namespace {

using api::Json;

bool inHead(std::string_view key) {
  return key == "apiVersion" || key == "kind" || key == "metadata" || key == "status";
}

// boost::hash_combine's mix, on 64 bits.
void mix(std::uint64_t& seed, std::string_view text) {
  seed ^= std::hash<std::string_view>{}(text) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

std::uint64_t contentOf(const Json& metadata, const std::string& body) {
  std::uint64_t seed = 0;
  mix(seed, body);
  if (metadata.is_object()) {
    for (const auto& [key, value] : metadata.items()) {
      if (key != "resourceVersion" && key != "managedFields") {
        mix(seed, key);
        mix(seed, value.dump());
      }
    }
  }
  return seed;
}

// spec.replicas of a spec kept as text, without building the rest of it.
Json replicasOf(std::string_view specText) {
  static const kube::FieldMask replicas = kube::FieldMask().keep({"replicas"});
  const Json spec = kube::parseOrDiscard(specText, &replicas);
  return spec.is_object() ? spec.value("replicas", Json()) : Json();
}

// {member,member,...}
std::string joinedAsObject(const std::vector<std::string>& members) {
  std::size_t size = 2;
  for (const std::string& m : members) {
    size += m.size() + 1;
  }
  std::string out;
  out.reserve(size);
  out.push_back('{');
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i > 0) {
      out.push_back(',');
    }
    out.append(members[i]);
  }
  out.push_back('}');
  return out;
}

} // namespace

CachedChild decodeChild(Json&& prepared) {
  CachedChild out;
  out.head = Json::object();
  // The body's members, as `"key":text`, joined at the end.
  std::vector<std::string> members;
  Json replicas;
  if (prepared.is_object()) {
    for (auto& [key, value] : prepared.items()) {
      if (inHead(key)) {
        out.head[key] = std::move(value);
        continue;
      }
      std::string member = Json(key).dump();
      member.push_back(':');
      if (const auto text = kube::textOf(value)) {
        member.append(text->data(), text->size());
        if (key == "spec") {
          replicas = replicasOf(*text);
        }
      } else {
        member.append(value.dump());
        if (key == "spec" && value.is_object()) {
          replicas = value.value("replicas", Json());
        }
      }
      members.push_back(std::move(member));
    }
  }
  out.body = joinedAsObject(members);
  if (!replicas.is_null()) {
    out.head["spec"] = {{"replicas", std::move(replicas)}};
  }
  static const Json none;
  const auto metadata = out.head.find("metadata");
  out.content = contentOf(metadata == out.head.end() ? none : *metadata, out.body);
  return out;
}

Json CachedChild::whole() const {
  // In the order the API server writes members: type, metadata, the rest, status.
  Json out = Json::object();
  for (const char* key : {"apiVersion", "kind", "metadata"}) {
    if (const auto it = head.find(key); it != head.end()) {
      out[key] = *it;
    }
  }
  Json rest = Json::parse(body);
  for (auto& [key, value] : rest.items()) {
    out[key] = std::move(value);
  }
  if (const auto it = head.find("status"); it != head.end()) {
    out["status"] = *it;
  }
  return out;
}

} // namespace csiop::controller
