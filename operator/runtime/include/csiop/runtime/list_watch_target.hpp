// What a Reflector fills: the resource it lists and watches, the fields to build of each object,
// and where the lists and events go. Every store implements it, whatever it keeps of an object
// (a JSON tree, or a typed entry: BasicStore<Entry>).
#pragma once

#include <vector>

#include <csiop/kube/field_mask.hpp>
#include <csiop/kube/json.hpp>
#include <csiop/kube/resource.hpp>
#include <csiop/kube/watch.hpp>

namespace csiop::runtime {

class ListWatchTarget {
public:
  virtual ~ListWatchTarget() = default;

  virtual const kube::ResourceRef& resource() const = 0;
  // The fields to build of each listed or watched object; nullptr: whole objects.
  virtual const kube::FieldMask* fields() const = 0;
  // A listed object as it arrives (page by page): cut down in place; false: keep none of it.
  virtual bool prepare(kube::Json& object) const = 0;
  // A whole list of prepared objects: they replace everything stored.
  virtual void replace(std::vector<kube::Json> prepared) = 0;
  // One watch event, its object as the server sent it.
  virtual void apply(kube::WatchEvent event) = 0;
};

} // namespace csiop::runtime
