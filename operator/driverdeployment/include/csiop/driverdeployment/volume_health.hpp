// Volumes of the driver that fail while its pods look fine, from the cluster's own signals: the
// Warning Events the external-provisioner, the attach/detach controller and the kubelet write, and
// the VolumeAttachments' errors. Users see a PVC stay Pending or a pod stay in ContainerCreating,
// and find why in `kubectl describe` of the right object, if they look there:
//
// - ProvisioningFailed: an Event on a claim from the driver's external-provisioner (its source
//   component is "<driver>_<identity>", sig-storage-lib-external-provisioner), while the claim is
//   still Pending: the driver refused CreateVolume (parameters, capacity, a secret).
// - AttachFailed: a VolumeAttachment of the driver with status.attachError and not attached, or
//   a FailedAttachVolume Event on a pod naming one of the driver's volumes
//   ("AttachVolume.Attach failed for volume \"pv\" : ..."), while the pod waits: counted once per
//   volume.
// - DetachFailed: a VolumeAttachment of the driver with status.detachError.
// - MountFailed: a FailedMount Event on a pod naming one of the driver's volumes (a persistent
//   volume of the driver, or an inline volume of the driver in that pod:
//   "MountVolume.SetUp failed for volume \"name\" : ..."), while the pod waits (Pending).
//
// An Event counts for kVolumeEventWindow after it was last seen (the components retry every few
// minutes at most, each retry seen again), and only while its object still waits: a claim that is
// bound or gone, a pod that runs or is gone, clears it at once.
//
// Pure: the caller passes what the caches hold and the time.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <csiop/api/rfc3339.hpp>
#include <csiop/api/types.hpp>
#include <csiop/driverdeployment/cached_pod.hpp>

namespace csiop::driverdeployment {

namespace volume_health {
inline constexpr const char* kProvisioningFailed = "ProvisioningFailed";
inline constexpr const char* kAttachFailed = "AttachFailed";
inline constexpr const char* kDetachFailed = "DetachFailed";
inline constexpr const char* kMountFailed = "MountFailed";
} // namespace volume_health

// The Events read, each a watch the API server filters ("type=Warning,reason=<reason>").
inline constexpr const char* kProvisioningFailedEvent = "ProvisioningFailed";
inline constexpr const char* kFailedAttachVolumeEvent = "FailedAttachVolume";
inline constexpr const char* kFailedMountEvent = "FailedMount";

inline constexpr std::chrono::minutes kVolumeEventWindow{10};
// How many failures the status names (the newest); the counts cover every one.
inline constexpr std::size_t kNamedVolumeFailures = 5;
// The most bytes of a message the status carries.
inline constexpr std::size_t kVolumeFailureMessage = 300;

// A Warning Event of one of the reasons above, as the caches keep it.
struct VolumeEvent {
  std::string reason; // the Event's reason
  std::string kind;   // involvedObject
  std::string namespace_;
  std::string name;
  std::string message;
  std::string component; // source.component, or reportingController
  api::WallTime last{};  // series.lastObservedTime, lastTimestamp, eventTime or creation
};

// A VolumeAttachment of the driver, as the caches keep it.
struct AttachmentState {
  std::string name;
  std::string persistentVolume; // spec.source.persistentVolumeName
  std::string node;
  bool attached = false;
  std::optional<std::string> attachError; // status.attachError.message
  api::WallTime attachErrorAt{};
  std::optional<std::string> detachError; // status.detachError.message
  api::WallTime detachErrorAt{};
};

// A claim named by a ProvisioningFailed Event, as last looked up.
enum class ClaimPhase { Unknown, Pending, Settled, Gone };

struct VolumeFailure {
  std::string reason;  // volume_health::*
  std::string object;  // "PersistentVolumeClaim ns/name", "Pod ns/name", "VolumeAttachment name"
  std::string volume;  // the volume named ("" for a claim)
  std::string message; // one printable line, at most kVolumeFailureMessage bytes
  api::WallTime last{};

  bool operator==(const VolumeFailure&) const = default;
};

struct VolumeHealth {
  std::map<std::string, std::size_t> counts; // by reason; only reasons with failures
  std::vector<VolumeFailure> named;          // the newest kNamedVolumeFailures, newest first
  std::set<std::string> objects;             // every failure's object (VolumeFailure::object)

  [[nodiscard]] std::size_t total() const;
  // "2 ProvisioningFailed, 1 MountFailed: PersistentVolumeClaim a/b: <message>; ..." (the
  // condition's message), "" without failures.
  [[nodiscard]] std::string summary() const;
  bool operator==(const VolumeHealth&) const = default;
};

// What the caches say of the driver's volumes.
struct DriverVolumeView {
  // A PersistentVolume of the driver (spec.csi.driver).
  std::function<bool(const std::string& persistentVolume)> isDriverVolume;
  // The pod as cached (every pod with a volume is), or nullptr.
  std::function<const CachedPod*(const std::string& ns, const std::string& name)> pod;
  // A claim named by a ProvisioningFailed Event of the driver.
  std::function<ClaimPhase(const std::string& ns, const std::string& name)> claim;
};

// The volume an Event's message names: X of `for volume "X"`; "" if none.
std::string namedVolume(std::string_view message);

// The field selector of the watch of one reason: "type=Warning,reason=<reason>".
std::string volumeEventSelector(std::string_view reason);

// An Event as volumeEventFields() builds it, read: its last sighting is series.lastObservedTime,
// else lastTimestamp, else eventTime, else its creation.
VolumeEvent volumeEventOf(const api::Json& event);

// The driver an Event concerns: a ProvisioningFailed Event's provisioner (its source component up
// to the first '_'; a CSI driver's name has none), or the driver of the volume a FailedMount or
// FailedAttachVolume Event names: `persistentVolumeDriver(name)` (spec.csi.driver of the cached
// PersistentVolume, "" if none), else an inline volume of that name in the cached pod. "" when
// not known.
std::string volumeEventDriver(
    const VolumeEvent& event,
    const std::function<std::string(const std::string& persistentVolume)>& persistentVolumeDriver,
    const std::function<const CachedPod*(const std::string& ns, const std::string& name)>& pod);

// The claims the ProvisioningFailed Events of `driver` name within the window, "ns/name", for
// the caller to look up (DriverVolumeView::claim); sorted, each once.
std::vector<std::string> claimsToLookUp(const std::string& driver,
                                        const std::vector<VolumeEvent>& events, api::WallTime now);

VolumeHealth volumeHealth(const std::string& driver, const std::vector<VolumeEvent>& events,
                          const std::vector<AttachmentState>& attachments,
                          const DriverVolumeView& view, api::WallTime now);

} // namespace csiop::driverdeployment
