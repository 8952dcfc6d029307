// The real kubernetes-csi hostpath driver as a node-only driver (CSI ephemeral inline volumes, no
// controller), the DriverDeployment the verified-rollout test and rollout_bench roll out: one
// driver container with its state in a hostPath directory, and a rollout block of the caller's.
#pragma once

#include <string>

namespace csiop::e2e {

struct NodeOnlyDriver {
  std::string name;       // the DriverDeployment
  std::string driverName; // spec.driverName
  std::string namespace_;
  std::string stateDir; // the driver's state directory on the node
  std::string image;
  std::string pullPolicy = "Never";
  std::string firstArg;       // "": --drivername=<driverName>
  bool readOnlyState = false; // the state directory read-only: it registers, cannot publish
  std::string rollout;        // spec.rollout's fields, as YAML lines indented by four spaces
};

std::string nodeOnlyDriverManifest(const NodeOnlyDriver& driver);

} // namespace csiop::e2e
