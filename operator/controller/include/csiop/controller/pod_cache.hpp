// The pod cache's store: typed entries (CachedPod), decoded from each pod as its field mask
// builds it (podFields()), compared field by field (an update that changes nothing read, most of
// a kubelet's status updates, is not heard), weighed for csiop_cache_heap_bytes.
#pragma once

#include <cstddef>

#include <csiop/controller/cached_pod.hpp>
#include <csiop/runtime/informer.hpp>
#include <csiop/runtime/store.hpp>

namespace csiop::runtime {

template <> struct StoreEntry<controller::CachedPod> {
  static controller::CachedPod decode(Json&& prepared) { return controller::decodePod(prepared); }
  static bool sameButVersion(const controller::CachedPod& a, const controller::CachedPod& b) {
    return a == b; // the resourceVersion is kept beside the entry, not in it
  }
  static std::size_t heapBytes(const controller::CachedPod& pod);
};

extern template class BasicStore<controller::CachedPod>;

} // namespace csiop::runtime

namespace csiop::controller {

using PodInformer = runtime::BasicInformer<CachedPod>;

} // namespace csiop::controller
