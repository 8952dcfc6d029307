// Why the driver is not registered on a node where its plugin runs: the kubelet lists a driver in
// the node's CSINode once the node-driver-registrar has handed it the driver's socket, and when
// that never happens users are left with "driver name X not found in the list of registered CSI
// drivers" and the registrar's log on the right node (kubernetes-csi/csi-driver-nfs#918,
// kubernetes-csi/node-driver-registrar#139, #206). This decides, from what the caches hold, which
// nodes to report and with what reason:
//
// - RegistrarRestarting: the registrar container exited since the pod started (the kubelet
//   refused the plugin: the registrar exits when told so; a wrong socket path; a crash). The
//   evidence: restarts, the last exit's code, reason and time, its termination message, and the
//   last lines of the exited container's log.
// - NoCSINode: the plugin pod has been Ready for the grace period and the node has no CSINode
//   (the kubelet makes one at start: its CSI plugin manager is not running there).
// - NotRegistered: the plugin pod has been Ready for the grace period and the node's CSINode does
//   not list the driver: the kubelet never took the registrar's socket (a registration directory
//   that is not the kubelet's plugins_registry, a wrong kubelet directory). The evidence: the last
//   lines of the registrar's log.
//
// A pod that is not Ready and whose registrar did not restart is the plugin pods' own story
// (podProblems: an image, a crash loop of another container, scheduling) and is not repeated.
//
// Pure: the caller passes the time.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <csiop/api/rfc3339.hpp>
#include <csiop/driverdeployment/cached_csi_node.hpp>
#include <csiop/driverdeployment/cached_pod.hpp>

namespace csiop::driverdeployment {

// The container the operator renders into every node plugin to register the driver.
inline constexpr const char* kRegistrarContainer = "node-driver-registrar";
// How long a Ready plugin pod may go unregistered before it is reported: the kubelet's plugin
// watcher takes a registration socket within a second or two.
inline constexpr std::chrono::seconds kRegistrationGrace{30};

namespace registration {
inline constexpr const char* kRegistrarRestarting = "RegistrarRestarting";
inline constexpr const char* kNoCSINode = "NoCSINode";
inline constexpr const char* kNotRegistered = "NotRegistered";
} // namespace registration

struct UnregisteredNode {
  std::string node;
  std::string podNamespace;
  std::string pod;
  std::string podUid;
  std::string reason;  // registration::*
  std::string message; // what the caches say; the registrar's log is added by the caller
  // The log that explains it: that of the registrar's previous (exited) container, or else of
  // the running one.
  bool previousLog = false;
  std::int32_t restarts = 0; // of the registrar, which a fresh log follows

  bool operator==(const UnregisteredNode&) const = default;
};

struct RegistrationProblems {
  std::vector<UnregisteredNode> nodes; // sorted by node
  // The earliest time a Ready, unregistered pod reaches the grace period: the pass is needed
  // again then, though nothing may change meanwhile.
  std::optional<api::WallTime> recheckAt;
};

// `text` as one line of printable ASCII, at most `max` bytes: each line break becomes " / ", any
// other byte outside 0x20-0x7E a '?' (a status message must be valid UTF-8 and bounded, whatever
// a container wrote).
std::string printableLine(std::string_view text, std::size_t max);

// The nodes of `pluginPods` (a node plugin DaemonSet's pods, any revision) where `driver` is not
// registered, and why. `csiNodeOf(node)`: the node's CSINode as cached, or nullptr. The messages
// name times, not spans, so that they do not change from one pass to the next.
RegistrationProblems
registrationProblems(const std::vector<const CachedPod*>& pluginPods,
                     const std::function<const CachedCSINode*(const std::string&)>& csiNodeOf,
                     const std::string& driver, api::WallTime now,
                     std::chrono::seconds grace = kRegistrationGrace);

} // namespace csiop::driverdeployment
