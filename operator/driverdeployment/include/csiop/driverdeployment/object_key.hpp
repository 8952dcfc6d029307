// The identity of a Kubernetes object: its API group, kind, namespace and name.
#pragma once

#include <compare>
#include <string>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

struct ObjectKey {
  std::string group;
  std::string kind;
  std::string namespace_;
  std::string name;

  auto operator<=>(const ObjectKey&) const = default;
  [[nodiscard]] std::string str() const; // "DaemonSet csi-x/x-node"
};
ObjectKey keyOf(const api::Json& object);

} // namespace csiop::driverdeployment
