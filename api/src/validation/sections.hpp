// The sections of validate(), one per part of the spec. Each adds what it finds to the
// Validator; ports go from one section to the next because the pods share them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <vector>

#include <csiop/api/secrets.hpp>

#include "validator.hpp"

namespace csiop::api::validation {

using Ports = std::map<std::int64_t, std::string>; // port -> the field that uses it

// The operator's own volumes of each pod (names a user's volume may not take).
extern const std::set<std::string> kNodeVolumes;
extern const std::set<std::string> kControllerVolumes;
extern const std::set<std::string> kWindowsNodeVolumes;

// spec.csiDriver.
void csiDriver(Validator& v, const DriverDeploymentSpec& spec);

// The node plugin pod but its driver container (nodeDriver); returns the ports its
// sidecars use.
Ports node(Validator& v, const DriverDeploymentSpec& spec);

// The node plugin's driver container; `reserved`: the ports of the pod's other containers.
void nodeDriver(Validator& v, const DriverDeploymentSpec& spec, const Ports& reserved);

// spec.windowsNode: the Windows node plugin, its driver container included.
void windowsNode(Validator& v, const DriverDeploymentSpec& spec);

// The controller side; `nodePorts`: the node plugin pod's sidecar ports. Returns the ports
// the node plugin's driver container must leave free (its sidecars', and the controller
// sidecars' when they run in the same pod).
Ports controller(Validator& v, const DriverDeploymentSpec& spec, const Ports& nodePorts);

// Driver container checks that need the merged (effective) view of one pod: spec.driver
// with the pod's override. Returns the names of the pod's volumes.
std::set<std::string> driverInPod(Validator& v, const DriverDeploymentSpec& spec,
                                  const std::optional<DriverContainer>& override,
                                  const std::string& overridePath,
                                  const std::set<std::string>& reservedVolumes,
                                  const std::set<std::string>& reservedPaths,
                                  const Ports& reservedPorts);

// The containers a user adds to a pod (`path`: spec.node or spec.controller), which mount
// the pod's `volumes`.
void podContainers(Validator& v, const std::string& path, const PodSettings& pod,
                   const std::set<std::string>& volumes, const std::string& driverName);
// The name of a pod's driver container: its override's, spec.driver's, or csi-driver.
std::string driverName(const DriverDeploymentSpec& spec,
                       const std::optional<DriverContainer>& override);

// The port of a sidecar's endpoint in its pod: free, then taken. The field named is
// httpEndpoint when `text` (the endpoint as written) is set, else the port shorthand.
void reservePort(Validator& v, Ports& reserved, const std::string& path,
                 const std::optional<std::string>& text, const char* portField,
                 const HttpEndpoint& endpoint);

// What the node plugins' shared fields may hold on each OS.
struct NodePluginRules {
  bool whenVolumesUnused = false; // the operator's own updateStrategy type is allowed
  const char* os = nullptr;       // the only kubernetes.io/os its nodeSelector may name
};

// The fields every node plugin has (`path`: spec.node or spec.windowsNode), from updateStrategy
// to livenessProbe, in the schema's order.
void nodePlugin(Validator& v, const std::string& path, const NodePluginSpec& n,
                const NodePluginRules& rules);

// The endpoints of a node plugin pod's registrar and livenessprobe (`path`: spec.node or
// spec.windowsNode; loopback endpoints need `hostNetwork`, set at `hostNetworkPath`); returns
// the ports they take.
Ports nodeSidecarPorts(Validator& v, const std::string& path, const NodePluginSpec& n,
                       bool hostNetwork, const std::string& hostNetworkPath);

// The livenessprobe sidecar of a pod (`path`: spec.*.livenessProbe), if enabled: its timings,
// its endpoint, and its port, taken in `reserved`.
void livenessSidecar(Validator& v, Ports& reserved, const std::string& path,
                     const std::optional<LivenessProbe>& liveness, bool hostNetwork,
                     const std::string& hostNetworkPath);

// The timings of the driver container's livenessProbe (spec.*.livenessProbe).
void livenessProbe(Validator& v, const std::string& path, const LivenessProbe& probe);

// spec.rollout, and what a verified rollout forbids in the node plugins' updateStrategy.
void rollout(Validator& v, const DriverDeploymentSpec& spec);

// spec.storageClasses.
void storageClasses(Validator& v, const DriverDeploymentSpec& spec);

// The labels and annotations a user gives an object the operator renders (path.labels,
// path.annotations).
void userMetadata(Validator& v, const std::string& path, const std::optional<StringMap>& labels,
                  const std::optional<StringMap>& annotations);
// The secret references of a class's parameters (`path`: its parameters field): name and
// namespace both given, the namespace a label unless a ${...} template.
void secretParameters(Validator& v, const std::string& path,
                      const std::vector<SecretReference>& refs);

// The companion objects: spec.configMaps, services, volumeSnapshotClasses, secretAccess,
// objects, requiredAPIs and spec.controller.podDisruptionBudget.
void companions(Validator& v, const DriverDeploymentSpec& spec);

} // namespace csiop::api::validation
