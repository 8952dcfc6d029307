#include <csiop/driverdeployment/unmanaged.hpp>

#include <csiop/driverdeployment/object_key.hpp>

namespace csiop::driverdeployment {

using api::Json;

api::UnmanagedObject unmanagedEntry(const Json& child) {
  const ObjectKey k = keyOf(child);
  api::UnmanagedObject u;
  u.kind = k.kind;
  if (!k.namespace_.empty()) {
    u.namespace_ = k.namespace_;
  }
  u.name = k.name;
  return u;
}

} // namespace csiop::driverdeployment
