// The fleet scenario's pods watch (fleet.hpp): every pod of the cluster, as the operator's
// pod watch for volume users receives them (its other pod watch, of the workloads' pods, gets
// the same events of the node plugin pods), cut down as parsed to what is read here. It
// counts the changes the cluster makes (each is an event the operator reads and decides
// about) and time-stamps when every node plugin pod of a namespace is Ready, and when none is
// left. Time stamps are taken when the event is read, on the benchmark's single-threaded
// io_context.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <csiop/kube/client.hpp>

#include "watch_set.hpp"

namespace csiop::bench {

// Pod watch events read (a relist's differences are not events and are not counted).
struct PodChanges {
  double added = 0;
  double modified = 0;
  double deleted = 0;
  double total() const { return added + modified + deleted; }
  PodChanges operator-(const PodChanges& earlier) const {
    return {added - earlier.added, modified - earlier.modified, deleted - earlier.deleted};
  }
};

class PodWatch {
public:
  explicit PodWatch(kube::Client& client);
  PodWatch(const PodWatch&) = delete;
  PodWatch& operator=(const PodWatch&) = delete;

  void start();
  void stop() { watches_.stop(); }
  bool stopped() const { return watches_.stopped(); }
  bool synced() const { return watches_.synced(); }

  PodChanges changes() const { return changes_; }
  // Lists after the first: each follows a watch that could not go on (its events are lost).
  int relists() const { return lists_ > 0 ? lists_ - 1 : 0; }

  // From now on, time-stamp when `count` node plugin pods (pods of a DaemonSet) in namespace
  // `ns` are Ready (readyAt).
  void expectReady(const std::string& ns, int count);
  // From now on, time-stamp when no node plugin pod is left in namespace `ns` (goneAt).
  void expectGone(const std::string& ns);
  std::optional<Clock::time_point> readyAt(const std::string& ns) const;
  std::optional<Clock::time_point> goneAt(const std::string& ns) const;
  int ready(const std::string& ns) const;   // node plugin pods Ready now
  int present(const std::string& ns) const; // node plugin pods now, deleting ones included

private:
  struct Pod {
    std::string namespace_;
    bool nodePlugin = false; // owned by a DaemonSet
    bool ready = false;      // condition Ready=True
  };
  struct Namespace {
    int present = 0;
    int ready = 0;
    std::optional<int> wantReady; // expectReady()
    bool wantGone = false;        // expectGone()
    std::optional<Clock::time_point> readyAt;
    std::optional<Clock::time_point> goneAt;
  };

  void listed(const std::vector<kube::Json>& items, Clock::time_point at);
  void upsert(const kube::Json& pod, Clock::time_point at);
  void erase(const kube::Json& pod, Clock::time_point at);
  void count(const Pod& pod, int sign);
  void evaluate(const std::string& ns, Clock::time_point at);

  WatchSet watches_;
  std::map<std::string, Pod> pods_; // by namespace/name
  std::map<std::string, Namespace> namespaces_;
  PodChanges changes_;
  int lists_ = 0;
};

} // namespace csiop::bench
