// Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules:
// a lease is taken when its holder has not renewed it for leaseDuration (as
// observed by this process's own clock, never by comparing clocks), renewed
// every retryPeriod, and given up when no renewal succeeded for renewDeadline.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csiop/kube/client.hpp>

namespace csiop::controller {

struct LeaderElectionConfig {
  std::string namespace_;
  std::string name = "csi-operator";
  std::string identity;
  std::chrono::seconds leaseDuration{15};
  std::chrono::seconds renewDeadline{10};
  std::chrono::seconds retryPeriod{2};
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
  // wait for it to expire.
  boost::asio::awaitable<void> release();
  void stop();
  bool leading() const { return leading_; }

private:
  boost::asio::awaitable<bool> tryAcquireOrRenew();
  boost::asio::awaitable<void> sleep(std::chrono::milliseconds d);

  kube::Client& client_;
  LeaderElectionConfig config_;
  std::unique_ptr<boost::asio::steady_timer> timer_;
  bool leading_ = false;
  bool stopped_ = false;
  // What we last saw of the lease and when (by our clock).
  std::string observedHolder_;
  std::string observedRenewTime_;
  std::chrono::steady_clock::time_point observedAt_{};
};

// RFC 3339 with microseconds, as metav1.MicroTime.
std::string microTimeNow();

} // namespace csiop::controller
