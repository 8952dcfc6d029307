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

class Informer : public Store {
public:
  // Caches `ref`, only the objects `labelSelector` selects ("" : all). `optional`: the
  // resource may not be served (Reflector).
  Informer(kube::Client& client, kube::ResourceRef ref, std::string labelSelector = {},
           bool optional = false)
      : Store(std::move(ref)), reflector_(client, *this, std::move(labelSelector), optional) {}

  boost::asio::awaitable<void> run() { return reflector_.run(); }
  void stop() { reflector_.stop(); }
  bool synced() const { return reflector_.synced(); }
  bool served() const { return reflector_.served(); }
  std::size_t relists() const { return reflector_.relists(); }
  std::size_t watchesStarted() const { return reflector_.watchesStarted(); }

private:
  Reflector reflector_;
};

} // namespace csiop::runtime
