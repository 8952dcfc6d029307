// What the benchmark applies: hostpath-like DriverDeployments (examples/hostpath.yaml with its
// controller sidecars in a StatefulSet, and a name, driver name, namespace and StorageClass of
// their own), the objects the operator must
// create for each (from the render library, exactly what `csi-operator render` prints), and
// the CSINode registrations a kubelet would write for node-driver-registrar.
#pragma once

#include <compare>
#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::bench {

using api::Json;

// Label on every DriverDeployment the benchmark creates (leftovers are found by it).
inline constexpr const char* kBenchLabel = "csiop-bench";

struct ObjectKey {
  std::string kind;
  std::string namespace_; // "" for cluster-scoped objects
  std::string name;

  auto operator<=>(const ObjectKey&) const = default;
  std::string str() const;
};
ObjectKey keyOf(const Json& object);                          // kind from the object
ObjectKey keyOf(const std::string& kind, const Json& object); // list items carry no kind

// bench-N.csi.example.com for bench-N.
std::string driverNameFor(const std::string& name);

// The DriverDeployment `name` in namespace `name`; validated with the operator's own rules
// (throws std::runtime_error listing the problems).
Json driverDeployment(const std::string& name);

// `dd` itself, once the operator's own rules accept it (throws std::runtime_error listing the
// problems otherwise).
Json validated(Json dd);

// Every object `csi-operator render` produces for it (Namespace, CSIDriver, ServiceAccounts,
// RBAC, DaemonSet, StatefulSet, StorageClass) but those of every driver at once
// (render::isShared), which carry no owner label.
std::vector<ObjectKey> expectedObjects(const Json& driverDeployment);

// The server-side apply body that registers `drivers` in the CSINode of `node` (a v1 Node), as
// the kubelet does when node-driver-registrar calls it. drivers empty: withdraws the benchmark's
// registrations (its field manager then owns no entry).
Json csiNodeRegistration(const Json& node, const std::vector<std::string>& drivers);

} // namespace csiop::bench
