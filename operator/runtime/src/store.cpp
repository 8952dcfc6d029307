#include <csiop/runtime/store.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

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
bool sameButVersion(const Json& a, const Json& b) {
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

namespace {

std::size_t chunk(std::size_t bytes) {
  return std::max<std::size_t>(32, (bytes + 8 + 15) / 16 * 16);
}

std::size_t stringHeap(const std::string& s) {
  return s.capacity() > 15 ? chunk(s.capacity() + 1) : 0;
}

} // namespace

std::size_t heapBytesOf(const Json& value) {
  switch (value.type()) {
  case Json::value_t::object: {
    const auto& members = value.get_ref<const Json::object_t&>();
    std::size_t bytes =
        chunk(sizeof(Json::object_t)) +
        (members.capacity() > 0 ? chunk(members.capacity() * sizeof(Json::object_t::value_type))
                                : 0);
    for (const auto& [key, member] : members) {
      bytes += stringHeap(key) + heapBytesOf(member);
    }
    return bytes;
  }
  case Json::value_t::array: {
    const auto& items = value.get_ref<const Json::array_t&>();
    std::size_t bytes = chunk(sizeof(Json::array_t)) +
                        (items.capacity() > 0 ? chunk(items.capacity() * sizeof(Json)) : 0);
    for (const Json& item : items) {
      bytes += heapBytesOf(item);
    }
    return bytes;
  }
  case Json::value_t::string: {
    const auto& s = value.get_ref<const Json::string_t&>();
    return chunk(sizeof(Json::string_t)) + stringHeap(s);
  }
  case Json::value_t::binary:
    return chunk(sizeof(Json::binary_t)) + chunk(value.get_binary().capacity());
  default:
    return 0;
  }
}

std::size_t Store::heapBytes() const {
  // A std::map node: three pointers and a colour, the key and the value.
  constexpr std::size_t kNode = 32 + sizeof(std::string) + sizeof(Json);
  std::size_t bytes = 0;
  for (const auto& [key, object] : objects_) {
    bytes += chunk(kNode) + stringHeap(key) + heapBytesOf(object);
  }
  return bytes;
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

Store::Store(kube::ResourceRef ref) : ref_(std::move(ref)) {}

std::string Store::keyOf(const Json& object) {
  const std::string ns = metadataString(object, "namespace");
  const std::string name = metadataString(object, "name");
  return ns.empty() ? name : ns + "/" + name;
}

const Json* Store::get(const std::string& ns, const std::string& name) const {
  const auto it = objects_.find(ns.empty() ? name : ns + "/" + name);
  return it == objects_.end() ? nullptr : &it->second;
}

std::vector<const Json*> Store::list() const {
  std::vector<const Json*> out;
  out.reserve(objects_.size());
  for (const auto& [k, v] : objects_) {
    out.push_back(&v);
  }
  return out;
}

void Store::addIndex(std::string name, IndexValues values) {
  indexes_[std::move(name)] = Index{std::move(values), {}};
}

const std::set<std::string>* Store::indexed(const std::string& index,
                                            const std::string& value) const {
  const auto i = indexes_.find(index);
  if (i == indexes_.end()) {
    throw std::logic_error("the store of " + ref_.resource + " has no index " + index);
  }
  const auto v = i->second.keys.find(value);
  return v == i->second.keys.end() ? nullptr : &v->second;
}

std::vector<const Json*> Store::byIndex(const std::string& index, const std::string& value) const {
  std::vector<const Json*> out;
  if (const auto* keys = indexed(index, value)) {
    out.reserve(keys->size());
    for (const auto& key : *keys) {
      out.push_back(&objects_.at(key));
    }
  }
  return out;
}

std::size_t Store::countByIndex(const std::string& index, const std::string& value) const {
  const auto* keys = indexed(index, value);
  return keys == nullptr ? 0 : keys->size();
}

void Store::indexAdd(const std::string& key, const Json& object) {
  for (auto& [name, index] : indexes_) {
    for (auto& value : index.values(object)) {
      index.keys[std::move(value)].insert(key);
    }
  }
}

void Store::indexRemove(const std::string& key, const Json& object) {
  for (auto& [name, index] : indexes_) {
    for (const auto& value : index.values(object)) {
      if (const auto v = index.keys.find(value); v != index.keys.end()) {
        v->second.erase(key);
        if (v->second.empty()) {
          index.keys.erase(v);
        }
      }
    }
  }
}

void Store::notify(const Json* old, const Json* updated) {
  for (const auto& h : handlers_) {
    h(old, updated);
  }
}

bool Store::prepare(Json& object) const {
  object["apiVersion"] = ref_.apiVersion();
  object["kind"] = ref_.kind;
  // Updates that omit managedFields leave it unchanged.
  if (const auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
    if (const auto fields = meta->find("managedFields"); fields != meta->end()) {
      *fields = managerSummary(*fields);
    }
  }
  return !transform_ || transform_(object);
}

void Store::replace(std::vector<Json> prepared) {
  std::map<std::string, Json> fresh;
  for (auto& item : prepared) {
    std::string key = keyOf(item);
    fresh.emplace(std::move(key), std::move(item));
  }
  std::map<std::string, Json> old = std::exchange(objects_, std::move(fresh));
  for (auto& [name, index] : indexes_) {
    index.keys.clear();
  }
  for (const auto& [key, object] : objects_) {
    indexAdd(key, object);
  }
  for (const auto& [key, object] : old) {
    if (!objects_.contains(key)) {
      notify(&object, nullptr);
    }
  }
  for (const auto& [key, object] : objects_) {
    const auto it = old.find(key);
    if (it == old.end()) {
      notify(nullptr, &object);
    } else if (metadataString(it->second, "resourceVersion") !=
                   metadataString(object, "resourceVersion") &&
               !(transform_ && sameButVersion(it->second, object))) {
      notify(&it->second, &object);
    }
  }
}

void Store::apply(kube::WatchEvent event) {
  using T = kube::WatchEventType;
  if (event.type == T::Bookmark || event.type == T::Error) {
    return;
  }
  Json object = std::move(event.object);
  const std::string key = keyOf(object);
  const auto it = objects_.find(key);
  const bool kept = prepare(object);
  if (event.type == T::Deleted || !kept) {
    if (it != objects_.end()) {
      const Json old = std::move(it->second);
      objects_.erase(it);
      indexRemove(key, old);
      notify(&old, nullptr);
    }
    return;
  }
  if (it == objects_.end()) {
    const auto [inserted, ok] = objects_.emplace(key, std::move(object));
    indexAdd(key, inserted->second);
    notify(nullptr, &inserted->second);
  } else if (transform_ && sameButVersion(it->second, object)) {
    it->second = std::move(object); // nothing the handlers can see changed
  } else {
    const Json old = std::exchange(it->second, std::move(object));
    indexRemove(key, old);
    indexAdd(key, it->second);
    notify(&old, &it->second);
  }
}

} // namespace csiop::runtime
