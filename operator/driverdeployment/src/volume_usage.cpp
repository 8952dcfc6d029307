#include <csiop/driverdeployment/volume_usage.hpp>

#include <algorithm>

#include <csiop/api/json_access.hpp>

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
                        const std::vector<const CachedPod*>& pods) {
  VolumeUsage u;
  for (const Json* pv : pvs) {
    if (stringField(member(member(*pv, "spec"), "csi"), "driver") == driverName) {
      u.persistentVolumes.push_back(metadataField(*pv, "name"));
    }
  }
  for (const Json* va : volumeAttachments) {
    if (stringField(member(*va, "spec"), "attacher") == driverName) {
      u.volumeAttachments.push_back(metadataField(*va, "name"));
    }
  }
  for (const CachedPod* pod : pods) {
    const auto drivers = pod->inlineDrivers();
    if (!pod->terminated() &&
        std::find(drivers.begin(), drivers.end(), driverName) != drivers.end()) {
      u.pods.push_back(pod->key());
    }
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
