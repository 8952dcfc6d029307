#include <csiop/driverdeployment/volume_usage.hpp>

#include <algorithm>
#include <set>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/smoke_volume.hpp>

namespace csiop::driverdeployment {
namespace {

using api::member;
using api::metadataField;
using api::stringField;

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string someOf(std::vector<std::string> names, std::size_t shown) {
  std::sort(names.begin(), names.end());
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) {
    out += (i == 0 ? "" : ", ") + names[i];
  }
  if (names.size() > shown) {
    out += ", ...";
  }
  return " (" + out + ")";
}

} // namespace

VolumeUsage volumeUsage(const std::string& driverName, const std::vector<const Json*>& pvs,
                        const std::vector<const Json*>& volumeAttachments,
                        const std::vector<const CachedPod*>& pods,
                        const std::optional<SmokeTestOwner>& owner) {
  const auto test = [&owner](const std::string& ns, const std::string& name) {
    return owner && smokeTestObject(owner->name, owner->namespace_, ns, name);
  };
  VolumeUsage u;
  std::set<std::string> testVolumes;
  std::set<std::string> retained;
  for (const Json* pv : pvs) {
    const Json& spec = member(*pv, "spec");
    if (stringField(member(spec, "csi"), "driver") != driverName) {
      continue;
    }
    const std::string name = metadataField(*pv, "name");
    const Json& claim = member(spec, "claimRef");
    if (!test(stringField(claim, "namespace"), stringField(claim, "name"))) {
      u.persistentVolumes.push_back(name);
    } else if (stringField(spec, "persistentVolumeReclaimPolicy", "Delete") == "Delete") {
      u.tests.push_back(name);
      testVolumes.insert(name);
    } else {
      retained.insert(name);
    }
  }
  for (const Json* va : volumeAttachments) {
    const Json& spec = member(*va, "spec");
    if (stringField(spec, "attacher") != driverName) {
      continue;
    }
    const std::string name = metadataField(*va, "name");
    const std::string volume = stringField(member(spec, "source"), "persistentVolumeName");
    if (testVolumes.contains(volume) || retained.contains(volume)) {
      u.tests.push_back(name); // detached by the driver as its test pod goes
    } else {
      u.volumeAttachments.push_back(name);
    }
  }
  for (const CachedPod* pod : pods) {
    const auto drivers = pod->inlineDrivers();
    if (pod->terminated() ||
        std::find(drivers.begin(), drivers.end(), driverName) == drivers.end()) {
      continue;
    }
    (test(pod->namespace_, pod->name) ? u.tests : u.pods).push_back(pod->key());
  }
  return u;
}

std::string describe(const VolumeUsage& u, std::size_t names) {
  std::vector<std::string> parts;
  if (!u.persistentVolumes.empty()) {
    parts.push_back(plural(u.persistentVolumes.size(), "PersistentVolume", "PersistentVolumes") +
                    someOf(u.persistentVolumes, names));
  }
  if (!u.volumeAttachments.empty()) {
    parts.push_back(plural(u.volumeAttachments.size(), "VolumeAttachment", "VolumeAttachments") +
                    someOf(u.volumeAttachments, names));
  }
  if (!u.pods.empty()) {
    parts.push_back(plural(u.pods.size(), "pod with an inline volume", "pods with inline volumes") +
                    someOf(u.pods, names));
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    out += (i == 0 ? "" : (i + 1 == parts.size() ? " and " : ", ")) + parts[i];
  }
  return out;
}

std::string describeTests(const VolumeUsage& u, std::size_t names) {
  return plural(u.tests.size(), "object of the smoke tests", "objects of the smoke tests") +
         someOf(u.tests, names);
}

std::vector<std::string> driversUsedBy(const Json& object) {
  const std::string kind = stringField(object, "kind");
  if (kind == "PersistentVolume") {
    std::string d = stringField(member(member(object, "spec"), "csi"), "driver");
    return d.empty() ? std::vector<std::string>{} : std::vector<std::string>{std::move(d)};
  }
  if (kind == "VolumeAttachment") {
    std::string d = stringField(member(object, "spec"), "attacher");
    return d.empty() ? std::vector<std::string>{} : std::vector<std::string>{std::move(d)};
  }
  return {};
}

} // namespace csiop::driverdeployment
