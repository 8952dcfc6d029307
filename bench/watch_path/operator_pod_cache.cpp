#include "operator_pod_cache.hpp"

#include <csiop/api/annotations.hpp>
#include <csiop/driverdeployment/caches.hpp>

namespace csiop::bench {

namespace dd = driverdeployment;

OperatorPodCache::OperatorPodCache(kube::Client& client, std::function<bool()> heard)
    : store_(kube::resources::pods), reflector_(client, *this, api::kOwnerLabel),
      heard_(std::move(heard)) {
  store_.setFields(dd::podFields());
  store_.setTransform([](kube::Json& pod) { return dd::keptInPodCache(pod); });
  store_.addIndex(dd::kByOwner, dd::podOwner);
  store_.addIndex(dd::kUsesVolumes, dd::volumeUserIndex);
  store_.onChange([this](const dd::CachedPod*, const dd::CachedPod*) { ++handlerCalls_; });
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
