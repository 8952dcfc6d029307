#include <csiop/driverdeployment/cached_child.hpp>

#include <functional>
#include <string_view>
#include <vector>

#include <csiop/kube/field_mask.hpp>

namespace csiop::driverdeployment {
namespace {

using api::Json;

bool inHead(std::string_view key) {
  return key == "apiVersion" || key == "kind" || key == "status";
}

// The metadata every pass reads (keyOf, ownedBy, madeFor, managed; the status:
// generation; deletions: uid), besides the operator's own labels and annotations.
bool readByEveryPass(std::string_view key) {
  return key == "name" || key == "namespace" || key == "uid" || key == "generation" ||
         key == "deletionTimestamp" || key == "ownerReferences";
}

bool operatorsKey(std::string_view key) {
  return key.starts_with("csiop.dev/");
}

// The operator's own members of a map of labels or annotations.
Json operatorsMembers(const Json& map) {
  Json out = Json::object();
  if (map.is_object()) {
    for (const auto& [key, value] : map.items()) {
      if (operatorsKey(key)) {
        out[key] = value;
      }
    }
  }
  return out;
}

// metadata's head: what every pass reads of it, with resourceVersion and managedFields moved out
// of `metadata` (which leaves the rest for the body).
Json metadataHead(Json& metadata) {
  Json head = Json::object();
  if (!metadata.is_object()) {
    return head;
  }
  for (const char* key : {"resourceVersion", "managedFields"}) {
    if (const auto it = metadata.find(key); it != metadata.end()) {
      head[key] = std::move(*it);
      metadata.erase(it);
    }
  }
  for (const auto& [key, value] : metadata.items()) {
    if (readByEveryPass(key)) {
      head[key] = value;
    } else if (key == "labels" || key == "annotations") {
      if (Json own = operatorsMembers(value); !own.empty()) {
        head[key] = std::move(own);
      }
    }
  }
  return head;
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

// spec.replicas of a spec kept as text, without building the rest of it.
Json replicasOf(std::string_view specText) {
  static const kube::FieldMask replicas = kube::FieldMask().keep({"replicas"});
  const Json spec = kube::parseOrDiscard(specText, &replicas);
  return spec.is_object() ? spec.value("replicas", Json()) : Json();
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
      if (key == "metadata") {
        out.head[key] = metadataHead(value);
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
  out.content = std::hash<std::string>{}(out.body);
  return out;
}

Json CachedChild::whole() const {
  // In the order the API server writes members: type, metadata, the rest, status.
  Json out = Json::object();
  for (const char* key : {"apiVersion", "kind"}) {
    if (const auto it = head.find(key); it != head.end()) {
      out[key] = *it;
    }
  }
  Json rest = Json::parse(body);
  for (auto& [key, value] : rest.items()) {
    out[key] = std::move(value);
  }
  if (const auto meta = head.find("metadata"); meta != head.end() && out.contains("metadata")) {
    for (const char* key : {"resourceVersion", "managedFields"}) {
      if (const auto it = meta->find(key); it != meta->end()) {
        out["metadata"][key] = *it;
      }
    }
  }
  if (const auto it = head.find("status"); it != head.end()) {
    out["status"] = *it;
  }
  return out;
}

} // namespace csiop::driverdeployment
