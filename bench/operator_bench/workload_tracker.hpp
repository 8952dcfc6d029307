// The peer scenario's observer (peer.hpp): watches CSIDrivers, DaemonSets, Deployments and one
// kind of custom resource, and time-stamps for each custom resource created what both operators
// are measured by, the same way: when its CSIDriver, DaemonSet and Deployment all exist (the
// workloads with a controller ownerReference to this incarnation, the CSIDriver seen after the
// create was sent), when both workloads are Ready (every scheduled node plugin pod ready and
// updated, every controller replica ready and updated, status observed), and when the custom
// resource and both workloads are gone.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <csiop/kube/client.hpp>

#include "subjects.hpp"
#include "watch_set.hpp"

namespace csiop::bench {

struct Trial {
  ExpectedWorkload expected;
  std::string uid; // of this incarnation (from the create)
  Clock::time_point sentAt{};
  Clock::time_point createdAt{};
  std::optional<Clock::time_point> childrenAt; // CSIDriver, DaemonSet and Deployment exist
  std::optional<Clock::time_point> readyAt;    // both workloads Ready
  std::optional<Clock::time_point> deletedAt;  // the custom resource's DELETED event
  std::optional<Clock::time_point> goneAt;     // that, and both workloads gone
};

class WorkloadTracker {
public:
  WorkloadTracker(kube::Client& client, kube::ResourceRef resource);
  WorkloadTracker(const WorkloadTracker&) = delete;
  WorkloadTracker& operator=(const WorkloadTracker&) = delete;

  void start();
  void stop() { watches_.stop(); }
  bool stopped() const { return watches_.stopped(); }
  bool synced() const { return watches_.synced(); }
  std::size_t events() const { return watches_.events(); }

  // Before the create is sent: what to wait for (forgets an earlier incarnation).
  void expect(const std::string& cr, ExpectedWorkload expected, Clock::time_point sentAt);
  // The create returned this uid.
  void created(const std::string& cr, const std::string& uid, Clock::time_point at);
  // nullptr unless expect() was called for it.
  const Trial* find(const std::string& cr) const;
  bool csiDriverExists(const std::string& name) const { return csiDrivers_.contains(name); }

private:
  struct Workload {
    std::string ownerUid; // controller ownerReference
    bool ready = false;
    Clock::time_point firstSeen;
  };

  void evaluate(const std::string& cr, Clock::time_point at);
  void evaluateOwner(const std::string& ownerUid, Clock::time_point at);
  void csiDriverSeen(const std::string& name, Clock::time_point at);
  bool owned(const ObjectKey& key, const std::string& uid) const;
  void workloadUpsert(const std::string& kind, const Json& object, Clock::time_point at);
  void workloadErase(const std::string& kind, const Json& object, Clock::time_point at);

  kube::ResourceRef resource_;
  WatchSet watches_;
  std::map<std::string, Clock::time_point> csiDrivers_; // name -> first seen
  std::map<ObjectKey, Workload> workloads_;
  std::map<std::string, Trial> trials_;            // by custom resource name
  std::map<std::string, std::string> byUid_;       // custom resource uid -> name
  std::map<std::string, std::string> byCsiDriver_; // CSIDriver name -> custom resource name
};

// Ready as `kubectl rollout status` sees it: every desired pod ready and updated, and the
// status written for the current generation.
bool daemonSetReady(const Json& daemonSet);
bool deploymentReady(const Json& deployment);

} // namespace csiop::bench
