// BasicStore's members, included where a store of an entry type is instantiated (store.cpp for
// Json; the file of each typed entry for its own): `template class BasicStore<Entry>;`.
#pragma once

#include <stdexcept>
#include <utility>

#include <csiop/runtime/store.hpp>

namespace csiop::runtime {
namespace store_detail {

// metadata.resourceVersion, "" if none.
std::string resourceVersionOf(const Json& object);

} // namespace store_detail

template <class Entry> void BasicStore<Entry>::addIndex(std::string name, IndexValues values) {
  indexes_[std::move(name)] = Index{std::move(values), {}};
}

template <class Entry>
const Entry* BasicStore<Entry>::get(const std::string& ns, const std::string& name) const {
  const auto it = objects_.find(ns.empty() ? name : ns + "/" + name);
  return it == objects_.end() ? nullptr : &it->second.entry;
}

template <class Entry> std::vector<const Entry*> BasicStore<Entry>::list() const {
  std::vector<const Entry*> out;
  out.reserve(objects_.size());
  for (const auto& [k, v] : objects_) {
    out.push_back(&v.entry);
  }
  return out;
}

template <class Entry> std::size_t BasicStore<Entry>::heapBytes() const {
  // A std::map node: three pointers and a colour, the key and the value.
  constexpr std::size_t kNode = 32 + sizeof(std::string) + sizeof(Stored);
  // A std::set node of an index: the same, with a key only.
  constexpr std::size_t kIndexNode = 32 + sizeof(std::string);
  std::size_t bytes = 0;
  for (const auto& [key, stored] : objects_) {
    bytes += heapChunk(kNode) + heapBytesOf(key) + heapBytesOf(stored.resourceVersion) +
             StoreEntry<Entry>::heapBytes(stored.entry);
  }
  for (const auto& [name, index] : indexes_) {
    for (const auto& [value, keys] : index.keys) {
      bytes += heapChunk(kIndexNode) + heapBytesOf(value);
      for (const std::string& key : keys) {
        bytes += heapChunk(kIndexNode) + heapBytesOf(key);
      }
    }
  }
  return bytes;
}

template <class Entry>
const std::set<std::string>* BasicStore<Entry>::indexed(const std::string& index,
                                                        const std::string& value) const {
  const auto i = indexes_.find(index);
  if (i == indexes_.end()) {
    throw std::logic_error("the store of " + ref_.resource + " has no index " + index);
  }
  const auto v = i->second.keys.find(value);
  return v == i->second.keys.end() ? nullptr : &v->second;
}

template <class Entry>
std::vector<const Entry*> BasicStore<Entry>::byIndex(const std::string& index,
                                                     const std::string& value) const {
  std::vector<const Entry*> out;
  if (const auto* keys = indexed(index, value)) {
    out.reserve(keys->size());
    for (const auto& key : *keys) {
      out.push_back(&objects_.at(key).entry);
    }
  }
  return out;
}

template <class Entry>
std::size_t BasicStore<Entry>::countByIndex(const std::string& index,
                                            const std::string& value) const {
  const auto* keys = indexed(index, value);
  return keys == nullptr ? 0 : keys->size();
}

template <class Entry>
void BasicStore<Entry>::indexAdd(const std::string& key, const Entry& object) {
  for (auto& [name, index] : indexes_) {
    fileUnder(index, key, index.values(object));
  }
}

template <class Entry>
void BasicStore<Entry>::indexRemove(const std::string& key, const Entry& object) {
  for (auto& [name, index] : indexes_) {
    unfileFrom(index, key, index.values(object));
  }
}

template <class Entry>
void BasicStore<Entry>::indexUpdate(const std::string& key, const Entry& old,
                                    const Entry& updated) {
  for (auto& [name, index] : indexes_) {
    std::vector<std::string> before = index.values(old);
    std::vector<std::string> after = index.values(updated);
    if (before != after) { // most updates (a pod's status) leave every index value as it was
      unfileFrom(index, key, before);
      fileUnder(index, key, std::move(after));
    }
  }
}

template <class Entry>
void BasicStore<Entry>::fileUnder(Index& index, const std::string& key,
                                  std::vector<std::string> values) {
  for (auto& value : values) {
    index.keys[std::move(value)].insert(key);
  }
}

template <class Entry>
void BasicStore<Entry>::unfileFrom(Index& index, const std::string& key,
                                   const std::vector<std::string>& values) {
  for (const auto& value : values) {
    if (const auto v = index.keys.find(value); v != index.keys.end()) {
      v->second.erase(key);
      if (v->second.empty()) {
        index.keys.erase(v);
      }
    }
  }
}

template <class Entry> void BasicStore<Entry>::notify(const Entry* old, const Entry* updated) {
  for (const auto& h : handlers_) {
    h(old, updated);
  }
}

template <class Entry> bool BasicStore<Entry>::prepare(Json& object) const {
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

template <class Entry> void BasicStore<Entry>::replace(std::vector<Json> prepared) {
  std::map<std::string, Stored> fresh;
  for (auto& item : prepared) {
    std::string key = storeKeyOf(item);
    std::string version = store_detail::resourceVersionOf(item);
    fresh.emplace(std::move(key),
                  Stored{std::move(version), StoreEntry<Entry>::decode(std::move(item))});
  }
  prepared.clear();
  std::map<std::string, Stored> old = std::exchange(objects_, std::move(fresh));
  for (auto& [name, index] : indexes_) {
    index.keys.clear();
  }
  for (const auto& [key, stored] : objects_) {
    indexAdd(key, stored.entry);
  }
  for (const auto& [key, stored] : old) {
    if (!objects_.contains(key)) {
      notify(&stored.entry, nullptr);
    }
  }
  for (const auto& [key, stored] : objects_) {
    const auto it = old.find(key);
    if (it == old.end()) {
      notify(nullptr, &stored.entry);
    } else if (it->second.resourceVersion != stored.resourceVersion &&
               !(cutDown() && StoreEntry<Entry>::sameButVersion(it->second.entry, stored.entry))) {
      notify(&it->second.entry, &stored.entry);
    }
  }
}

template <class Entry> void BasicStore<Entry>::apply(kube::WatchEvent event) {
  using T = kube::WatchEventType;
  if (event.type == T::Bookmark || event.type == T::Error) {
    return;
  }
  Json object = std::move(event.object);
  const std::string key = storeKeyOf(object);
  const auto it = objects_.find(key);
  const bool kept = prepare(object);
  if (event.type == T::Deleted || !kept) {
    if (it != objects_.end()) {
      const Stored old = std::move(it->second);
      objects_.erase(it);
      indexRemove(key, old.entry);
      notify(&old.entry, nullptr);
    }
    return;
  }
  Stored fresh{store_detail::resourceVersionOf(object),
               StoreEntry<Entry>::decode(std::move(object))};
  if (it == objects_.end()) {
    const auto [inserted, ok] = objects_.emplace(key, std::move(fresh));
    indexAdd(key, inserted->second.entry);
    notify(nullptr, &inserted->second.entry);
  } else if (cutDown() && StoreEntry<Entry>::sameButVersion(it->second.entry, fresh.entry)) {
    it->second = std::move(fresh); // nothing the handlers can see changed
  } else {
    const Stored old = std::exchange(it->second, std::move(fresh));
    indexUpdate(key, old.entry, it->second.entry);
    notify(&old.entry, &it->second.entry);
  }
}

} // namespace csiop::runtime
