#include <csiop/driverdeployment/volume_health.hpp>

#include <algorithm>
#include <set>
#include <tuple>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/registration_problems.hpp>

namespace csiop::driverdeployment {
namespace {

bool recent(const VolumeEvent& e, api::WallTime now) {
  return now - e.last <= kVolumeEventWindow;
}

// The external-provisioner's Events name their component "<provisioner>_<identity>".
bool fromDriversProvisioner(const VolumeEvent& e, const std::string& driver) {
  return e.component.size() > driver.size() && e.component.compare(0, driver.size(), driver) == 0 &&
         e.component[driver.size()] == '_';
}

// A pod that still waits for its volumes: neither running nor finished.
bool waits(const CachedPod& pod) {
  return !pod.deleting && (pod.phase.empty() || pod.phase == "Pending");
}

bool inlineVolumeOf(const CachedPod& pod, const std::string& volume, const std::string& driver) {
  return std::any_of(pod.volumes.begin(), pod.volumes.end(), [&](const CachedPod::Volume& v) {
    return v.name == volume && v.csiDriver == driver;
  });
}

// The failures, one per (reason, object, volume): the newest sighting.
class Collector {
public:
  void add(VolumeFailure f) {
    f.message = printableLine(f.message, kVolumeFailureMessage);
    const auto key = std::tuple(f.reason, f.object, f.volume);
    const auto it = byKey_.find(key);
    if (it == byKey_.end()) {
      byKey_.emplace(key, std::move(f));
    } else if (f.last > it->second.last) {
      it->second = std::move(f);
    }
  }

