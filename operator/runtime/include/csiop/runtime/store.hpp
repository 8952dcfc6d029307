// The cache of one resource, as client-go's thread-unsafe store with its indexers: the objects
// as kept (cut down by a transform), indexes over them, and the handlers told of every change.
// A Reflector fills it from the API server (list, then watch); a test fills it directly with
// replace() and apply().
//
// Single-threaded: every member on one executor.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <csiop/kube/field_mask.hpp>
#include <csiop/kube/json.hpp>
#include <csiop/kube/resource.hpp>
#include <csiop/kube/watch.hpp>

namespace csiop::runtime {

using kube::Json;

class Store {
public:
  // old: nullptr for an addition; updated: nullptr for a deletion.
  using Handler = std::function<void(const Json* old, const Json* updated)>;
  // Cuts each listed or watched object down before it is stored (as client-go's SetTransform),
  // or returns false to keep it out of the store altogether (an update that turns false removes
  // it, as a deletion). An update whose cut-down object differs only in resourceVersion is
  // stored without notifying anyone.
  using Transform = std::function<bool(Json& object)>;
  // An index, as client-go's Indexers: the index values an object is filed under (none, one or
  // several); byIndex finds the objects filed under a value without a walk over the store.
  using IndexValues = std::function<std::vector<std::string>(const Json& object)>;

  explicit Store(kube::ResourceRef ref);
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Set before the store is filled.
  void onChange(Handler handler) { handlers_.push_back(std::move(handler)); }
  void setTransform(Transform transform) { transform_ = std::move(transform); }
  // What the transform reads (and the store's indexes): the reflector builds only these fields
  // of each listed or watched object (field_mask.hpp). None set: whole objects.
  void setFields(kube::FieldMask fields) { fields_ = std::move(fields); }
  const kube::FieldMask* fields() const { return fields_ ? &*fields_ : nullptr; }
  void addIndex(std::string name, IndexValues values);

  // What the store keeps of an object as listed or watched: apiVersion and kind set (list items
  // lack them), managedFields cut to managerSummary(), then the transform. False: keep none.
  bool prepare(Json& object) const;
  // A list: these prepared objects replace every stored one; the handlers hear each difference
  // (additions, deletions, changes), so nothing is lost across a relist.
  void replace(std::vector<Json> prepared);
  // A watch event (its object as the server sent it; bookmarks and errors change nothing).
  void apply(kube::WatchEvent event);

  // The stored object, or nullptr. ns "" for cluster-scoped resources.
  const Json* get(const std::string& ns, const std::string& name) const;
  std::vector<const Json*> list() const;
  std::size_t size() const { return objects_.size(); }
  // About how much heap the cached objects hold (heapBytesOf each, and the map's nodes): what
  // this cache costs (csiop_cache_heap_bytes). Walks every object.
  std::size_t heapBytes() const;
  std::vector<const Json*> byIndex(const std::string& index, const std::string& value) const;
  std::size_t countByIndex(const std::string& index, const std::string& value) const;
  const kube::ResourceRef& resource() const { return ref_; }

private:
  static std::string keyOf(const Json& object);
  void indexAdd(const std::string& key, const Json& object);
  void indexRemove(const std::string& key, const Json& object);
  const std::set<std::string>* indexed(const std::string& index, const std::string& value) const;
  void notify(const Json* old, const Json* updated);

  kube::ResourceRef ref_;
  std::vector<Handler> handlers_;
  Transform transform_;
  std::optional<kube::FieldMask> fields_;
  std::map<std::string, Json> objects_; // by "namespace/name" or "name"
  struct Index {
    IndexValues values;
    std::map<std::string, std::set<std::string>> keys; // index value -> object keys
  };
  std::map<std::string, Index> indexes_;
};

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

} // namespace csiop::runtime
