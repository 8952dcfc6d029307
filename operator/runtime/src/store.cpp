#include <csiop/runtime/store.hpp>

#include <algorithm>
#include <utility>

#include <csiop/runtime/store_impl.hpp>

namespace csiop::runtime {
namespace {

std::string metadataString(const Json& object, const char* field) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return {};
  }
  const auto value = meta->find(field);
  return value != meta->end() && value->is_string() ? value->get<std::string>() : std::string();
}

// Whether two versions of an object differ in more than their resourceVersion: with a
// transform, most updates (a kubelet's status heartbeat, a node's) change only what the
// transform cut away, and the handlers need not hear of them.
// Whether two objects have the same members, `except` aside (either may lack it).
bool sameMembersExcept(const Json& a, const Json& b, const char* except) {
  const auto counted = [except](const Json& o) { return o.size() - (o.contains(except) ? 1 : 0); };
  if (counted(a) != counted(b)) {
    return false;
  }
  for (auto it = a.begin(); it != a.end(); ++it) {
    if (it.key() == except) {
      continue;
    }
    const auto twin = b.find(it.key());
    if (twin == b.end() || *it != *twin) {
      return false;
    }
  }
  return true;
}

// Compared member by member, without copies: a DaemonSet's status changes many times a minute.
bool sameMembersButVersion(const Json& a, const Json& b) {
  if (!a.is_object() || !b.is_object()) {
    return a == b;
  }
  if (!sameMembersExcept(a, b, "metadata")) {
    return false;
  }
  const auto ma = a.find("metadata");
  const auto mb = b.find("metadata");
  if (ma == a.end() || mb == b.end()) {
    return ma == a.end() && mb == b.end();
  }
  if (!ma->is_object() || !mb->is_object()) {
    return *ma == *mb;
  }
  return sameMembersExcept(*ma, *mb, "resourceVersion");
}

} // namespace

std::size_t heapChunk(std::size_t bytes) {
  return std::max<std::size_t>(32, (bytes + 8 + 15) / 16 * 16);
}

std::size_t heapBytesOf(const std::string& s) {
  return s.capacity() > 15 ? heapChunk(s.capacity() + 1) : 0;
}

std::size_t heapBytesOf(const Json& value) {
  switch (value.type()) {
  case Json::value_t::object: {
    const auto& members = value.get_ref<const Json::object_t&>();
    std::size_t bytes =
        heapChunk(sizeof(Json::object_t)) +
        (members.capacity() > 0 ? heapChunk(members.capacity() * sizeof(Json::object_t::value_type))
                                : 0);
    for (const auto& [key, member] : members) {
      bytes += heapBytesOf(key) + heapBytesOf(member);
    }
    return bytes;
  }
  case Json::value_t::array: {
    const auto& items = value.get_ref<const Json::array_t&>();
    std::size_t bytes = heapChunk(sizeof(Json::array_t)) +
                        (items.capacity() > 0 ? heapChunk(items.capacity() * sizeof(Json)) : 0);
    for (const Json& item : items) {
      bytes += heapBytesOf(item);
    }
    return bytes;
  }
  case Json::value_t::string: {
    const auto& s = value.get_ref<const Json::string_t&>();
    return heapChunk(sizeof(Json::string_t)) + heapBytesOf(s);
  }
  case Json::value_t::binary:
    return heapChunk(sizeof(Json::binary_t)) + heapChunk(value.get_binary().capacity());
  default:
    return 0;
  }
}

Json managerSummary(const Json& managedFields) {
  Json out = Json::array();
  if (!managedFields.is_array()) {
    return out;
  }
  for (const Json& entry : managedFields) {
    Json kept = Json::object();
    if (entry.is_object()) {
      for (const char* key : {"manager", "operation", "subresource"}) {
        if (const auto value = entry.find(key); value != entry.end() && value->is_string()) {
          kept[key] = *value;
        }
      }
    }
    out.push_back(std::move(kept));
  }
  return out;
}

std::string storeKeyOf(const Json& object) {
  const std::string ns = metadataString(object, "namespace");
  const std::string name = metadataString(object, "name");
  return ns.empty() ? name : ns + "/" + name;
}

namespace store_detail {

std::string resourceVersionOf(const Json& object) {
  return metadataString(object, "resourceVersion");
}

} // namespace store_detail

bool StoreEntry<Json>::sameButVersion(const Json& a, const Json& b) {
  return sameMembersButVersion(a, b);
}

std::size_t StoreEntry<Json>::heapBytes(const Json& object) {
  return heapBytesOf(object);
}

template class BasicStore<Json>;

} // namespace csiop::runtime
