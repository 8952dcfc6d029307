// The SmokeVolume gate of a verified rollout (spec.rollout.smokeVolume): on a canary node whose
// new plugin pod is Ready and registered, a volume of the driver and a pod pinned to that node
// that writes a nonce to it, reads it back and removes it (`csi-operator smoke-volume`, in the
// operator's own image). This file builds those objects and reads how far the test got from them;
// the reconciler creates, reads and deletes them (reconcile/smoke_volumes.cpp).
//
// Stages, in order, and where each is read:
//   Start      the pod could not start (the image, the kubelet's admission)   the pod
//   Provision  the claim is not Bound                            the claim and its events
//   Attach     the VolumeAttachment is not attached               its attachError, the pod's events
//   Mount      the pod waits in ContainerCreating                  the pod's FailedMount events
//   Write, Read, Cleanup                                           the smoke container's own report
// The objects carry the label csiop.dev/smoke=<DriverDeployment> and an owner reference to it: the
// garbage collector removes them with the DriverDeployment, and the reconciler removes any that
// no running test uses (a test cut short by the operator's restart included).
//
// Pure: no I/O, no clock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <csiop/api/defaults.hpp>
#include <csiop/api/types.hpp>
#include <csiop/driverdeployment/verified_rollout.hpp>

namespace csiop::driverdeployment {

// The label of every smoke object; its value is the DriverDeployment's name.
inline constexpr const char* kSmokeLabel = "csiop.dev/smoke";
// The node a smoke object tests, and the plugin revision.
inline constexpr const char* kSmokeNodeAnnotation = "csiop.dev/smoke-node";
inline constexpr const char* kSmokeRevisionAnnotation = "csiop.dev/smoke-revision";
// Where the smoke pod mounts the volume.
inline constexpr const char* kSmokeMountPath = "/smoke";

struct SmokeTarget {
  std::string owner;    // the DriverDeployment's name
  std::string ownerUid; // and uid
  std::string namespace_;
  std::string driverName;
  std::string node;
  std::string revision; // the plugin revision under test
  std::string image;    // the operator's image
  std::string pullPolicy = "IfNotPresent";
  std::string nonce;
  std::int64_t deadlineSeconds = 300; // the pod's activeDeadlineSeconds
  api::EffectiveRollout::SmokeVolume volume;
};

// The name of the smoke claim and pod of `node` at `revision`: "<owner>-smoke-<10 hex>", within
// the 63 characters of a label value and a pod's hostname.
std::string smokeName(const std::string& owner, const std::string& node,
                      const std::string& revision);

// The claim (none for an ephemeral inline volume) and the pod of the test.
std::optional<api::Json> smokeClaim(const SmokeTarget& target);
api::Json smokePod(const SmokeTarget& target);

// What the reconciler read of a running test.
struct SmokeObserved {
  std::optional<api::Json> pod;        // absent: not created (or gone)
  std::optional<api::Json> claim;      // the claim, when the test uses one and it exists
  std::optional<api::Json> attachment; // the VolumeAttachment of the volume on the node
  std::vector<api::Json> events;       // events of the pod and the claim, in any order
};

// How far the test got: NotStarted (no pod), Running with the stage it is in (and the latest
// warning that explains the wait), Passed, or Failed with the stage and why. A failure the test
// may still recover from (a provisioning attempt that failed, a mount the kubelet retries) stays
// Running: the gate's timeout decides.
SmokeResult readSmoke(const SmokeObserved& observed);

// The controller workload's SmokeVolume gate (controller_rollout.hpp): one claim of the smoke
// volume's StorageClass provisioned through the new controller, with no pod. The claim carries
// the label csiop.dev/smoke-provision=<DriverDeployment> (apart from the canaries' tests, which
// are swept by their own label) and, for a WaitForFirstConsumer class, the selected-node
// annotation a scheduler would set, naming a node where the driver is registered, so that the
// provisioner goes ahead without a pod.
inline constexpr const char* kProvisionLabel = "csiop.dev/smoke-provision";
struct ProvisionTarget {
  std::string owner; // the DriverDeployment's name
  std::string ownerUid;
  std::string namespace_;
  std::string templateDigest; // the controller template under test
  std::string node;           // "": no selected node
  api::EffectiveRollout::SmokeVolume volume;
};
// "<owner>-provision-<10 hex of the template digest>".
std::string provisionName(const std::string& owner, const std::string& templateDigest);
api::Json provisionClaim(const ProvisionTarget& target);
// NotStarted (no claim), Passed once Bound ("Provision: ok (<volume>)"), else Running at stage
// Provision with the latest ProvisioningFailed (or progress) event's message: the provisioner
// retries, and the gate's timeout decides.
SmokeResult readProvision(const std::optional<api::Json>& claim,
                          const std::vector<api::Json>& events);

// Whether the claim or pod `name` of namespace `ns` is one of the smoke tests of the
// DriverDeployment `owner`, whose objects go into `ownerNamespace`: named as smokeName or
// provisionName make them. The operator removes those itself (a deletion sweeps them first), so
// they do not count as volumes in use that would keep the driver from being deleted.
bool smokeTestObject(const std::string& owner, const std::string& ownerNamespace,
                     const std::string& ns, const std::string& name);

// The name Kubernetes gives the VolumeAttachment of a CSI volume on a node:
// "csi-" + sha256(volumeHandle + driver + node).
std::string volumeAttachmentName(const std::string& volumeHandle, const std::string& driver,
                                 const std::string& node);

} // namespace csiop::driverdeployment
