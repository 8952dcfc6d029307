// Keeps a Store in step with the API server, as client-go's reflector: list, then watch from the
// list's resourceVersion; resume a closed or broken watch from the last resourceVersion seen
// (bookmarks included); relist when the server says the version is gone (410). Every change,
// including those a relist discovers, reaches the store's handlers, so no event is lost across
// expiry. Errors are retried with backoff (200 ms doubling to 30 s), or after the wait the API
// server asked for (Retry-After on a 429 or 5xx, kube::ApiError::retryWait) when that is longer.
// Only what is not an answer of the API server or a transport error (a bug) ends run() with an
// exception; its supervisor (supervised.hpp) makes that fatal.
//
// Single-threaded: run() and every accessor on the client's executor.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csiop/kube/client.hpp>
#include <csiop/runtime/list_watch_target.hpp>

namespace csiop::runtime {

class Reflector {
public:
  // Lists and watches store.resource() into `store`, only the objects `labelSelector` and
  // `fieldSelector` select ("" : all): the API server filters, so what is not selected costs
  // nothing here.
  // `optional`: the resource may not be served (a CRD not installed): a list that finds no
  // such resource (404) leaves the store empty and counts as synced, and the list is tried
  // again every kUnservedRetry until the resource appears.
  Reflector(kube::Client& client, ListWatchTarget& store, std::string labelSelector = {},
            bool optional = false, std::string fieldSelector = {});
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Runs until stop().
  boost::asio::awaitable<void> run();
  void stop();
  // After stop() and the end of run(): the next run() lists afresh.
  void rearm();

  // The first list has completed (and every later relist replaced the store).
  bool synced() const { return synced_; }
  // The last list found the resource served (false only for an optional one that is not).
  bool served() const { return served_; }
  // The resourceVersion the store last caught up to: its last list's, or its watch's last event
  // (a bookmark included), as client-go's LastSyncResourceVersion. Tests wait on it.
  const std::string& lastSyncResourceVersion() const { return lastSyncResourceVersion_; }

  static constexpr std::chrono::seconds kUnservedRetry{30};
  // Counters for tests and metrics.
  std::size_t relists() const { return relists_; }
  std::size_t watchesStarted() const { return watches_; }

private:
  boost::asio::awaitable<void> sleep(std::chrono::milliseconds delay);

  kube::Client& client_;
  ListWatchTarget& store_;
  std::string labelSelector_;
  std::string fieldSelector_;
  bool optional_ = false;
  bool synced_ = false;
  bool served_ = true;
  bool stopped_ = false;
  std::string lastSyncResourceVersion_;
  kube::Watch* watch_ = nullptr;
  std::unique_ptr<boost::asio::steady_timer> timer_;
  std::size_t relists_ = 0;
  std::size_t watches_ = 0;
};

} // namespace csiop::runtime
