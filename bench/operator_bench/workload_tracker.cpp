#include "workload_tracker.hpp"

#include <algorithm>
#include <set>

#include <csiop/api/json_access.hpp>

namespace csiop::bench {
namespace {

namespace r = kube::resources;

std::string controllerUidOf(const Json& object) {
  const Json refs =
      object.value("metadata", Json::object()).value("ownerReferences", Json::array());
  for (const Json& ref : refs) {
    if (api::isTrue(ref, "controller")) {
      return api::stringField(ref, "uid");
    }
  }
  return {};
}

std::int64_t integer(const Json& object, const char* section, const char* key) {
  const Json& part = api::member(object, section);
  const Json& value = api::member(part, key);
  return value.is_number_integer() ? value.get<std::int64_t>() : 0;
}

bool observedCurrent(const Json& object) {
  return integer(object, "status", "observedGeneration") >=
         integer(object, "metadata", "generation");
}

} // namespace

bool daemonSetReady(const Json& daemonSet) {
  const std::int64_t desired = integer(daemonSet, "status", "desiredNumberScheduled");
  return observedCurrent(daemonSet) && desired > 0 &&
         integer(daemonSet, "status", "numberReady") == desired &&
         integer(daemonSet, "status", "updatedNumberScheduled") == desired;
}

bool deploymentReady(const Json& deployment) {
  const Json& spec = api::member(deployment, "spec");
  const std::int64_t desired =
      spec.contains("replicas") ? integer(deployment, "spec", "replicas") : 1;
  return observedCurrent(deployment) && desired > 0 &&
         integer(deployment, "status", "readyReplicas") == desired &&
         integer(deployment, "status", "updatedReplicas") == desired;
}

WorkloadTracker::WorkloadTracker(kube::Client& client, kube::ResourceRef resource)
    : resource_(std::move(resource)), watches_(client) {}

void WorkloadTracker::start() {
  watches_.start(r::csidrivers, "",
                 {[this](const std::vector<Json>& items, Clock::time_point at) {
                    std::set<std::string> names;
                    for (const Json& item : items) {
                      names.insert(api::metadataField(item, "name"));
                    }
                    std::erase_if(csiDrivers_,
                                  [&](const auto& entry) { return !names.contains(entry.first); });
                    for (const auto& name : names) {
                      csiDriverSeen(name, at);
                    }
                  },
                  [this](const Json& object, Clock::time_point at) {
                    csiDriverSeen(api::metadataField(object, "name"), at);
                  },
                  [this](const Json& object, Clock::time_point) {
                    csiDrivers_.erase(api::metadataField(object, "name"));
                  }});
  for (const auto& ref : {r::daemonsets, r::deployments}) {
    const std::string kind = ref.kind;
    watches_.start(ref, "",
                   {[this, kind](const std::vector<Json>& items, Clock::time_point at) {
                      std::set<ObjectKey> keys;
                      for (const Json& item : items) {
                        keys.insert(keyOf(kind, item));
                        workloadUpsert(kind, item, at);
                      }
                      std::erase_if(workloads_, [&](const auto& entry) {
                        return entry.first.kind == kind && !keys.contains(entry.first);
                      });
                    },
                    [this, kind](const Json& object, Clock::time_point at) {
                      workloadUpsert(kind, object, at);
                    },
                    [this, kind](const Json& object, Clock::time_point at) {
                      workloadErase(kind, object, at);
                    }});
  }
  watches_.start(resource_, "",
                 {[this](const std::vector<Json>& items, Clock::time_point at) {
                    std::set<std::string> uids;
                    for (const Json& item : items) {
                      uids.insert(api::metadataField(item, "uid"));
                    }
                    for (auto& [name, trial] : trials_) {
                      if (!trial.uid.empty() && !uids.contains(trial.uid) && !trial.deletedAt) {
                        trial.deletedAt = at;
                        evaluate(name, at);
                      }
                    }
                  },
                  [](const Json&, Clock::time_point) {},
                  [this](const Json& object, Clock::time_point at) {
                    const auto cr = byUid_.find(api::metadataField(object, "uid"));
                    if (cr != byUid_.end()) {
                      Trial& trial = trials_.at(cr->second);
                      trial.deletedAt = trial.deletedAt.value_or(at);
                      evaluate(cr->second, at);
                    }
                  }});
}

void WorkloadTracker::expect(const std::string& cr, ExpectedWorkload expected,
                             Clock::time_point sentAt) {
  if (const auto old = trials_.find(cr); old != trials_.end()) {
    byUid_.erase(old->second.uid);
  }
  byCsiDriver_[expected.driverName] = cr;
  Trial trial;
  trial.expected = std::move(expected);
  trial.sentAt = sentAt;
  trials_[cr] = std::move(trial);
}

void WorkloadTracker::created(const std::string& cr, const std::string& uid, Clock::time_point at) {
  Trial& trial = trials_.at(cr);
  trial.uid = uid;
  trial.createdAt = at;
  byUid_[uid] = cr;
  evaluate(cr, at);
}

const Trial* WorkloadTracker::find(const std::string& cr) const {
  const auto it = trials_.find(cr);
  return it == trials_.end() ? nullptr : &it->second;
}

bool WorkloadTracker::owned(const ObjectKey& key, const std::string& uid) const {
  const auto it = workloads_.find(key);
  return it != workloads_.end() && it->second.ownerUid == uid;
}

void WorkloadTracker::workloadUpsert(const std::string& kind, const Json& object,
                                     Clock::time_point at) {
  const ObjectKey key = keyOf(kind, object);
  const std::string ownerUid = controllerUidOf(object);
  const bool ready = kind == "DaemonSet" ? daemonSetReady(object) : deploymentReady(object);
  auto it = workloads_.find(key);
  if (it == workloads_.end() || it->second.ownerUid != ownerUid) {
    workloads_[key] = Workload{ownerUid, ready, at}; // new, or a new incarnation of that name
  } else {
    it->second.ready = ready;
  }
  evaluateOwner(ownerUid, at);
}

void WorkloadTracker::workloadErase(const std::string& kind, const Json& object,
                                    Clock::time_point at) {
  const auto it = workloads_.find(keyOf(kind, object));
  if (it == workloads_.end()) {
    return;
  }
  const std::string ownerUid = it->second.ownerUid;
  workloads_.erase(it);
  evaluateOwner(ownerUid, at);
}

void WorkloadTracker::csiDriverSeen(const std::string& name, Clock::time_point at) {
  csiDrivers_.try_emplace(name, at);
  if (const auto cr = byCsiDriver_.find(name); cr != byCsiDriver_.end()) {
    evaluate(cr->second, at);
  }
}

void WorkloadTracker::evaluateOwner(const std::string& ownerUid, Clock::time_point at) {
  if (const auto cr = byUid_.find(ownerUid); cr != byUid_.end()) {
    evaluate(cr->second, at);
  }
}

void WorkloadTracker::evaluate(const std::string& cr, Clock::time_point at) {
  Trial& t = trials_.at(cr);
  if (t.uid.empty()) {
    return; // the create has not returned yet; created() evaluates
  }
  const ExpectedWorkload& e = t.expected;
  if (!t.childrenAt) {
    const auto csiDriver = csiDrivers_.find(e.driverName);
    // A CSIDriver first seen before the create was sent is not this incarnation's.
    if (csiDriver != csiDrivers_.end() && csiDriver->second >= t.sentAt &&
        owned(e.daemonSet, t.uid) && owned(e.deployment, t.uid)) {
      t.childrenAt = std::max({csiDriver->second, workloads_.at(e.daemonSet).firstSeen,
                               workloads_.at(e.deployment).firstSeen});
    }
  }
  if (t.childrenAt && !t.readyAt && owned(e.daemonSet, t.uid) && owned(e.deployment, t.uid) &&
      workloads_.at(e.daemonSet).ready && workloads_.at(e.deployment).ready) {
    t.readyAt = at;
  }
  if (t.deletedAt && !t.goneAt && !owned(e.daemonSet, t.uid) && !owned(e.deployment, t.uid)) {
    t.goneAt = std::max(at, *t.deletedAt);
  }
}

} // namespace csiop::bench
