// reconcile(name): read the caches, render, claim the driver name, apply what
// differs, prune what the spec no longer wants, write the status if it
// changed. Level-triggered and idempotent; a converged DriverDeployment costs
// no write at all.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include <csiop/controller/caches.hpp>
#include <csiop/controller/events.hpp>

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
             std::function<std::string()> now);

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
  };

  boost::asio::awaitable<ReconcileResult> finalize(const api::Json& dd);
  // Adds the finalizer if missing; `dd` then carries the new resourceVersion.
  boost::asio::awaitable<void> ensureFinalizer(api::Json& dd);
  // Creates or applies one child; returns an error line, or "" on success.
  boost::asio::awaitable<std::string> applyChild(const api::Json& desired, const std::string& uid);
  boost::asio::awaitable<void> claimCSIDriver(const api::Json& desired);
  boost::asio::awaitable<void> writeStatus(const api::Json& dd,
                                           const api::DriverDeploymentStatus& s);
  std::vector<api::Json> ownedChildren(const std::string& name, const std::string& uid);
  const api::Json* live(const api::Json& desired);
  void remember(const api::Json& desired, const api::Json& result);
  bool unchangedSinceApplied(const api::Json& desired, const api::Json& live) const;

  kube::Client& client_;
  Caches& caches_;
  EventRecorder& events_;
  std::function<std::string()> now_;
  std::map<std::string, Applied> applied_; // by "Kind ns/name"
};

} // namespace csiop::controller
