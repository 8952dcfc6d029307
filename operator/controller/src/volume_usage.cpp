#include <csiop/controller/volume_usage.hpp>

#include <algorithm>

#include <csiop/api/json_access.hpp>

namespace csiop::controller {
namespace {

using api::member;
using api::metadataField;
using api::stringField;

std::vector<std::string> inlineDrivers(const Json& pod) {
  std::vector<std::string> out;
  const Json& volumes = member(member(pod, "spec"), "volumes");
  if (!volumes.is_array()) {
    return out;
  }
  for (const Json& v : volumes) {
    if (std::string d = stringField(member(v, "csi"), "driver"); !d.empty()) {
      out.push_back(std::move(d));
    }
  }
  return out;
}

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

bool podTerminated(const Json& pod) {
  const std::string phase = stringField(member(pod, "status"), "phase");
  return phase == "Succeeded" || phase == "Failed";
}

VolumeUsage volumeUsage(const std::string& driverName, const std::vector<const Json*>& pvs,
                        const std::vector<const Json*>& volumeAttachments,
                        const std::vector<const Json*>& pods) {
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
  for (const Json* pod : pods) {
    const auto drivers = inlineDrivers(*pod);
    if (!podTerminated(*pod) &&
        std::find(drivers.begin(), drivers.end(), driverName) != drivers.end()) {
      u.pods.push_back(metadataField(*pod, "namespace") + "/" + metadataField(*pod, "name"));
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
  if (kind == "Pod") {
    return inlineDrivers(object);
  }
  return {};
}

Json keptVolumes(const Json& pod) {
  const Json& volumes = member(member(pod, "spec"), "volumes");
  Json kept = Json::array();
  if (volumes.is_array()) {
    for (const Json& v : volumes) {
      Json slim = {{"name", member(v, "name")}};
      if (const Json& claim = member(member(v, "persistentVolumeClaim"), "claimName");
          claim.is_string()) {
        slim["persistentVolumeClaim"] = {{"claimName", claim}};
      } else if (const Json& driver = member(member(v, "csi"), "driver"); driver.is_string()) {
        slim["csi"] = {{"driver", driver}};
      } else if (member(v, "ephemeral").is_object()) {
        slim["ephemeral"] = Json::object(); // its claim is named <pod>-<volume>
      } else {
        continue;
      }
      kept.push_back(std::move(slim));
    }
  }
  return kept;
}

bool keepVolumeUser(Json& pod) {
  Json kept = keptVolumes(pod);
  if (kept.empty()) {
    return false;
  }
  const Json& meta = member(pod, "metadata");
  Json slimMeta = Json::object();
  for (const char* key : {"name", "namespace", "uid", "resourceVersion", "deletionTimestamp"}) {
    if (const Json& value = member(meta, key); !value.is_null()) {
      slimMeta[key] = value;
    }
  }
  if (const Json& owners = member(meta, "ownerReferences"); owners.is_array()) {
    Json kinds = Json::array();
    for (const Json& o : owners) {
      kinds.push_back({{"kind", member(o, "kind")}, {"name", member(o, "name")}});
    }
    slimMeta["ownerReferences"] = std::move(kinds);
  }
  Json slim = {{"metadata", std::move(slimMeta)},
               {"spec", {{"nodeName", member(member(pod, "spec"), "nodeName")}, {"volumes", kept}}},
               {"status", {{"phase", member(member(pod, "status"), "phase")}}}};
  for (const char* key : {"apiVersion", "kind"}) {
    if (const Json& value = member(pod, key); !value.is_null()) {
      slim[key] = value;
    }
  }
  pod = std::move(slim);
  return true;
}

} // namespace csiop::controller
