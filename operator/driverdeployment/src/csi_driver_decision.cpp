#include <csiop/driverdeployment/csi_driver_decision.hpp>

#include <charconv>
#include <set>

#include <csiop/api/annotations.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/compare.hpp>
#include <csiop/driverdeployment/ownership.hpp>

namespace csiop::driverdeployment {

using api::Json;

namespace {

// The API server's default of a CSIDriver spec field, for objects created without it.
Json serverDefault(const std::string& field) {
  if (field == "attachRequired") {
    return true;
  }
  if (field == "podInfoOnMount") {
    return false;
  }
  if (field == "volumeLifecycleModes") {
    return Json::array({"Persistent"});
  }
  if (field == "fsGroupPolicy") {
    return "ReadWriteOnceWithFSType";
  }
  return nullptr;
}

// Whether the live spec holds `want` for `field` (a list of modes compared as a set).
bool sameSpecValue(const std::string& field, const Json& want, const Json& have) {
  const Json held = have.contains(field) ? have[field] : serverDefault(field);
  if (want.is_array() && held.is_array()) {
    const std::set<Json> a(want.begin(), want.end());
    const std::set<Json> b(held.begin(), held.end());
    return a == b;
  }
  return want == held;
}

} // namespace

std::vector<std::string> csiDriverImmutableFields(std::optional<int> serverMinor) {
  std::vector<std::string> fields = {"attachRequired", "volumeLifecycleModes"};
  if (serverMinor && *serverMinor < 29) {
    fields.insert(fields.end(), {"podInfoOnMount", "fsGroupPolicy"});
  }
  return fields;
}

std::optional<int> serverMinorVersion(std::string_view minor) {
  int value = 0;
  const auto [end, error] = std::from_chars(minor.data(), minor.data() + minor.size(), value);
  if (error != std::errc() || end == minor.data() ||
      (end != minor.data() + minor.size() &&
       std::string_view(end, minor.data() + minor.size()) != "+")) {
    return std::nullopt;
  }
  return value;
}

Json csiDriverClaim(const Json& desired, const std::vector<std::string>& immutable) {
  Json claim = {{"apiVersion", desired["apiVersion"]},
                {"kind", "CSIDriver"},
                {"metadata", desired["metadata"]},
                {"spec", Json::object()}};
  const Json& spec = desired["spec"];
  for (const std::string& field : immutable) {
    if (spec.contains(field)) { // volumeLifecycleModes is not in the legacy API
      claim["spec"][field] = spec[field];
    }
  }
  return claim;
}

CSIDriverDecision decideCSIDriver(const Json* live, const Json& desired, const std::string& uid,
                                  bool adopt, const std::vector<std::string>& immutable) {
  using A = CSIDriverDecision::Action;
  if (live == nullptr) {
    return {A::Create, {}};
  }
  // Adoption takes only what no DriverDeployment manages (no owner label).
  const bool adoptable =
      adopt &&
      api::stringField(live->value("metadata", Json::object()).value("labels", Json::object()),
                       api::kOwnerLabel)
          .empty();
  if (!ownedBy(*live, uid) && !adoptable) {
    const Json& meta = (*live)["metadata"];
    const std::string owner =
        meta.contains("labels") && meta["labels"].contains(api::kOwnerLabel)
            ? "DriverDeployment \"" + meta["labels"][api::kOwnerLabel].get<std::string>() + "\""
            : "a CSIDriver object not managed by csi-operator";
    return {A::Conflict, owner};
  }
  const Json& have = live->value("spec", Json::object());
  const Json& want = desired["spec"];
  std::string changed;
  for (const std::string& field : immutable) {
    if (want.contains(field) && !sameSpecValue(field, want[field], have)) {
      changed += (changed.empty() ? "" : " and ") + field;
    }
  }
  // Immutable in storage.k8s.io/v1 only; the legacy CRD updates them in place.
  if (!changed.empty() && desired.value("apiVersion", "") == "storage.k8s.io/v1") {
    return {A::Recreate, changed};
  }
  return {contains(*live, desired) ? A::Keep : A::Apply, {}};
}

} // namespace csiop::driverdeployment
