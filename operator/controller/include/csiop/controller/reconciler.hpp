// reconcile(name): read the caches, render, claim the driver name, apply what
// differs, prune what the spec no longer wants, write the status if it
// changed. Level-triggered and idempotent; a converged DriverDeployment costs
// no write at all.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <boost/asio/awaitable.hpp>

#include <csiop/api/defaults.hpp>
#include <csiop/controller/caches.hpp>
#include <csiop/controller/events.hpp>
#include <csiop/controller/status.hpp>
#include <csiop/controller/volume_usage.hpp>

namespace csiop::controller {

inline constexpr const char* kFinalizer = "csiop.dev/cleanup";

struct ReconcileResult {
  enum class Outcome { Done, Requeue, Error } outcome = Outcome::Done;
  std::chrono::milliseconds after{0}; // for Requeue
  std::string message;                // for Error
};

class Reconciler {
public:
  Reconciler(kube::Client& client, Caches& caches, EventRecorder& events,
             std::function<std::string()> now,
             std::chrono::milliseconds configPollPeriod = std::chrono::seconds(10));

  boost::asio::awaitable<ReconcileResult> reconcile(std::string name);

  // The DriverDeployments a change of `object` (of any cached kind) concerns.
  std::vector<std::string> ownersOf(const api::Json& object);

  // storage.k8s.io/v1 CSIDriver, or the legacy csi.storage.k8s.io/v1alpha1 CRD
  // (whichever the caches watch, chosen from discovery at start).
  bool csiDriverV1() const { return caches_.csiDrivers.resource().group == "storage.k8s.io"; }

private:
  struct Applied {
    std::string desiredHash;
    std::string resourceVersion;
    std::string uid;
    std::int64_t generation = 0;
  };
  // The last status this reconciler wrote to a DriverDeployment, and the resourceVersion the
  // write made: until the cache shows it, the cached status is older than the server's.
  struct StatusWritten {
    std::string resourceVersion;
    api::Json status;
  };

  boost::asio::awaitable<ReconcileResult> finalize(const api::Json& dd);
  // spec.paused: no write but the status (the Paused condition).
  boost::asio::awaitable<ReconcileResult>
  reconcilePaused(const api::Json& dd, Observed& o,
                  const std::optional<api::DriverDeploymentStatus>& previous);
  // Why the deletion of `dd` must wait (what of its driver is in use), or
  // nullopt: nothing in use, deletionPolicy Orphan, or csiop.dev/force-delete.
  boost::asio::awaitable<std::optional<std::string>> deletionBlocker(const api::Json& dd,
                                                                     Observed& o);
  // Drops the owner reference and owner marks: the object stays, unmanaged.
  boost::asio::awaitable<void> orphan(const api::Json& child);
  void noteUnmanaged(const api::Json& child, Observed& o);
  // Reads the ConfigMaps and Secrets each workload among `objects` references and sets their
  // content hash on its pod template; true if any workload references one (it is then read
  // again every configPollPeriod_). An object that cannot be read keeps the live hash.
  boost::asio::awaitable<bool> annotateConfigHashes(std::vector<api::Json>& objects,
                                                    const api::Effective& e, Observed& o);
  // updateStrategy WhenVolumesUnused: replaces the out-of-date node plugin pods the plan
  // allows (node_rollout.hpp) and records the rest as waiting.
  boost::asio::awaitable<void> rollNodePlugins(const api::Effective& e, const api::Json& dd,
                                               Observed& o);
  // The workloads' and registration's part of the status.
  void observeWorkloads(const api::Effective& e, Observed& o);
  // Adds the finalizer if missing; `dd` then carries the new resourceVersion.
  boost::asio::awaitable<void> ensureFinalizer(api::Json& dd);
  // Creates or applies one child; returns an error line, or "" on success.
  boost::asio::awaitable<std::string> applyChild(const api::Json& desired, const std::string& uid);
  // Hands what the operator created with a POST over to its server-side apply
  // (field_ownership.hpp); nothing when there is nothing to hand over.
  boost::asio::awaitable<void> takeOwnership(const kube::ResourceRef& ref, const Json& live);
  boost::asio::awaitable<void> claimCSIDriver(const api::Json& desired);
  // Writes the status unless it is the one the server holds: the cached one, if the cache
  // shows this reconciler's last status write; else that write's (the cache may still hold
  // an older status, and the echo of the write queues no reconcile: manager.cpp). The write is
  // conditional on the cached resourceVersion: from a cache behind the server, a conflict.
  boost::asio::awaitable<void> writeStatus(const api::Json& dd,
                                           const api::DriverDeploymentStatus& s);
  // The children the operator made for the DriverDeployment `name` with `uid` (madeFor): what
  // pruning and deletion may remove. A copy someone else made of one is not among them.
  std::vector<api::Json> ownedChildren(const std::string& name, const std::string& uid);
  // The field managers the operator writes children with: its client's, and the CSIDriver
  // claim's (a claim whose apply has not happened yet is still the operator's).
  std::vector<std::string> fieldManagers() const;
  const api::Json* live(const api::Json& desired);
  void remember(const api::Json& desired, const api::Json& result);
  bool unchangedSinceApplied(const api::Json& desired, const api::Json& live) const;
  // Whether the cached `live` is older than what this reconciler last applied to it: the apply
  // made a generation the cache has not shown yet.
  bool behindLastApply(const api::Json& live) const;

  kube::Client& client_;
  Caches& caches_;
  EventRecorder& events_;
  std::function<std::string()> now_;
  std::chrono::milliseconds configPollPeriod_;
  std::map<std::string, Applied> applied_; // by "Kind ns/name"
  // By DriverDeployment name; dropped once the cache shows the write.
  std::map<std::string, StatusWritten> statusWritten_;
  std::set<std::string> forcedDeletions_; // uids whose forced deletion has an Event
  // DriverDeployment -> nodes its node plugin rollout waits on (a change of one requeues it).
  std::map<std::string, std::set<std::string>> waitingNodes_;
};

} // namespace csiop::controller
