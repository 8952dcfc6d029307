// The stores of typed entries, for the kinds cached by the thousand: pods (CachedPod) and CSINodes
// (CachedCSINode), each decoded from the object as its field mask builds it (podFields(),
// csiNodeFields()), compared field by field (an update that changes nothing read, most of a
// kubelet's status updates, is not heard), weighed for csiop_cache_heap_bytes; and the
// children, a score of them per DriverDeployment (CachedChild: head and body, childFields()).
#pragma once

#include <cstddef>
#include <utility>

#include <csiop/driverdeployment/cached_child.hpp>
#include <csiop/driverdeployment/cached_csi_node.hpp>
#include <csiop/driverdeployment/cached_pod.hpp>
#include <csiop/runtime/informer.hpp>
#include <csiop/runtime/store.hpp>

namespace csiop::runtime {

template <> struct StoreEntry<driverdeployment::CachedPod> {
  static driverdeployment::CachedPod decode(Json&& prepared) {
    return driverdeployment::decodePod(prepared);
  }
  static bool sameButVersion(const driverdeployment::CachedPod& a,
                             const driverdeployment::CachedPod& b) {
    return a == b; // the resourceVersion is kept beside the entry, not in it
  }
  static std::size_t heapBytes(const driverdeployment::CachedPod& pod);
};

template <> struct StoreEntry<driverdeployment::CachedCSINode> {
  static driverdeployment::CachedCSINode decode(Json&& prepared) {
    return driverdeployment::decodeCSINode(prepared);
  }
  static bool sameButVersion(const driverdeployment::CachedCSINode& a,
                             const driverdeployment::CachedCSINode& b) {
    return a == b;
  }
  static std::size_t heapBytes(const driverdeployment::CachedCSINode& csiNode);
};

template <> struct StoreEntry<driverdeployment::CachedChild> {
  static driverdeployment::CachedChild decode(Json&& prepared) {
    return driverdeployment::decodeChild(std::move(prepared));
  }
  // Equal heads but for metadata.resourceVersion, and equal bodies.
  static bool sameButVersion(const driverdeployment::CachedChild& a,
                             const driverdeployment::CachedChild& b);
  static std::size_t heapBytes(const driverdeployment::CachedChild& child);
};

extern template class BasicStore<driverdeployment::CachedPod>;
extern template class BasicStore<driverdeployment::CachedCSINode>;
extern template class BasicStore<driverdeployment::CachedChild>;

} // namespace csiop::runtime

namespace csiop::driverdeployment {

using PodInformer = runtime::BasicInformer<CachedPod>;
using CSINodeInformer = runtime::BasicInformer<CachedCSINode>;
using ChildInformer = runtime::BasicInformer<CachedChild>;

} // namespace csiop::driverdeployment
