// A list+watch cache of one resource, as client-go's informer: list, then
// watch from the list's resourceVersion; resume a closed or broken watch from
// the last resourceVersion seen (bookmarks included); relist when the server
// says the version is gone (410). Every change, including the ones a relist
// discovers, reaches the handler, so no event is lost across expiry.
//
// Single-threaded: run() and every accessor on the client's executor.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csiop/api/types.hpp>
#include <csiop/kube/client.hpp>

namespace csiop::controller {

using api::Json;

class Informer {
public:
  // old: nullptr for an addition; updated: nullptr for a deletion.
  using Handler = std::function<void(const Json* old, const Json* updated)>;

  Informer(kube::Client& client, kube::ResourceRef ref, std::string labelSelector = {});
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void onChange(Handler handler) { handlers_.push_back(std::move(handler)); }

  // Cuts each listed or watched object down before it is stored (as client-go's
  // SetTransform), or returns false to keep it out of the cache altogether (an
  // update that turns false removes it, as a deletion). An update whose cut-down
  // object differs only in resourceVersion is stored without notifying anyone.
  // Set before run().
  using Transform = std::function<bool(Json& object)>;
  void setTransform(Transform transform) { transform_ = std::move(transform); }

  // An index, as client-go's Indexers: `values` names the index values an object is filed
  // under (none, one or several), and byIndex finds the objects filed under a value without a
  // walk over the cache. Kept current by every list and event. Set before run().
  using IndexValues = std::function<std::vector<std::string>(const Json& object)>;
  void addIndex(std::string name, IndexValues values);
  std::vector<const Json*> byIndex(const std::string& index, const std::string& value) const;
  std::size_t countByIndex(const std::string& index, const std::string& value) const;

  // Runs until stop(). Errors are retried with backoff (200 ms doubling to 30 s).
  boost::asio::awaitable<void> run();
  void stop();

  // The first list has completed (and every later relist replaced the store).
  bool synced() const { return synced_; }
  const kube::ResourceRef& resource() const { return ref_; }

  // The cached object, or nullptr. ns "" for cluster-scoped resources.
  const Json* get(const std::string& ns, const std::string& name) const;
  std::vector<const Json*> list() const;
  std::size_t size() const { return store_.size(); }

  // Counters for tests and metrics.
  std::size_t relists() const { return relists_; }
  std::size_t watchesStarted() const { return watches_; }

private:
  static std::string keyOf(const Json& object);
  bool prepare(Json& object) const;
  void replaceAll(std::vector<Json> items);
  void applyEvent(const kube::WatchEvent& event);
  void indexAdd(const std::string& key, const Json& object);
  void indexRemove(const std::string& key, const Json& object);
  const std::set<std::string>* indexed(const std::string& index, const std::string& value) const;
  void notify(const Json* old, const Json* updated);
  boost::asio::awaitable<void> sleep(std::chrono::milliseconds delay);

  kube::Client& client_;
  kube::ResourceRef ref_;
  std::string labelSelector_;
  std::vector<Handler> handlers_;
  Transform transform_;
  std::map<std::string, Json> store_;
  struct Index {
    IndexValues values;
    std::map<std::string, std::set<std::string>> keys; // index value -> store keys
  };
  std::map<std::string, Index> indexes_;
  bool synced_ = false;
  bool stopped_ = false;
  kube::Watch* watch_ = nullptr;
  std::unique_ptr<boost::asio::steady_timer> timer_;
  std::size_t relists_ = 0;
  std::size_t watches_ = 0;
};

} // namespace csiop::controller
