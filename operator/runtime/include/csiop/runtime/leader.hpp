// Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules:
// a lease is taken when its holder has not renewed it for leaseDuration (as
// observed by this process's own clock, never by comparing clocks), renewed
// every retryPeriod, and given up when no renewal succeeded for renewDeadline
// (an attempt still unanswered at that deadline is abandoned).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csiop/kube/client.hpp>

namespace csiop::runtime {

struct LeaderElectionConfig {
  std::string namespace_;
  std::string name = "csi-operator";
  std::string identity;
  // Written to the Lease in whole seconds, rounded up.
  std::chrono::milliseconds leaseDuration = std::chrono::seconds(15);
  std::chrono::milliseconds renewDeadline = std::chrono::seconds(10);
  std::chrono::milliseconds retryPeriod = std::chrono::seconds(2);
};

class LeaderElector {
public:
  LeaderElector(kube::Client& client, LeaderElectionConfig config);

  // Waits until this process holds the lease, calls onStartedLeading, then
  // renews until the lease is lost (onStoppedLeading, and run() returns) or
  // stop() releases it.
  boost::asio::awaitable<void> run(std::function<void()> onStartedLeading,
                                   std::function<void()> onStoppedLeading);
  // Stops renewing; if leading, hands the lease back so a successor need not
  // wait for it to expire. An attempt run() has in flight ends first, so it
  // cannot renew (or acquire) the lease after it was handed back.
  boost::asio::awaitable<void> release();
  void stop();
  bool leading() const { return leading_; }

private:
  boost::asio::awaitable<bool> tryAcquireOrRenew();
  // tryAcquireOrRenew() bounded by `deadline`: false if it is still unanswered then (it is
  // cancelled) or fails in any way.
  boost::asio::awaitable<bool> attempt(std::chrono::steady_clock::time_point deadline);
  boost::asio::awaitable<void> sleep(std::chrono::milliseconds d);

  kube::Client& client_;
  LeaderElectionConfig config_;
  std::unique_ptr<boost::asio::steady_timer> timer_;
  bool leading_ = false;
  bool stopped_ = false;
  bool attempting_ = false; // run() awaits attempt()
  // What we last saw of the lease and when (by our clock).
  std::string observedHolder_;
  std::string observedRenewTime_;
  std::chrono::steady_clock::time_point observedAt_{};
};

// RFC 3339 with microseconds, as metav1.MicroTime.
std::string microTimeNow();

} // namespace csiop::runtime
