#include <csiop/runtime/leader.hpp>

#include <algorithm>
#include <ctime>
#include <exception>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

namespace csiop::runtime {
namespace {

namespace asio = boost::asio;
using kube::Json;

// A string member of a lease's spec; "" when absent or not a string.
std::string stringField(const Json& object, const char* key) {
  const auto it = object.is_object() ? object.find(key) : object.end();
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Marks an attempt in flight for as long as it lives.
class InFlight {
public:
  explicit InFlight(bool& flag) : flag_(flag) { flag_ = true; }
  ~InFlight() { flag_ = false; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

private:
  bool& flag_;
};

} // namespace

std::string microTimeNow() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()) %
      std::chrono::seconds(1);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%06ldZ", static_cast<long>(micros.count()));
  return buf;
}

LeaderElector::LeaderElector(kube::Client& client, LeaderElectionConfig config)
    : client_(client), config_(std::move(config)),
      timer_(std::make_unique<asio::steady_timer>(client.executor())) {}

asio::awaitable<void> LeaderElector::sleep(std::chrono::milliseconds d) {
  if (stopped_) {
    co_return; // stop() came during an attempt: its cancel() found no wait
  }
  timer_->expires_after(d);
  boost::system::error_code ec;
  co_await timer_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<bool> LeaderElector::tryAcquireOrRenew() {
  const auto& ref = kube::resources::leases;
  const std::string now = microTimeNow();
  const auto localNow = std::chrono::steady_clock::now();
  Json lease;
  try {
    lease = co_await client_.get(ref, config_.namespace_, config_.name);
  } catch (const kube::ApiError& e) {
    if (!e.isNotFound()) {
      spdlog::warn("leader election: reading lease {}/{}: {}", config_.namespace_, config_.name,
                   e.what());
      co_return false;
    }
  } catch (const kube::TransportError& e) {
    spdlog::warn("leader election: {}", e.what());
    co_return false;
  }
  // Whole seconds, rounded up (and at least 1, which the API server requires).
  const std::int64_t leaseSeconds = std::max<std::int64_t>(
      1, std::chrono::ceil<std::chrono::seconds>(config_.leaseDuration).count());
  Json spec = {{"holderIdentity", config_.identity},
               {"leaseDurationSeconds", leaseSeconds},
               {"acquireTime", now},
               {"renewTime", now},
               {"leaseTransitions", 0}};
  try {
    if (lease.is_null()) {
      Json created = {{"apiVersion", "coordination.k8s.io/v1"},
                      {"kind", "Lease"},
                      {"metadata", {{"name", config_.name}, {"namespace", config_.namespace_}}},
                      {"spec", spec}};
      co_await client_.create(ref, std::move(created));
      observedHolder_ = config_.identity;
      observedRenewTime_ = now;
      observedAt_ = localNow;
      co_return true;
    }
    const Json current = lease.value("spec", Json::object());
    const std::string holder = stringField(current, "holderIdentity");
    const std::string renewTime = stringField(current, "renewTime");
    if (holder != observedHolder_ || renewTime != observedRenewTime_) {
      observedHolder_ = holder;
      observedRenewTime_ = renewTime;
      observedAt_ = localNow;
    }
    const bool mine = holder == config_.identity;
    const auto duration =
        std::chrono::seconds(current.value("leaseDurationSeconds", Json(15)).get<std::int64_t>());
    if (!mine && !holder.empty() && observedAt_ + duration > localNow) {
      co_return false; // held by someone who renewed within the lease duration
    }
    std::int64_t transitions = current.value("leaseTransitions", Json(0)).get<std::int64_t>();
    if (mine) {
      spec["acquireTime"] = current.value("acquireTime", Json(now));
      spec["leaseTransitions"] = transitions;
    } else {
      spec["leaseTransitions"] = transitions + 1;
    }
    lease["spec"] = spec;
    // PUT with the resourceVersion we read: two contenders cannot both win.
    co_await client_.update(ref, lease);
    observedHolder_ = config_.identity;
    observedRenewTime_ = now;
    observedAt_ = localNow;
    co_return true;
  } catch (const kube::ApiError& e) {
    if (!e.isConflict() && !e.isAlreadyExists()) {
      spdlog::warn("leader election: {}", e.what());
    }
  } catch (const kube::TransportError& e) {
    spdlog::warn("leader election: {}", e.what());
  }
  co_return false;
}

asio::awaitable<bool> LeaderElector::attempt(std::chrono::steady_clock::time_point deadline) {
  namespace x = asio::experimental;
  // client-go bounds each renewal by the renew deadline too: a request the server never
  // answers must not keep this replica leading after the lease has expired for the others.
  // The first to finish cancels the other.
  asio::steady_timer expiry(client_.executor(), deadline);
  auto group = x::make_parallel_group(
      asio::co_spawn(client_.executor(), tryAcquireOrRenew(), asio::deferred),
      expiry.async_wait(asio::deferred));
  auto [order, error, acquired, expired] =
      co_await group.async_wait(x::wait_for_one(), asio::use_awaitable);
  if (order[0] != 0) {
    spdlog::warn("leader election: no answer by the renew deadline");
    co_return false;
  }
  if (error) { // not an API or transport error (those are handled): a failed attempt too
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      spdlog::warn("leader election: {}", e.what());
    } catch (...) {
      spdlog::warn("leader election: unknown error");
    }
    co_return false;
  }
  co_return acquired;
}

asio::awaitable<void> LeaderElector::run(std::function<void()> onStartedLeading,
                                         std::function<void()> onStoppedLeading) {
  const auto retry = config_.retryPeriod;
  while (!stopped_) {
    {
      // leading_ is set before release() can look at it: a lease acquired while stopping is
      // still handed back.
      const InFlight busy(attempting_);
      leading_ = co_await attempt(std::chrono::steady_clock::now() + config_.renewDeadline);
    }
    if (leading_) {
      break;
    }
    co_await sleep(retry);
  }
  if (!leading_ || stopped_) {
    co_return;
  }
  spdlog::info("leader election: {} acquired lease {}/{}", config_.identity, config_.namespace_,
               config_.name);
  onStartedLeading();
  auto lastRenew = std::chrono::steady_clock::now();
  while (!stopped_) {
    co_await sleep(retry);
    if (stopped_) {
      break;
    }
    const auto started = std::chrono::steady_clock::now();
    const auto deadline = lastRenew + config_.renewDeadline;
    bool renewed = false;
    {
      const InFlight busy(attempting_);
      renewed = co_await attempt(deadline);
    }
    if (renewed) {
      lastRenew = started;
    } else if (std::chrono::steady_clock::now() >= deadline) {
      break;
    }
  }
  if (!stopped_) {
    leading_ = false;
    spdlog::error("leader election: lost lease {}/{}", config_.namespace_, config_.name);
    onStoppedLeading();
  }
}

asio::awaitable<void> LeaderElector::release() {
  stop();
  // An attempt in flight could renew (or acquire) the lease after it was handed back, or make
  // the hand-back fail with a conflict: let it end first (it ends by the renew deadline).
  asio::steady_timer pause(client_.executor());
  while (attempting_) {
    pause.expires_after(std::chrono::milliseconds(5));
    boost::system::error_code ec;
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  if (!leading_) {
    co_return;
  }
  leading_ = false;
  try {
    Json lease = co_await client_.get(kube::resources::leases, config_.namespace_, config_.name);
    if (stringField(lease.value("spec", Json::object()), "holderIdentity") == config_.identity) {
      lease["spec"]["holderIdentity"] = "";
      lease["spec"]["leaseDurationSeconds"] = 1;
      lease["spec"]["renewTime"] = microTimeNow();
      co_await client_.update(kube::resources::leases, lease);
    }
  } catch (const std::exception& e) {
    spdlog::warn("leader election: releasing the lease: {}", e.what());
  }
}

void LeaderElector::stop() {
  stopped_ = true;
  timer_->cancel();
}

} // namespace csiop::runtime
