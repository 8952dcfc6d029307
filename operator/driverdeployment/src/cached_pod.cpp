#include <csiop/driverdeployment/cached_pod.hpp>

#include <cstdint>

#include <csiop/api/json_access.hpp>
#include <csiop/render/render.hpp>

namespace csiop::driverdeployment {
namespace {

using api::member;
using api::stringField;

const Json& volumesOf(const Json& pod) {
  return member(member(pod, "spec"), "volumes");
}

// A volume as the volume decisions read it; nullopt for any other kind (a ConfigMap, a hostPath).
std::optional<CachedPod::Volume> keptVolume(const Json& v) {
  CachedPod::Volume out;
  out.name = stringField(v, "name");
  if (const Json& claim = member(member(v, "persistentVolumeClaim"), "claimName");
      claim.is_string()) {
    out.claimName = claim.get<std::string>();
  } else if (const Json& driver = member(member(v, "csi"), "driver"); driver.is_string()) {
    out.csiDriver = driver.get<std::string>();
  } else if (member(v, "ephemeral").is_object()) {
    out.ephemeral = true;
  } else {
    return std::nullopt;
  }
  return out;
}

void readWaiting(const Json& statuses, bool init, std::vector<CachedPod::WaitingContainer>& out) {
  if (!statuses.is_array()) {
    return;
  }
  for (const Json& c : statuses) {
    const Json& waiting = member(member(c, "state"), "waiting");
    if (std::string reason = stringField(waiting, "reason"); !reason.empty()) {
      out.push_back(
          {stringField(c, "name"), std::move(reason), stringField(waiting, "message"), init});
    }
  }
}

api::WallTime timeField(const Json& object, const char* key) {
  return api::parseRfc3339OrEpoch(stringField(object, key));
}

std::int32_t int32Field(const Json& object, const char* key) {
  const Json& value = member(object, key);
  if (!value.is_number_integer()) {
    return 0;
  }
  const auto n = value.get<std::int64_t>();
  return n < INT32_MIN || n > INT32_MAX ? 0 : static_cast<std::int32_t>(n);
}

void readRestarts(const Json& statuses, bool init,
                  std::vector<CachedPod::RestartedContainer>& out) {
  if (!statuses.is_array()) {
    return;
  }
  for (const Json& c : statuses) {
    const std::int32_t restarts = int32Field(c, "restartCount");
    if (restarts <= 0) {
      continue;
    }
    const Json& last = member(member(c, "lastState"), "terminated");
    std::string message = stringField(last, "message");
    if (message.size() > CachedPod::kMaxTerminationMessage) {
      // The start (the end of a log is the log's to tell), cut where a character begins.
      std::size_t cut = CachedPod::kMaxTerminationMessage;
      while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) {
        --cut;
      }
      message.erase(cut);
    }
    out.push_back({stringField(c, "name"), restarts, int32Field(last, "exitCode"),
                   stringField(last, "reason"), std::move(message), timeField(last, "finishedAt"),
                   init});
  }
}

void readConditions(const Json& conditions, CachedPod& pod) {
  if (!conditions.is_array()) {
    return;
  }
  for (const Json& c : conditions) {
    const std::string type = stringField(c, "type");
    const std::string status = stringField(c, "status");
    if (type == "Ready") {
      pod.ready = status == "True";
      if (pod.ready) {
        pod.readySince = timeField(c, "lastTransitionTime");
      }
    } else if (type == "PodScheduled" && status == "False" &&
               stringField(c, "reason") == "Unschedulable") {
      pod.unschedulable = stringField(c, "message");
    }
  }
}

void readOwners(const Json& owners, CachedPod& pod) {
  if (!owners.is_array()) {
    return;
  }
  for (const Json& o : owners) {
    const std::string kind = stringField(o, "kind");
    pod.drainLeaves = pod.drainLeaves || kind == "DaemonSet" || kind == "Node";
    if (api::isTrue(o, "controller")) {
      pod.controllerUid = stringField(o, "uid");
    }
  }
}

} // namespace

std::vector<std::string> CachedPod::inlineDrivers() const {
  std::vector<std::string> out;
  for (const Volume& v : volumes) {
    if (!v.csiDriver.empty()) {
      out.push_back(v.csiDriver);
    }
  }
  return out;
}

const CachedPod::RestartedContainer*
CachedPod::restartedContainer(const std::string& container) const {
  for (const RestartedContainer& c : restarted) {
    if (c.name == container) {
      return &c;
    }
  }
  return nullptr;
}

std::string CachedPod::crashLoop() const {
  for (const WaitingContainer& c : waiting) {
    if (c.reason == "CrashLoopBackOff") {
      return c.name + ": " + c.message;
    }
  }
  return {};
}

bool workloadPod(const Json& pod) {
  return !stringField(member(member(pod, "metadata"), "labels"), api::kOwnerLabel).empty();
}

bool usesReadVolumes(const Json& pod) {
  const Json& volumes = volumesOf(pod);
  if (!volumes.is_array()) {
    return false;
  }
  for (const Json& v : volumes) {
    if (keptVolume(v)) {
      return true;
    }
  }
  return false;
}

bool keptInPodCache(const Json& pod) {
  return workloadPod(pod) || usesReadVolumes(pod);
}

CachedPod decodePod(const Json& pod) {
  CachedPod out;
  const Json& meta = member(pod, "metadata");
  out.namespace_ = stringField(meta, "namespace");
  out.name = stringField(meta, "name");
  out.uid = stringField(meta, "uid");
  out.deleting = !member(meta, "deletionTimestamp").is_null();
  out.created = timeField(meta, "creationTimestamp");
  const Json& labels = member(meta, "labels");
  out.owner = stringField(labels, api::kOwnerLabel);
  out.revisionHash = stringField(labels, "controller-revision-hash");
  if (out.revisionHash.empty()) {
    out.revisionHash = stringField(labels, "pod-template-hash");
  }
  readOwners(member(meta, "ownerReferences"), out);
  const Json& spec = member(pod, "spec");
  out.nodeName = stringField(spec, "nodeName");
  if (const Json& volumes = member(spec, "volumes"); volumes.is_array()) {
    for (const Json& v : volumes) {
      if (auto kept = keptVolume(v)) {
        out.volumes.push_back(std::move(*kept));
      }
    }
  }
  const Json& status = member(pod, "status");
  out.phase = stringField(status, "phase");
  readConditions(member(status, "conditions"), out);
  readWaiting(member(status, "initContainerStatuses"), true, out.waiting);
  readWaiting(member(status, "containerStatuses"), false, out.waiting);
  readRestarts(member(status, "initContainerStatuses"), true, out.restarted);
  readRestarts(member(status, "containerStatuses"), false, out.restarted);
  out.waiting.shrink_to_fit();
  out.restarted.shrink_to_fit();
  out.volumes.shrink_to_fit();
  return out;
}

} // namespace csiop::driverdeployment
