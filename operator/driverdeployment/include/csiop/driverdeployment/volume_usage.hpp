// What of a CSI driver is in use: its PersistentVolumes (spec.csi.driver), its
// VolumeAttachments (spec.attacher) and the pods with an inline CSI volume of it
// (spec.volumes[].csi.driver). Deleting the driver while any exist strands
// them: nothing could detach, unmount or delete those volumes any more. Pure:
// the caller passes the cached objects.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <csiop/api/types.hpp>
#include <csiop/driverdeployment/cached_pod.hpp>

namespace csiop::driverdeployment {

using api::Json;

struct VolumeUsage {
  std::vector<std::string> persistentVolumes; // names
  std::vector<std::string> volumeAttachments; // names
  std::vector<std::string> pods;              // "namespace/name", inline CSI volumes
  // The owner's own smoke tests (smoke_volume.hpp): their PersistentVolumes (of reclaim policy
  // Delete: the driver removes them), VolumeAttachments and pods. Not in use: the operator
  // removes the tests itself, and a deletion waits only until the driver has removed their
  // volumes. A test volume the class retains is not counted at all (its class asks to keep it).
  std::vector<std::string> tests;

  // Nothing is in use (the owner's tests aside).
  [[nodiscard]] bool empty() const {
    return persistentVolumes.empty() && volumeAttachments.empty() && pods.empty();
  }
};

// The DriverDeployment whose smoke tests' volumes are told apart.
struct SmokeTestOwner {
  std::string name;
  std::string namespace_; // of its workloads, where its tests run
};

VolumeUsage volumeUsage(const std::string& driverName, const std::vector<const Json*>& pvs,
                        const std::vector<const Json*>& volumeAttachments,
                        const std::vector<const CachedPod*>& pods,
                        const std::optional<SmokeTestOwner>& owner = std::nullopt);

// "2 PersistentVolumes (pv-a, pv-b) and 1 pod with an inline volume (default/web)":
// counts, and the first `names` names of each kind (sorted), then "...".
std::string describe(const VolumeUsage& usage, std::size_t names = 3);
// "1 object of the smoke tests (pvc-1)": the same of usage.tests.
std::string describeTests(const VolumeUsage& usage, std::size_t names = 3);

// The CSI drivers a PersistentVolume or VolumeAttachment uses (for queueing the
// DriverDeployments a change concerns); empty for other kinds. A pod's: CachedPod::inlineDrivers.
std::vector<std::string> driversUsedBy(const Json& object);

} // namespace csiop::driverdeployment
