// The stores of typed entries, for the kinds cached by the thousand: pods (CachedPod) and CSINodes
// (CachedCSINode), each decoded from the object as its field mask builds it (podFields(),
// csiNodeFields()), compared field by field (an update that changes nothing read, most of a
// kubelet's status updates, is not heard), weighed for csiop_cache_heap_bytes; and the
// children, a score of them per DriverDeployment (CachedChild: head and body, childFields()).
#pragma once

#include <cstddef>
#include <utility>

#include <csiop/controller/cached_child.hpp>
#include <csiop/controller/cached_csi_node.hpp>
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

template <> struct StoreEntry<controller::CachedCSINode> {
  static controller::CachedCSINode decode(Json&& prepared) {
    return controller::decodeCSINode(prepared);
  }
  static bool sameButVersion(const controller::CachedCSINode& a,
                             const controller::CachedCSINode& b) {
    return a == b;
  }
  static std::size_t heapBytes(const controller::CachedCSINode& csiNode);
};

template <> struct StoreEntry<controller::CachedChild> {
  static controller::CachedChild decode(Json&& prepared) {
    return controller::decodeChild(std::move(prepared));
  }
  // Equal heads but for metadata.resourceVersion, and equal bodies.
  static bool sameButVersion(const controller::CachedChild& a, const controller::CachedChild& b);
  static std::size_t heapBytes(const controller::CachedChild& child);
};

extern template class BasicStore<controller::CachedPod>;
extern template class BasicStore<controller::CachedCSINode>;
extern template class BasicStore<controller::CachedChild>;

} // namespace csiop::runtime

namespace csiop::controller {

using PodInformer = runtime::BasicInformer<CachedPod>;
using CSINodeInformer = runtime::BasicInformer<CachedCSINode>;
using ChildInformer = runtime::BasicInformer<CachedChild>;

} // namespace csiop::controller
