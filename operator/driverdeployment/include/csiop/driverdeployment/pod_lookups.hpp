// The pods a volume Event names that no cache holds, looked up one GET each. A kubelet's
// FailedMount names the pod and the volume as the pod calls it: whether that is an inline volume
// of a managed driver (rather than a ConfigMap's, a Secret's, another driver's) only the pod's
// spec says. Watching every pod for it would make every pod anyone runs cost the operator; a GET
// of the few pods whose mounts fail costs only for them. The Event itself is not kept when it
// arrives (its driver is not known yet); the kubelet writes it again as it retries, and that
// sighting finds the pod here.
//
// Bounded: at most kMaxWaiting pods wait for their GET (more are not asked for: their next
// sighting asks again), kPerSecond GETs a second, and an answer (the pod, or that it has no
// volume the volume decisions read, or is gone) is remembered for kRemember, at most kMaxKnown.
//
// Single-threaded: on the client's executor.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include <csiop/driverdeployment/cached_pod.hpp>
#include <csiop/kube/client.hpp>

namespace csiop::driverdeployment {

class PodLookups {
public:
  static constexpr std::size_t kMaxWaiting = 64;
  static constexpr std::size_t kMaxKnown = 4096;
  static constexpr int kPerSecond = 10;
  static constexpr std::chrono::minutes kRemember{10};

  explicit PodLookups(kube::Client& client);
  PodLookups(const PodLookups&) = delete;
  PodLookups& operator=(const PodLookups&) = delete;

  // Asks for pod ns/name, unless it is known (answered within kRemember), waiting, or too many
  // wait. The GET runs later on the client's executor.
  void ask(const std::string& ns, const std::string& name);
  // The pod as looked up, if it has a claim, generic ephemeral or CSI volume; else nullptr.
  const CachedPod* get(const std::string& ns, const std::string& name) const;
  // No GET after this (the process drains).
  void stop() { stopped_ = true; }

  // GETs sent so far (tests, metrics).
  std::size_t lookups() const { return lookups_; }

private:
  struct Known {
    std::optional<CachedPod> pod; // nullopt: gone, or no volume read
    std::chrono::steady_clock::time_point at;
  };
  boost::asio::awaitable<void> drain();
  void remember(const std::string& key, std::optional<CachedPod> pod);

  kube::Client& client_;
  std::deque<std::string> waiting_; // "namespace/name"
  std::map<std::string, Known> known_;
  bool draining_ = false;
  bool stopped_ = false;
  std::size_t lookups_ = 0;
};

} // namespace csiop::driverdeployment
