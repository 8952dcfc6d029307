#include "pod_watch.hpp"

#include <csiop/api/json_access.hpp>

namespace csiop::bench {
namespace {

namespace r = kube::resources;
using kube::Json;

// What is read of a pod: where it is, whether a DaemonSet owns it, whether it is Ready; and its
// resourceVersion, which the watch goes on from when the server ends it (without it, every
// restart would replay the events since the list, counted again).
kube::FieldMask podFields() {
  return kube::FieldMask()
      .keep({"metadata", "resourceVersion"})
      .keep({"metadata", "name"})
      .keep({"metadata", "namespace"})
      .keep({"metadata", "ownerReferences", "kind"})
      .keep({"status", "conditions", "type"})
      .keep({"status", "conditions", "status"});
}

std::string keyOf(const Json& pod) {
  return api::metadataField(pod, "namespace") + "/" + api::metadataField(pod, "name");
}

bool ownedByDaemonSet(const Json& pod) {
  for (const Json& ref : api::member(api::member(pod, "metadata"), "ownerReferences")) {
    if (api::stringField(ref, "kind") == "DaemonSet") {
      return true;
    }
  }
  return false;
}

bool readyTrue(const Json& pod) {
  for (const Json& c : api::member(api::member(pod, "status"), "conditions")) {
    if (api::stringField(c, "type") == "Ready") {
      return api::stringField(c, "status") == "True";
    }
  }
  return false;
}

} // namespace

PodWatch::PodWatch(kube::Client& client) : watches_(client) {}

void PodWatch::start() {
  watches_.start(
      r::pods, "",
      {[this](const std::vector<Json>& items, Clock::time_point at) { listed(items, at); },
       [this](const Json& pod, Clock::time_point at) { upsert(pod, at); },
       [this](const Json& pod, Clock::time_point at) { erase(pod, at); }},
      podFields());
}

void PodWatch::expectReady(const std::string& ns, int count) {
  Namespace& n = namespaces_[ns];
  n.wantReady = count;
  n.readyAt.reset();
  evaluate(ns, Clock::now());
}

void PodWatch::expectGone(const std::string& ns) {
  Namespace& n = namespaces_[ns];
  n.wantGone = true;
  n.goneAt.reset();
  evaluate(ns, Clock::now());
}

std::optional<Clock::time_point> PodWatch::readyAt(const std::string& ns) const {
  const auto it = namespaces_.find(ns);
  return it == namespaces_.end() ? std::nullopt : it->second.readyAt;
}

std::optional<Clock::time_point> PodWatch::goneAt(const std::string& ns) const {
  const auto it = namespaces_.find(ns);
  return it == namespaces_.end() ? std::nullopt : it->second.goneAt;
}

int PodWatch::ready(const std::string& ns) const {
  const auto it = namespaces_.find(ns);
  return it == namespaces_.end() ? 0 : it->second.ready;
}

int PodWatch::present(const std::string& ns) const {
  const auto it = namespaces_.find(ns);
  return it == namespaces_.end() ? 0 : it->second.present;
}

void PodWatch::count(const Pod& pod, int sign) {
  if (!pod.nodePlugin) {
    return;
  }
  Namespace& n = namespaces_[pod.namespace_];
  n.present += sign;
  n.ready += pod.ready ? sign : 0;
}

void PodWatch::evaluate(const std::string& ns, Clock::time_point at) {
  Namespace& n = namespaces_[ns];
  if (n.wantReady && !n.readyAt && n.ready >= *n.wantReady) {
    n.readyAt = at;
  }
  if (n.wantGone && !n.goneAt && n.present == 0) {
    n.goneAt = at;
  }
}

void PodWatch::listed(const std::vector<Json>& items, Clock::time_point at) {
  ++lists_;
  pods_.clear();
  for (auto& [name, n] : namespaces_) {
    n.present = 0;
    n.ready = 0;
  }
  for (const Json& pod : items) {
    const Pod p{api::metadataField(pod, "namespace"), ownedByDaemonSet(pod), readyTrue(pod)};
    count(p, 1);
    pods_[keyOf(pod)] = p;
  }
  for (const auto& [name, n] : namespaces_) {
    evaluate(name, at);
  }
}

void PodWatch::upsert(const Json& pod, Clock::time_point at) {
  const Pod now{api::metadataField(pod, "namespace"), ownedByDaemonSet(pod), readyTrue(pod)};
  const auto [it, added] = pods_.try_emplace(keyOf(pod), now);
  if (added) {
    ++changes_.added;
  } else {
    ++changes_.modified;
    count(it->second, -1);
    it->second = now;
  }
  count(now, 1);
  evaluate(now.namespace_, at);
}

void PodWatch::erase(const Json& pod, Clock::time_point at) {
  ++changes_.deleted;
  const auto it = pods_.find(keyOf(pod));
  if (it == pods_.end()) {
    return;
  }
  const std::string ns = it->second.namespace_;
  count(it->second, -1);
  pods_.erase(it);
  evaluate(ns, at);
}

} // namespace csiop::bench
