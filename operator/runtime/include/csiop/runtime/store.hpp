// The cache of one resource, as client-go's thread-unsafe store with its indexers: the objects
// as kept (cut down by a transform), indexes over them, and the handlers told of every change.
// A Reflector fills it from the API server (list, then watch); a test fills it directly with
// replace() and apply().
//
// What it keeps of each object is its Entry: the JSON tree itself (Store), or a typed entry
// decoded from it (a pod as a struct of the dozen fields read: controller/cached_pod.hpp), for
// the kinds cached by the thousand. StoreEntry<Entry> says how to decode, compare and weigh one.
//
// Single-threaded: every member on one executor.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <csiop/kube/field_mask.hpp>
#include <csiop/kube/json.hpp>
#include <csiop/kube/resource.hpp>
#include <csiop/kube/watch.hpp>
#include <csiop/runtime/list_watch_target.hpp>

namespace csiop::runtime {

using kube::Json;

// How a store keeps an Entry; specialised for each entry type (Json below), with:
//   static Entry decode(Json&& prepared);              the entry of a prepared object
//   static bool sameButVersion(const Entry&, const Entry&);  equal but for resourceVersion
//   static std::size_t heapBytes(const Entry&);        about how much heap one holds
template <class Entry> struct StoreEntry;

template <class Entry> class BasicStore : public ListWatchTarget {
public:
  // old: nullptr for an addition; updated: nullptr for a deletion.
  using Handler = std::function<void(const Entry* old, const Entry* updated)>;
  // Cuts each listed or watched object down before it is stored (as client-go's SetTransform),
  // or returns false to keep it out of the store altogether (an update that turns false removes
  // it, as a deletion). An update whose cut-down object differs only in resourceVersion is
  // stored without notifying anyone (a typed entry is always a cut-down object).
  using Transform = std::function<bool(Json& object)>;
  // An index, as client-go's Indexers: the index values an object is filed under (none, one or
  // several); byIndex finds the objects filed under a value without a walk over the store.
  using IndexValues = std::function<std::vector<std::string>(const Entry& object)>;

  explicit BasicStore(kube::ResourceRef ref) : ref_(std::move(ref)) {}
  BasicStore(const BasicStore&) = delete;
  BasicStore& operator=(const BasicStore&) = delete;

  // Set before the store is filled.
  void onChange(Handler handler) { handlers_.push_back(std::move(handler)); }
  void setTransform(Transform transform) { transform_ = std::move(transform); }
  // What the transform reads (and the store's indexes): the reflector builds only these fields
  // of each listed or watched object (field_mask.hpp). None set: whole objects.
  void setFields(kube::FieldMask fields) { fields_ = std::move(fields); }
  const kube::FieldMask* fields() const final { return fields_ ? &*fields_ : nullptr; }
  void addIndex(std::string name, IndexValues values);

  // What the store keeps of an object as listed or watched: apiVersion and kind set (list items
  // lack them), managedFields cut to managerSummary(), then the transform. False: keep none.
  bool prepare(Json& object) const final;
  // A list: these prepared objects replace every stored one; the handlers hear each difference
  // (additions, deletions, changes), so nothing is lost across a relist.
  void replace(std::vector<Json> prepared) final;
  // A watch event (its object as the server sent it; bookmarks and errors change nothing).
  void apply(kube::WatchEvent event) final;

  // The stored object, or nullptr. ns "" for cluster-scoped resources.
  const Entry* get(const std::string& ns, const std::string& name) const;
  std::vector<const Entry*> list() const;
  std::size_t size() const { return objects_.size(); }
  // Forgets every object without telling the handlers: a cache that is no longer kept
  // (on_demand_cache.hpp). Its next list tells them of each object as an addition.
  void clear() {
    objects_.clear();
    for (auto& [name, index] : indexes_) {
      index.keys.clear();
    }
  }
  // About how much heap the cached objects hold (StoreEntry::heapBytes of each, the map's nodes
  // and the indexes' entries): what this cache costs (csiop_cache_heap_bytes). Walks every
  // object.
  std::size_t heapBytes() const;
  std::vector<const Entry*> byIndex(const std::string& index, const std::string& value) const;
  std::size_t countByIndex(const std::string& index, const std::string& value) const;
  const kube::ResourceRef& resource() const final { return ref_; }

private:
  // Whether what is stored is cut down, so that an update may change nothing stored.
  bool cutDown() const { return transform_ || !std::is_same_v<Entry, Json>; }
  void indexAdd(const std::string& key, const Entry& object);
  void indexRemove(const std::string& key, const Entry& object);
  void indexUpdate(const std::string& key, const Entry& old, const Entry& updated);
  const std::set<std::string>* indexed(const std::string& index, const std::string& value) const;
  void notify(const Entry* old, const Entry* updated);

  kube::ResourceRef ref_;
  std::vector<Handler> handlers_;
  Transform transform_;
  std::optional<kube::FieldMask> fields_;
  struct Stored {
    std::string resourceVersion;
    Entry entry;
  };
  std::map<std::string, Stored> objects_; // by "namespace/name" or "name"
  struct Index {
    IndexValues values;
    std::map<std::string, std::set<std::string>> keys; // index value -> object keys
  };
  std::map<std::string, Index> indexes_;

  static void fileUnder(Index& index, const std::string& key, std::vector<std::string> values);
  static void unfileFrom(Index& index, const std::string& key,
                         const std::vector<std::string>& values);
};

// The store of JSON trees: every cache but the high-count kinds with typed entries.
using Store = BasicStore<Json>;

template <> struct StoreEntry<Json> {
  static Json decode(Json&& prepared) { return std::move(prepared); }
  // Member by member, without copies: a DaemonSet's status changes many times a minute.
  static bool sameButVersion(const Json& a, const Json& b);
  static std::size_t heapBytes(const Json& object);
};

extern template class BasicStore<Json>;

// "namespace/name", or "name" for a cluster-scoped object: the key a store files it under.
std::string storeKeyOf(const Json& object);

// metadata.managedFields cut to who manages each entry and how (manager, operation,
// subresource): what a store keeps of it. The field sets (fieldsV1) are often a third of an
// object and never read; the names are what an operator needs to tell its own objects and to
// take over what it created. As client-go's TransformStripManagedFields, but keeping the names.
Json managerSummary(const Json& managedFields);

// About how much heap a parsed object holds: every object, array and string nlohmann allocates
// (a string longer than the small-string buffer twice: the std::string and its characters), each
// rounded up to the allocator's chunk (glibc: 8 bytes of header, 16-byte multiples, at least
// 32). An estimate of the allocator's view, not a measurement.
std::size_t heapBytesOf(const Json& value);
// The same estimate's parts, for typed entries: the chunk a request of `bytes` takes, and the
// characters of a std::string beyond its small-string buffer (0 if within it).
std::size_t heapChunk(std::size_t bytes);
std::size_t heapBytesOf(const std::string& s);

} // namespace csiop::runtime