  // Attach failures counted once per volume, the newest sighting (a VolumeAttachment's error
  // and its pods' Events say the same).
  VolumeHealth result() && {
    VolumeHealth out;
    std::vector<VolumeFailure> all;
    std::map<std::string, VolumeFailure> attaches;
    for (auto& [key, f] : byKey_) {
      if (f.reason == volume_health::kAttachFailed && !f.volume.empty()) {
        const auto [it, added] = attaches.try_emplace(f.volume, f);
        if (!added && f.last > it->second.last) {
          it->second = std::move(f);
        }
        continue;
      }
      all.push_back(std::move(f));
    }
    for (auto& [volume, f] : attaches) {
      all.push_back(std::move(f));
    }
    for (const VolumeFailure& f : all) {
      ++out.counts[f.reason];
      out.objects.insert(f.object);
    }
    std::sort(all.begin(), all.end(), [](const VolumeFailure& a, const VolumeFailure& b) {
      return std::tie(b.last, a.object, a.reason) < std::tie(a.last, b.object, b.reason);
    });
    if (all.size() > kNamedVolumeFailures) {
      all.resize(kNamedVolumeFailures);
    }
    out.named = std::move(all);
    return out;
  }

private:
  std::map<std::tuple<std::string, std::string, std::string>, VolumeFailure> byKey_;
};

} // namespace

std::size_t VolumeHealth::total() const {
  std::size_t n = 0;
  for (const auto& [reason, count] : counts) {
    n += count;
  }
  return n;
}

std::string VolumeHealth::summary() const {
  if (counts.empty()) {
    return "";
  }
  std::string out;
  for (const char* reason : {volume_health::kProvisioningFailed, volume_health::kAttachFailed,
                             volume_health::kDetachFailed, volume_health::kMountFailed}) {
    if (const auto it = counts.find(reason); it != counts.end()) {
      out += (out.empty() ? "" : ", ") + std::to_string(it->second) + " " + reason;
    }
  }
  out += ":";
  for (std::size_t i = 0; i < named.size(); ++i) {
    const VolumeFailure& f = named[i];
    out += (i == 0 ? " " : "; ") + f.object +
           (f.volume.empty() ? "" : " (volume " + f.volume + ")") + ": " + f.message;
  }
  return out;
}

std::string namedVolume(std::string_view message) {
  constexpr std::string_view kFor = "for volume \"";
  const std::size_t at = message.find(kFor);
  if (at == std::string_view::npos) {
    return "";
  }
  const std::size_t begin = at + kFor.size();
  const std::size_t end = message.find('"', begin);
  return end == std::string_view::npos ? "" : std::string(message.substr(begin, end - begin));
}

std::string volumeEventSelector(std::string_view reason) {
  return "type=Warning,reason=" + std::string(reason);
}

VolumeEvent volumeEventOf(const api::Json& event) {
  const api::Json& involved = api::member(event, "involvedObject");
  VolumeEvent out;
  out.reason = api::stringField(event, "reason");
  out.kind = api::stringField(involved, "kind");
  out.namespace_ = api::stringField(involved, "namespace");
  out.name = api::stringField(involved, "name");
  out.message = api::stringField(event, "message");
  out.component = api::stringField(api::member(event, "source"), "component");
  if (out.component.empty()) {
    out.component = api::stringField(event, "reportingComponent");
  }
  for (const std::string& text :
       {api::stringField(api::member(event, "series"), "lastObservedTime"),
        api::stringField(event, "lastTimestamp"), api::stringField(event, "eventTime"),
        api::metadataField(event, "creationTimestamp")}) {
    if (const auto at = api::parseRfc3339(text)) {
      out.last = *at;
      break;
    }
  }
  return out;
}

std::string volumeEventDriver(
    const VolumeEvent& event,
    const std::function<std::string(const std::string& persistentVolume)>& persistentVolumeDriver,
    const std::function<const CachedPod*(const std::string& ns, const std::string& name)>& pod) {
  if (event.reason == kProvisioningFailedEvent) {
    const std::size_t underscore = event.component.find('_');
    return underscore == std::string::npos ? "" : event.component.substr(0, underscore);
  }
  const std::string volume = namedVolume(event.message);
  if (volume.empty()) {
    return "";
  }
  if (std::string driver = persistentVolumeDriver(volume); !driver.empty()) {
    return driver;
  }
  if (event.kind == "Pod") {
    if (const CachedPod* p = pod(event.namespace_, event.name)) {
      for (const CachedPod::Volume& v : p->volumes) {
        if (v.name == volume) {
          return v.csiDriver;
        }
      }
    }
  }
  return "";
}

std::vector<std::string> claimsToLookUp(const std::string& driver,
                                        const std::vector<VolumeEvent>& events, api::WallTime now) {
  std::set<std::string> out;
  for (const VolumeEvent& e : events) {
    if (e.reason == kProvisioningFailedEvent && e.kind == "PersistentVolumeClaim" &&
        recent(e, now) && fromDriversProvisioner(e, driver)) {
      out.insert(e.namespace_ + "/" + e.name);
    }
  }
  return {out.begin(), out.end()};
}

VolumeHealth volumeHealth(const std::string& driver, const std::vector<VolumeEvent>& events,
                          const std::vector<AttachmentState>& attachments,
                          const DriverVolumeView& view, api::WallTime now) {
  Collector found;
  for (const VolumeEvent& e : events) {
    if (!recent(e, now)) {
      continue;
    }
    if (e.reason == kProvisioningFailedEvent) {
      if (e.kind != "PersistentVolumeClaim" || !fromDriversProvisioner(e, driver)) {
        continue;
      }
      const ClaimPhase phase = view.claim(e.namespace_, e.name);
      if (phase == ClaimPhase::Pending || phase == ClaimPhase::Unknown) {
        found.add({volume_health::kProvisioningFailed,
                   "PersistentVolumeClaim " + e.namespace_ + "/" + e.name, "", e.message, e.last});
      }
      continue;
    }
    const bool mount = e.reason == kFailedMountEvent;
    if ((!mount && e.reason != kFailedAttachVolumeEvent) || e.kind != "Pod") {
      continue;
    }
    const CachedPod* pod = view.pod(e.namespace_, e.name);
    const std::string volume = namedVolume(e.message);
    if (pod == nullptr || !waits(*pod) || volume.empty() ||
        !(view.isDriverVolume(volume) || inlineVolumeOf(*pod, volume, driver))) {
      continue;
    }
    found.add({mount ? volume_health::kMountFailed : volume_health::kAttachFailed,
               "Pod " + e.namespace_ + "/" + e.name, volume, e.message, e.last});
  }
  for (const AttachmentState& a : attachments) {
    if (a.attachError && !a.attached) {
      found.add({volume_health::kAttachFailed, "VolumeAttachment " + a.name, a.persistentVolume,
                 "on node " + a.node + ": " + *a.attachError, a.attachErrorAt});
    }
    if (a.detachError) {
      found.add({volume_health::kDetachFailed, "VolumeAttachment " + a.name, a.persistentVolume,
                 "on node " + a.node + ": " + *a.detachError, a.detachErrorAt});
    }
  }
  return std::move(found).result();
}

} // namespace csiop::driverdeployment
