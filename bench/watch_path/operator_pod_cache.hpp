// The operator's cache of its workloads' pods, configured as driverdeployment::Caches configures
// `pods` (operator/driverdeployment/src/caches.cpp): a store of CachedPod entries with the pod
// field mask (podFields()), the transform keptInPodCache, the indexes kByOwner and kUsesVolumes,
// filled by a Reflector that lists and watches the pods carrying the owner label.
//
// Caches' PodInformer is that store and that reflector in one object; here this ListWatchTarget
// stands between them to count each watch event the store is given. A handler alone would not
// hear every event: an update that changes nothing of the cut-down entry is stored without
// telling the handlers (store.hpp), while client-go calls its handlers for every event. The
// handlers' calls are counted too.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <csiop/driverdeployment/cached_pod.hpp>
#include <csiop/driverdeployment/typed_caches.hpp>
#include <csiop/kube/client.hpp>
#include <csiop/runtime/reflector.hpp>
#include <csiop/runtime/store.hpp>

namespace csiop::bench {

class OperatorPodCache final : public runtime::ListWatchTarget {
public:
  // heard: told of each watch event after the store has taken it (its handlers called); true
  // stops the cache.
  OperatorPodCache(kube::Client& client, std::function<bool()> heard);

  // Lists and watches until stop().
  boost::asio::awaitable<void> run() { return reflector_.run(); }
  void stop() { reflector_.stop(); }
  std::size_t handlerCalls() const { return handlerCalls_; }
  std::size_t cachedPods() const { return store_.size(); }

  const kube::ResourceRef& resource() const override { return store_.resource(); }
  const kube::FieldMask* fields() const override { return store_.fields(); }
  bool prepare(kube::Json& object) const override { return store_.prepare(object); }
  void replace(std::vector<kube::Json> prepared) override { store_.replace(std::move(prepared)); }
  void apply(kube::WatchEvent event) override;

private:
  runtime::BasicStore<driverdeployment::CachedPod> store_;
  runtime::Reflector reflector_;
  std::function<bool()> heard_;
  std::size_t handlerCalls_ = 0;
};

} // namespace csiop::bench
