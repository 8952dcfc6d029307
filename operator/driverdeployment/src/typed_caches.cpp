#include <csiop/controller/typed_caches.hpp>

#include <string>

#include <csiop/runtime/store_impl.hpp>

namespace csiop::runtime {

std::size_t StoreEntry<controller::CachedPod>::heapBytes(const controller::CachedPod& pod) {
  using controller::CachedPod;
  std::size_t bytes = 0;
  for (const std::string* s : {&pod.namespace_, &pod.name, &pod.uid, &pod.owner, &pod.revisionHash,
                               &pod.controllerUid, &pod.nodeName, &pod.phase}) {
    bytes += heapBytesOf(*s);
  }
  if (pod.unschedulable) {
    bytes += heapBytesOf(*pod.unschedulable);
  }
  if (pod.waiting.capacity() > 0) {
    bytes += heapChunk(pod.waiting.capacity() * sizeof(CachedPod::WaitingContainer));
  }
  for (const auto& w : pod.waiting) {
    bytes += heapBytesOf(w.name) + heapBytesOf(w.reason) + heapBytesOf(w.message);
  }
  if (pod.volumes.capacity() > 0) {
    bytes += heapChunk(pod.volumes.capacity() * sizeof(CachedPod::Volume));
  }
  for (const auto& v : pod.volumes) {
    bytes += heapBytesOf(v.name) + heapBytesOf(v.claimName) + heapBytesOf(v.csiDriver);
  }
  return bytes;
}

std::size_t
StoreEntry<controller::CachedCSINode>::heapBytes(const controller::CachedCSINode& csiNode) {
  std::size_t bytes = heapBytesOf(csiNode.name);
  if (csiNode.drivers.capacity() > 0) {
    bytes += heapChunk(csiNode.drivers.capacity() * sizeof(std::string));
  }
  for (const std::string& d : csiNode.drivers) {
    bytes += heapBytesOf(d);
  }
  return bytes;
}

bool StoreEntry<controller::CachedChild>::sameButVersion(const controller::CachedChild& a,
                                                         const controller::CachedChild& b) {
  return a.content == b.content && a.body == b.body &&
         StoreEntry<Json>::sameButVersion(a.head, b.head);
}

std::size_t StoreEntry<controller::CachedChild>::heapBytes(const controller::CachedChild& child) {
  return heapBytesOf(child.head) + heapBytesOf(child.body);
}

template class BasicStore<controller::CachedPod>;
template class BasicStore<controller::CachedCSINode>;
template class BasicStore<controller::CachedChild>;

} // namespace csiop::runtime
