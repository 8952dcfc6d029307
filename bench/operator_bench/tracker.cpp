#include "tracker.hpp"

#include <csiop/api/json_access.hpp>
#include <csiop/render/render.hpp>

namespace csiop::bench {
namespace {

namespace r = kube::resources;

std::string ownerLabelOf(const Json& object) {
  const Json labels = object.value("metadata", Json::object()).value("labels", Json::object());
  return api::stringField(labels, api::kOwnerLabel);
}

std::string controllerUidOf(const Json& object) {
  const Json refs =
      object.value("metadata", Json::object()).value("ownerReferences", Json::array());
  for (const Json& ref : refs) {
    if (api::stringField(ref, "kind") == api::kKind && api::isTrue(ref, "controller")) {
      return api::stringField(ref, "uid");
    }
  }
  return {};
}

bool readyTrue(const Json& dd) {
  const Json conditions = dd.value("status", Json::object()).value("conditions", Json::array());
  for (const Json& c : conditions) {
    if (api::stringField(c, "type") == "Ready") {
      return api::stringField(c, "status") == "True";
    }
  }
  return false;
}

bool isDriverDeployment(const kube::ResourceRef& ref) {
  return ref == r::driverdeployments;
}

} // namespace

Tracker::Tracker(kube::Client& client) : watches_(client) {}

const std::vector<kube::ResourceRef>& Tracker::childKinds() {
  static const std::vector<kube::ResourceRef> kinds = {
      r::namespaces,          r::csidrivers,   r::serviceaccounts, r::clusterroles,
      r::clusterrolebindings, r::roles,        r::rolebindings,    r::daemonsets,
      r::deployments,         r::statefulsets, r::storageclasses};
  return kinds;
}

WatchSet::Handlers Tracker::handlersFor(const kube::ResourceRef& ref) {
  return {[this, ref](const std::vector<Json>& items, Clock::time_point at) {
            replaceAll(ref, items, at);
          },
          [this, ref](const Json& object, Clock::time_point at) { upsert(ref, object, at); },
          [this, ref](const Json& object, Clock::time_point at) { erase(ref, object, at); }};
}

void Tracker::start() {
  for (const auto& ref : childKinds()) {
    watches_.start(ref, api::kOwnerLabel, handlersFor(ref));
  }
  watches_.start(r::driverdeployments, kBenchLabel, handlersFor(r::driverdeployments));
}

void Tracker::expect(const std::string& name, std::vector<ObjectKey> expected) {
  Timing t;
  t.expected = std::move(expected);
  timings_[name] = std::move(t);
  deleted_.erase(name);
}

void Tracker::created(const std::string& name, const std::string& uid, Clock::time_point at) {
  Timing& t = timings_.at(name);
  t.uid = uid;
  t.createdAt = at;
  evaluate(name, at);
}

bool Tracker::gone(const std::string& name) const {
  return !driverDeployments_.contains(name) && remaining(name).empty();
}

std::optional<Clock::time_point> Tracker::deletedAt(const std::string& name) const {
  const auto it = deleted_.find(name);
  return it == deleted_.end() ? std::nullopt : std::optional(it->second);
}

std::vector<ObjectKey> Tracker::remaining(const std::string& name) const {
  std::vector<ObjectKey> out;
  for (const auto& [key, live] : live_) {
    if (live.owner == name && key.kind != "Namespace") {
      out.push_back(key);
    }
  }
  return out;
}

void Tracker::evaluate(const std::string& name, Clock::time_point at) {
  const auto it = timings_.find(name);
  if (it == timings_.end() || it->second.uid.empty()) {
    return; // not created by this run yet
  }
  Timing& t = it->second;
  if (!t.childrenAt) {
    std::optional<Clock::time_point> last;
    bool all = true;
    for (const auto& key : t.expected) {
      const auto l = live_.find(key);
      // Every child but the Namespace carries an owner reference to this incarnation.
      if (l == live_.end() || (key.kind != "Namespace" && l->second.ownerUid != t.uid)) {
        all = false;
        break;
      }
      if (!last || l->second.firstSeen > *last) {
        last = l->second.firstSeen;
      }
    }
    if (all && last) {
      t.childrenAt = std::max(*last, t.createdAt);
    }
  }
  if (!t.readyAt) {
    const auto dd = driverDeployments_.find(name);
    if (dd != driverDeployments_.end() && dd->second.uid == t.uid && dd->second.ready) {
      t.readyAt = std::max(at, t.createdAt);
    }
  }
}

void Tracker::upsert(const kube::ResourceRef& ref, const Json& object, Clock::time_point at) {
  if (isDriverDeployment(ref)) {
    const std::string name = api::metadataField(object, "name");
    auto& state = driverDeployments_[name];
    state.uid = api::metadataField(object, "uid");
    state.ready = readyTrue(object);
    evaluate(name, at);
    return;
  }
  const ObjectKey key = keyOf(ref.kind, object);
  const std::string owner = ownerLabelOf(object);
  const std::string ownerUid = controllerUidOf(object);
  auto it = live_.find(key);
  if (it == live_.end() || it->second.ownerUid != ownerUid) {
    live_[key] = Live{owner, ownerUid, at}; // new, or a new incarnation of that name
  } else {
    it->second.owner = owner;
  }
  evaluate(owner, at);
}

void Tracker::erase(const kube::ResourceRef& ref, const Json& object, Clock::time_point at) {
  const std::string name = api::metadataField(object, "name");
  if (isDriverDeployment(ref)) {
    driverDeployments_.erase(name);
    deleted_[name] = at;
    return;
  }
  live_.erase(keyOf(ref.kind, object));
}

void Tracker::replaceAll(const kube::ResourceRef& ref, const std::vector<Json>& items,
                         Clock::time_point at) {
  std::set<std::string> names;
  std::set<ObjectKey> keys;
  for (const Json& item : items) {
    names.insert(api::metadataField(item, "name"));
    keys.insert(keyOf(ref.kind, item));
    upsert(ref, item, at);
  }
  if (isDriverDeployment(ref)) {
    for (auto it = driverDeployments_.begin(); it != driverDeployments_.end();) {
      if (!names.contains(it->first)) {
        deleted_[it->first] = at;
        it = driverDeployments_.erase(it);
      } else {
        ++it;
      }
    }
    return;
  }
  for (auto it = live_.begin(); it != live_.end();) {
    it = it->first.kind == ref.kind && !keys.contains(it->first) ? live_.erase(it) : std::next(it);
  }
}

} // namespace csiop::bench
