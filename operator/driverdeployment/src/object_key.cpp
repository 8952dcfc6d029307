#include <csiop/driverdeployment/object_key.hpp>

#include <csiop/api/json_access.hpp>

namespace csiop::driverdeployment {

std::string ObjectKey::str() const {
  return kind + " " + (namespace_.empty() ? name : namespace_ + "/" + name);
}

ObjectKey keyOf(const api::Json& object) {
  const std::string apiVersion = api::stringField(object, "apiVersion");
  const auto slash = apiVersion.find('/');
  return {slash == std::string::npos ? "" : apiVersion.substr(0, slash),
          api::stringField(object, "kind"), api::metadataField(object, "namespace"),
          api::metadataField(object, "name")};
}

} // namespace csiop::driverdeployment
