// A Store kept in step with the API server by its own Reflector: the cache of one resource, as
// client-go's informer. Read it as a Store (get, list, byIndex; handlers, transform and indexes
// set before run()); run() and stop() are the reflector's.
//
// Single-threaded: run() and every accessor on the client's executor.
#pragma once

#include <cstddef>
#include <string>

#include <boost/asio/awaitable.hpp>

#include <csiop/kube/client.hpp>
#include <csiop/runtime/reflector.hpp>
#include <csiop/runtime/store.hpp>

namespace csiop::runtime {

// What runs, stops and is measured of every cache, whatever its entries: the manager starts
// them all, waits for them all to sync, and reports their sizes.
class RunnableCache {
public:
  virtual ~RunnableCache() = default;

  virtual boost::asio::awaitable<void> run() = 0;
  virtual void stop() = 0;
  // After stop() and the end of run(): ready to run() again (on_demand_cache.hpp).
  virtual void rearm() = 0;
  // Forgets what it holds, telling no handler (a stopped cache that is not kept).
  virtual void drop() = 0;
  virtual bool synced() const = 0;
  virtual bool served() const = 0;
  // Reflector::lastSyncResourceVersion.
  virtual const std::string& lastSyncResourceVersion() const = 0;
  virtual const kube::ResourceRef& cachedResource() const = 0;
  virtual std::size_t cachedObjects() const = 0;
  virtual std::size_t cachedHeapBytes() const = 0;
};

template <class Entry> class BasicInformer : public BasicStore<Entry>, public RunnableCache {
public:
  // Caches `ref`, only the objects `labelSelector` and `fieldSelector` select ("" : all).
  // `optional`: the resource may not be served (Reflector).
  BasicInformer(kube::Client& client, kube::ResourceRef ref, std::string labelSelector = {},
                bool optional = false, std::string fieldSelector = {})
      : BasicStore<Entry>(std::move(ref)),
        reflector_(client, *this, std::move(labelSelector), optional, std::move(fieldSelector)) {}

  boost::asio::awaitable<void> run() override { return reflector_.run(); }
  void stop() override { reflector_.stop(); }
  void rearm() override { reflector_.rearm(); }
  void drop() override { this->clear(); }
  bool synced() const override { return reflector_.synced(); }
  bool served() const override { return reflector_.served(); }
  const std::string& lastSyncResourceVersion() const override {
    return reflector_.lastSyncResourceVersion();
  }
  const kube::ResourceRef& cachedResource() const override { return this->resource(); }
  std::size_t cachedObjects() const override { return this->size(); }
  std::size_t cachedHeapBytes() const override { return this->heapBytes(); }
  std::size_t relists() const { return reflector_.relists(); }
  std::size_t watchesStarted() const { return reflector_.watchesStarted(); }

private:
  Reflector reflector_;
};

// The cache of JSON trees: every resource but the high-count kinds with typed entries.
using Informer = BasicInformer<Json>;

} // namespace csiop::runtime
