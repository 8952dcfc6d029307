// The DriverDeployment rollout_bench rolls out: the real kubernetes-csi hostpath driver as a
// node-only driver (CSI ephemeral inline volumes), with a node plugin on the real node and on
// every fake node, in one of the shapes a scenario needs.
#pragma once

#include <string>

namespace csiop::bench {

inline constexpr const char* kDd = "rollout";
inline constexpr const char* kDriver = "rollout.hostpath.csiop.dev";
inline constexpr const char* kNamespace = "csi-rollout";

struct DriverShape {
  std::string image{};
  std::string pullPolicy = "Never";
  std::string arg{};          // the first driver argument ("": --drivername=<kDriver>)
  bool readOnlyState = false; // the driver's state directory read-only: it cannot publish
  bool verified = true;       // spec.rollout.type Verified (else Unverified: the DaemonSet's own)
  bool prePull = true;        // spec.rollout.prePullImages
};

std::string driverManifest(const DriverShape& shape);

} // namespace csiop::bench
