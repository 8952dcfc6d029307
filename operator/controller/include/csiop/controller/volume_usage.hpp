// What of a CSI driver is in use: its PersistentVolumes (spec.csi.driver), its
// VolumeAttachments (spec.attacher) and the pods with an inline CSI volume of it
// (spec.volumes[].csi.driver). Deleting the driver while any exist strands
// them: nothing could detach, unmount or delete those volumes any more. Pure:
// the caller passes the cached objects.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::controller {

using api::Json;

struct VolumeUsage {
  std::vector<std::string> persistentVolumes; // names
  std::vector<std::string> volumeAttachments; // names
  std::vector<std::string> pods;              // "namespace/name", inline CSI volumes

  [[nodiscard]] bool empty() const {
    return persistentVolumes.empty() && volumeAttachments.empty() && pods.empty();
  }
};

VolumeUsage volumeUsage(const std::string& driverName, const std::vector<const Json*>& pvs,
                        const std::vector<const Json*>& volumeAttachments,
                        const std::vector<const Json*>& pods);

// "2 PersistentVolumes (pv-a, pv-b) and 1 pod with an inline volume (default/web)":
// counts, and the first `names` names of each kind (sorted), then "...".
std::string describe(const VolumeUsage& usage, std::size_t names = 3);

// The CSI drivers a PersistentVolume, VolumeAttachment or pod uses (for
// queueing the DriverDeployments a change concerns); empty for other kinds.
std::vector<std::string> driversUsedBy(const Json& object);

// The informer transform of the cluster-wide pod cache that volume decisions
// read: false for a pod with no PersistentVolumeClaim, generic ephemeral or
// CSI volume (not kept at all; a pod's volumes never change); otherwise the
// pod is cut down to what those decisions read (name, namespace, uid, owner
// kinds, node, volumes' claim names and CSI drivers, phase).
bool keepVolumeUser(Json& pod);
// The volumes of a pod that volume decisions read, cut down as keepVolumeUser keeps them
// (name, and the claim name, the CSI driver or an empty "ephemeral"); empty if it has none.
Json keptVolumes(const Json& pod);

// A pod that has finished (Succeeded or Failed) holds no volume any more.
bool podTerminated(const Json& pod);

} // namespace csiop::controller
