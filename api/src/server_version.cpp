#include <csiop/api/server_version.hpp>

#include <string>

namespace csiop::api {
namespace {

// A CSIDriver spec field and the minor version whose storage.k8s.io/v1 CSIDriver has it.
struct VersionedField {
  const char* name;
  int since;
  bool (*set)(const CSIDriverSpec&);
};

constexpr VersionedField kCsiDriverFields[] = {
    {"seLinuxMount", 25, [](const CSIDriverSpec& d) { return d.seLinuxMount.has_value(); }},
    {"nodeAllocatableUpdatePeriodSeconds", 33,
     [](const CSIDriverSpec& d) { return d.nodeAllocatableUpdatePeriodSeconds.has_value(); }},
    {"serviceAccountTokenInSecrets", 35,
     [](const CSIDriverSpec& d) { return d.serviceAccountTokenInSecrets.has_value(); }},
    {"preventPodSchedulingIfMissing", 36,
     [](const CSIDriverSpec& d) { return d.preventPodSchedulingIfMissing.has_value(); }},
};

} // namespace

ErrorList checkServerVersion(const DriverDeployment& object, std::optional<int> serverMinor) {
  ErrorList errors;
  if (!serverMinor || !object.spec.csiDriver) {
    return errors;
  }
  for (const VersionedField& field : kCsiDriverFields) {
    if (*serverMinor < field.since && field.set(*object.spec.csiDriver)) {
      errors.push_back(forbidden(
          std::string("spec.csiDriver.") + field.name,
          "needs Kubernetes 1." + std::to_string(field.since) + " or newer: the API server is 1." +
              std::to_string(*serverMinor) + ", whose CSIDriver does not have the field"));
    }
  }
  return errors;
}

} // namespace csiop::api
