#include <csiop/driverdeployment/typed_caches.hpp>

#include <string>

#include <csiop/runtime/store_impl.hpp>

namespace csiop::runtime {

std::size_t
StoreEntry<driverdeployment::CachedPod>::heapBytes(const driverdeployment::CachedPod& pod) {
  using driverdeployment::CachedPod;
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
  if (pod.restarted.capacity() > 0) {
    bytes += heapChunk(pod.restarted.capacity() * sizeof(CachedPod::RestartedContainer));
  }
  for (const auto& r : pod.restarted) {
    bytes += heapBytesOf(r.name) + heapBytesOf(r.reason) + heapBytesOf(r.message);
  }
  if (pod.volumes.capacity() > 0) {
    bytes += heapChunk(pod.volumes.capacity() * sizeof(CachedPod::Volume));
  }
  for (const auto& v : pod.volumes) {
    bytes += heapBytesOf(v.name) + heapBytesOf(v.claimName) + heapBytesOf(v.csiDriver);
  }
  return bytes;
}

std::size_t StoreEntry<driverdeployment::CachedCSINode>::heapBytes(
    const driverdeployment::CachedCSINode& csiNode) {
  std::size_t bytes = heapBytesOf(csiNode.name);
  if (csiNode.drivers.capacity() > 0) {
    bytes += heapChunk(csiNode.drivers.capacity() * sizeof(std::string));
  }
  for (const std::string& d : csiNode.drivers) {
    bytes += heapBytesOf(d);
  }
  return bytes;
}

bool StoreEntry<driverdeployment::CachedChild>::sameButVersion(
    const driverdeployment::CachedChild& a, const driverdeployment::CachedChild& b) {
  return a.content == b.content && a.body == b.body &&
         StoreEntry<Json>::sameButVersion(a.head, b.head);
}

std::size_t
StoreEntry<driverdeployment::CachedChild>::heapBytes(const driverdeployment::CachedChild& child) {
  return heapBytesOf(child.head) + heapBytesOf(child.body);
}

template class BasicStore<driverdeployment::CachedPod>;
template class BasicStore<driverdeployment::CachedCSINode>;
template class BasicStore<driverdeployment::CachedChild>;

} // namespace csiop::runtime
