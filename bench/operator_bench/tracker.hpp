// Watches (list + watch, as an informer) every kind the operator creates, selected by its
// owner label, and the benchmark's DriverDeployments, and time-stamps what the benchmark waits
// for: when the last expected child of a DriverDeployment was first seen, and when it first
// showed Ready=True. Time stamps are taken when the watch event is read, on the benchmark's
// single-threaded io_context.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <csiop/kube/client.hpp>

#include "watch_set.hpp"
#include "workload.hpp"

namespace csiop::bench {

struct Timing {
  std::string uid;                             // of this incarnation (from the create)
  std::vector<ObjectKey> expected;             // what render produces for it
  Clock::time_point createdAt{};               // the create request returned
  std::optional<Clock::time_point> childrenAt; // every expected object exists (last first seen)
  std::optional<Clock::time_point> readyAt;    // Ready=True first seen
};

class Tracker {
public:
  explicit Tracker(kube::Client& client);
  Tracker(const Tracker&) = delete;
  Tracker& operator=(const Tracker&) = delete;

  // The kinds watched; expected objects of any other kind cannot be observed.
  static const std::vector<kube::ResourceRef>& childKinds();

  // Spawns the watch loops on the client's executor.
  void start();
  // Cancels the watches; stopped() once every loop has returned.
  void stop() { watches_.stop(); }
  bool stopped() const { return watches_.stopped(); }
  bool synced() const { return watches_.synced(); }

  // Before the create: what to wait for. Forgets an earlier incarnation's timing.
  void expect(const std::string& name, std::vector<ObjectKey> expected);
  // The create returned this uid at `at`.
  void created(const std::string& name, const std::string& uid, Clock::time_point at);
  const Timing& timing(const std::string& name) const { return timings_.at(name); }
  // nullptr unless expect() was called for it.
  const Timing* find(const std::string& name) const {
    const auto it = timings_.find(name);
    return it == timings_.end() ? nullptr : &it->second;
  }

  // The DriverDeployment is gone and so is every object carrying its owner label (the
  // Namespace excepted: the operator never deletes one).
  bool gone(const std::string& name) const;
  // When the DriverDeployment's DELETED event was read, if it was.
  std::optional<Clock::time_point> deletedAt(const std::string& name) const;
  // Objects carrying the owner label of `name` still present, for messages.
  std::vector<ObjectKey> remaining(const std::string& name) const;

  std::size_t events() const { return watches_.events(); }

private:
  struct Live {
    std::string owner;    // owner label value
    std::string ownerUid; // uid of the controller ownerReference ("" for the Namespace)
    Clock::time_point firstSeen;
  };
  struct DriverDeploymentState {
    std::string uid;
    bool ready = false;
  };

  WatchSet::Handlers handlersFor(const kube::ResourceRef& ref);
  void replaceAll(const kube::ResourceRef& ref, const std::vector<Json>& items,
                  Clock::time_point at);
  void upsert(const kube::ResourceRef& ref, const Json& object, Clock::time_point at);
  void erase(const kube::ResourceRef& ref, const Json& object, Clock::time_point at);
  void evaluate(const std::string& name, Clock::time_point at);

  WatchSet watches_;
  std::map<ObjectKey, Live> live_;
  std::map<std::string, DriverDeploymentState> driverDeployments_;
  std::map<std::string, Clock::time_point> deleted_;
  std::map<std::string, Timing> timings_;
};

} // namespace csiop::bench
