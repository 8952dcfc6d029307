#include <csiop/driverdeployment/ownership.hpp>

#include <algorithm>

#include <csiop/api/annotations.hpp>
#include <csiop/driverdeployment/field_ownership.hpp>

namespace csiop::driverdeployment {

using api::Json;

bool ownedBy(const Json& object, const std::string& ownerUid) {
  if (ownerUid.empty() || !object.contains("metadata")) {
    return false;
  }
  const Json& meta = object["metadata"];
  if (meta.contains("ownerReferences") && meta["ownerReferences"].is_array()) {
    for (const auto& ref : meta["ownerReferences"]) {
      if (ref.is_object() && ref.value("uid", Json()) == ownerUid) {
        return true;
      }
    }
  }
  return meta.contains("annotations") && meta["annotations"].is_object() &&
         meta["annotations"].value(api::kOwnerUidAnnotation, Json()) == ownerUid;
}

bool madeFor(const Json& object, const std::string& ownerUid,
             const std::vector<std::string>& managers) {
  return ownedBy(object, ownerUid) &&
         std::any_of(managers.begin(), managers.end(),
                     [&](const std::string& m) { return writtenBy(object, m); });
}

bool hasFinalizer(const Json& object, const char* finalizer) {
  const Json f = object.value("metadata", Json::object()).value("finalizers", Json::array());
  return f.is_array() && std::find(f.begin(), f.end(), Json(finalizer)) != f.end();
}

} // namespace csiop::driverdeployment
