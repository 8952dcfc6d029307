#include <csiop/driverdeployment/pod_lookups.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

namespace csiop::driverdeployment {

namespace asio = boost::asio;

PodLookups::PodLookups(kube::Client& client) : client_(client) {}

void PodLookups::ask(const std::string& ns, const std::string& name) {
  const std::string key = ns + "/" + name;
  if (stopped_ || ns.empty() || name.empty() || waiting_.size() >= kMaxWaiting) {
    return;
  }
  if (const auto it = known_.find(key);
      it != known_.end() && std::chrono::steady_clock::now() - it->second.at < kRemember) {
    return;
  }
  for (const std::string& w : waiting_) {
    if (w == key) {
      return;
    }
  }
  waiting_.push_back(key);
  if (!draining_) {
    draining_ = true;
    asio::co_spawn(client_.executor(), drain(), asio::detached);
  }
}

const CachedPod* PodLookups::get(const std::string& ns, const std::string& name) const {
  const auto it = known_.find(ns + "/" + name);
  return it == known_.end() || !it->second.pod ? nullptr : &*it->second.pod;
}

void PodLookups::remember(const std::string& key, std::optional<CachedPod> pod) {
  if (known_.size() >= kMaxKnown) {
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(known_, [&](const auto& entry) { return now - entry.second.at >= kRemember; });
    if (known_.size() >= kMaxKnown) {
      known_.clear(); // a flood of distinct pods: start over rather than grow
    }
  }
  known_[key] = Known{std::move(pod), std::chrono::steady_clock::now()};
}

asio::awaitable<void> PodLookups::drain() {
  asio::steady_timer pace(client_.executor());
  while (!waiting_.empty() && !stopped_) {
    const std::string key = waiting_.front();
    waiting_.pop_front();
    const std::size_t slash = key.find('/');
    ++lookups_;
    try {
      const std::optional<api::Json> pod = co_await client_.getOpt(
          kube::resources::pods, key.substr(0, slash), key.substr(slash + 1));
      remember(key, pod && usesReadVolumes(*pod) ? std::optional(decodePod(*pod)) : std::nullopt);
    } catch (const std::exception& e) {
      spdlog::debug("looking up pod {} for a volume Event: {}", key, e.what());
    }
    pace.expires_after(std::chrono::milliseconds(1000 / kPerSecond));
    boost::system::error_code ec;
    co_await pace.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  draining_ = false;
}

} // namespace csiop::driverdeployment
