#include <csiop/driverdeployment/cached_csi_node.hpp>

#include <csiop/api/json_access.hpp>

namespace csiop::driverdeployment {

CachedCSINode decodeCSINode(const api::Json& csiNode) {
  CachedCSINode out;
  out.name = api::metadataField(csiNode, "name");
  const api::Json& drivers = api::member(api::member(csiNode, "spec"), "drivers");
  if (drivers.is_array()) {
    out.drivers.reserve(drivers.size());
    for (const api::Json& d : drivers) {
      out.drivers.push_back(api::stringField(d, "name"));
    }
  }
  return out;
}

} // namespace csiop::driverdeployment
