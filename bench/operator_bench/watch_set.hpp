// List + watch loops for the benchmark's observers (an informer without a store): each resource
// is listed, then watched from the list's resourceVersion and relisted when the watch expires or
// fails. The handlers see every list and every event, time-stamped when read on the
// benchmark's single-threaded io_context.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <csiop/kube/client.hpp>
#include <csiop/kube/field_mask.hpp>

namespace csiop::bench {

using Clock = std::chrono::steady_clock;

class WatchSet {
public:
  struct Handlers {
    std::function<void(const std::vector<kube::Json>& items, Clock::time_point at)> listed;
    std::function<void(const kube::Json& object, Clock::time_point at)> upserted; // added, modified
    std::function<void(const kube::Json& object, Clock::time_point at)> deleted;
  };

  explicit WatchSet(kube::Client& client) : client_(client) {}
  WatchSet(const WatchSet&) = delete;
  WatchSet& operator=(const WatchSet&) = delete;

  // Spawns the loop of one resource (all namespaces) on the client's executor. `fields`: what
  // to build of each object as it is parsed (field_mask.hpp; none: all of it); it must keep
  // metadata.resourceVersion, which a watch the server ended goes on from.
  void start(kube::ResourceRef ref, std::string labelSelector, Handlers handlers,
             std::optional<kube::FieldMask> fields = std::nullopt);
  // Cancels the watches; stopped() once every loop has returned.
  void stop();
  bool stopped() const { return loops_ == 0; }
  // Every started resource has been listed at least once.
  bool synced() const { return synced_.size() == started_; }
  std::size_t events() const { return events_; }

private:
  boost::asio::awaitable<void> loop(kube::ResourceRef ref, std::string selector, Handlers handlers,
                                    std::optional<kube::FieldMask> fields);

  kube::Client& client_;
  bool stopping_ = false;
  int loops_ = 0;
  std::size_t started_ = 0;
  std::set<std::string> synced_;                // resources listed at least once
  std::map<std::string, kube::Watch*> watches_; // open watch per resource
  std::size_t events_ = 0;
};

} // namespace csiop::bench
