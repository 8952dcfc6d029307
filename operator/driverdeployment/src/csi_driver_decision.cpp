#include <csiop/driverdeployment/csi_driver_decision.hpp>

#include <set>

#include <csiop/api/annotations.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/compare.hpp>
#include <csiop/driverdeployment/ownership.hpp>

namespace csiop::driverdeployment {

using api::Json;

CSIDriverDecision decideCSIDriver(const Json* live, const Json& desired, const std::string& uid,
                                  bool adopt) {
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
  // Server defaults of the immutable fields, for objects created without them.
  const Json attachHave = have.value("attachRequired", Json(true));
  const Json modesHave = have.value("volumeLifecycleModes", Json::array({"Persistent"}));
  if (want.contains("attachRequired") && want["attachRequired"] != attachHave) {
    changed = "attachRequired";
  }
  if (want.contains("volumeLifecycleModes")) {
    std::set<std::string> a(modesHave.begin(), modesHave.end());
    std::set<std::string> b(want["volumeLifecycleModes"].begin(),
                            want["volumeLifecycleModes"].end());
    if (a != b) {
      changed += (changed.empty() ? "" : " and ") + std::string("volumeLifecycleModes");
    }
  }
  // Immutable in storage.k8s.io/v1 only; the legacy CRD updates them in place.
  if (!changed.empty() && desired.value("apiVersion", "") == "storage.k8s.io/v1") {
    return {A::Recreate, changed};
  }
  return {contains(*live, desired) ? A::Keep : A::Apply, {}};
}

} // namespace csiop::driverdeployment
