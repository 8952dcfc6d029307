#include "operator_pod_cache.hpp"

#include <string>

#include <csiop/api/annotations.hpp>
#include <csiop/driverdeployment/caches.hpp>

namespace csiop::bench {
namespace {

namespace dd = driverdeployment;
using dd::CachedPod;

// The index functions of the pod cache: copies of podOwner and volumeUserIndex, which are in
// caches.cpp's anonymous namespace.
std::vector<std::string> podOwner(const CachedPod& pod) {
  return pod.owner.empty() ? std::vector<std::string>{} : std::vector<std::string>{pod.owner};
}

std::vector<std::string> volumeUserIndex(const CachedPod& pod) {
  return pod.usesVolumes() ? std::vector<std::string>{"true"} : std::vector<std::string>{};
}

} // namespace

OperatorPodCache::OperatorPodCache(kube::Client& client, std::function<bool()> heard)
    : store_(kube::resources::pods), reflector_(client, *this, api::kOwnerLabel),
      heard_(std::move(heard)) {
  store_.setFields(dd::podFields());
  store_.setTransform([](kube::Json& pod) { return dd::keptInPodCache(pod); });
  store_.addIndex(dd::kByOwner, podOwner);
  store_.addIndex(dd::kUsesVolumes, volumeUserIndex);
  store_.onChange([this](const CachedPod*, const CachedPod*) { ++handlerCalls_; });
}

void OperatorPodCache::apply(kube::WatchEvent event) {
  using T = kube::WatchEventType;
  const bool change = event.type != T::Bookmark && event.type != T::Error;
  store_.apply(std::move(event));
  if (change && heard_()) {
    stop();
  }
}

} // namespace csiop::bench
