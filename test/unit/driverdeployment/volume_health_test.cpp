// volumeHealth: the driver's failing volumes from the Events and VolumeAttachments the caches keep.
#include <gtest/gtest.h>

#include <csiop/driverdeployment/volume_health.hpp>

namespace csiop::driverdeployment {
namespace {

using namespace std::chrono_literals;
namespace vh = volume_health;

const std::string kDriver = "hostpath.csi.k8s.io";
const api::WallTime kNow = api::parseRfc3339OrEpoch("2026-11-29T12:00:00Z");

VolumeEvent event(const char* reason, const char* kind, const char* name, std::string message,
                  api::WallTime last, std::string component = "") {
  return {reason, kind, "apps", name, std::move(message), std::move(component), last};
}

CachedPod pod(const char* name, const char* phase) {
  CachedPod p;
  p.namespace_ = "apps";
  p.name = name;
  p.phase = phase;
  return p;
}

struct World {
  std::map<std::string, CachedPod> pods;
  std::set<std::string> driverVolumes = {"pvc-1", "pvc-2"};
  std::map<std::string, ClaimPhase> claims;

  DriverVolumeView view() const {
    return {[this](const std::string& pv) { return driverVolumes.contains(pv); },
            [this](const std::string& ns, const std::string& name) -> const CachedPod* {
              const auto it = pods.find(ns + "/" + name);
              return it == pods.end() ? nullptr : &it->second;
            },
            [this](const std::string& ns, const std::string& name) {
              const auto it = claims.find(ns + "/" + name);
              return it == claims.end() ? ClaimPhase::Unknown : it->second;
            }};
  }
  void add(CachedPod p) { pods[p.key()] = std::move(p); }
};

TEST(VolumeHealth, TheVolumeAnEventNames) {
  EXPECT_EQ(namedVolume("MountVolume.SetUp failed for volume \"pvc-1\" : rpc error: code = "
                        "Internal desc = boom"),
            "pvc-1");
  EXPECT_EQ(namedVolume("AttachVolume.Attach failed for volume \"pvc-2\" : timed out"), "pvc-2");
  EXPECT_EQ(namedVolume("Unable to attach or mount volumes: unmounted volumes=[data]"), "");
  EXPECT_EQ(namedVolume("for volume \"unterminated"), "");
}

TEST(VolumeHealth, ProvisioningFailuresOfTheDriversProvisionerWhileTheClaimIsPending) {
  World w;
  w.claims = {{"apps/big", ClaimPhase::Pending},
              {"apps/bound", ClaimPhase::Settled},
              {"apps/deleted", ClaimPhase::Gone}};
  const std::string own = kDriver + "_csi-hostpathplugin-0_1f2e";
  const std::vector<VolumeEvent> events = {
      event("ProvisioningFailed", "PersistentVolumeClaim", "big",
            "failed to provision volume with StorageClass \"csi-hostpath-sc\": rpc error: code = "
            "OutOfRange desc = Requested capacity 2199023255552 exceeds maximum allowed "
            "1099511627776",
            kNow - 1min, own),
      event("ProvisioningFailed", "PersistentVolumeClaim", "bound", "x", kNow - 1min, own),
      event("ProvisioningFailed", "PersistentVolumeClaim", "deleted", "x", kNow - 1min, own),
      // Another driver's provisioner, one whose name begins like this one's, the PV controller.
      event("ProvisioningFailed", "PersistentVolumeClaim", "other", "x", kNow,
            "ebs.csi.aws.com_ebs-csi-controller-0_9a"),
      event("ProvisioningFailed", "PersistentVolumeClaim", "prefix", "x", kNow,
            kDriver + "-other_pod_1"),
      event("ProvisioningFailed", "PersistentVolumeClaim", "nosc",
            "storageclass.storage.k8s.io \"gone\" not found", kNow, "persistentvolume-controller"),
      // Older than the window.
      event("ProvisioningFailed", "PersistentVolumeClaim", "old", "x", kNow - 11min, own)};
  EXPECT_EQ(claimsToLookUp(kDriver, events, kNow),
            (std::vector<std::string>{"apps/big", "apps/bound", "apps/deleted"}));
  const VolumeHealth h = volumeHealth(kDriver, events, {}, w.view(), kNow);
  EXPECT_EQ(h.counts, (std::map<std::string, std::size_t>{{vh::kProvisioningFailed, 1}}));
  ASSERT_EQ(h.named.size(), 1U);
  EXPECT_EQ(h.named[0].object, "PersistentVolumeClaim apps/big");
  EXPECT_EQ(h.summary(),
            "1 ProvisioningFailed: PersistentVolumeClaim apps/big: failed to provision volume with "
            "StorageClass \"csi-hostpath-sc\": rpc error: code = OutOfRange desc = Requested "
            "capacity 2199023255552 exceeds maximum allowed 1099511627776");
  // A claim not looked up yet counts: its Event is recent.
  w.claims.erase("apps/big");
  EXPECT_EQ(volumeHealth(kDriver, events, {}, w.view(), kNow).total(), 1U);
  // Gone: cleared at once.
  w.claims["apps/big"] = ClaimPhase::Gone;
  EXPECT_EQ(volumeHealth(kDriver, events, {}, w.view(), kNow).total(), 0U);
}

TEST(VolumeHealth, MountFailuresOfTheDriversVolumesWhileThePodWaits) {
  World w;
  w.add(pod("web-0", "Pending"));
  w.add(pod("web-1", "Running"));
  CachedPod inlinePod = pod("inline", "Pending");
  inlinePod.volumes = {{"scratch", "", kDriver, false}, {"config", "", "", false}};
  w.add(inlinePod);
  const std::vector<VolumeEvent> events = {
      event("FailedMount", "Pod", "web-0",
            "MountVolume.MountDevice failed for volume \"pvc-1\" : kubernetes.io/csi: "
            "attacher.MountDevice failed to create newCsiDriverClient: driver name " +
                kDriver + " not found in the list of registered CSI drivers",
            kNow - 30s),
      event("FailedMount", "Pod", "web-0", "MountVolume.SetUp failed for volume \"pvc-1\" : older",
            kNow - 5min),
      // Running now: cleared.
      event("FailedMount", "Pod", "web-1", "MountVolume.SetUp failed for volume \"pvc-2\" : x",
            kNow - 1min),
      // The inline volume of the driver; a ConfigMap's volume is not the driver's.
      event("FailedMount", "Pod", "inline",
            "MountVolume.SetUp failed for volume \"scratch\" : rpc error", kNow - 2min),
      event("FailedMount", "Pod", "inline",
            "MountVolume.SetUp failed for volume \"config\" : configmap \"c\" not found",
            kNow - 1min),
      // Another driver's volume; a pod the cache does not have.
      event("FailedMount", "Pod", "web-0", "MountVolume.SetUp failed for volume \"pvc-9\" : x",
            kNow),
      event("FailedMount", "Pod", "gone", "MountVolume.SetUp failed for volume \"pvc-1\" : x",
            kNow)};
  const VolumeHealth h = volumeHealth(kDriver, events, {}, w.view(), kNow);
  EXPECT_EQ(h.counts, (std::map<std::string, std::size_t>{{vh::kMountFailed, 2}}));
  ASSERT_EQ(h.named.size(), 2U);
  EXPECT_EQ(h.named[0].object, "Pod apps/web-0"); // the newest first, its newest message
  EXPECT_EQ(h.named[0].volume, "pvc-1");
  EXPECT_NE(h.named[0].message.find("not found in the list of registered CSI drivers"),
            std::string::npos);
  EXPECT_EQ(h.named[1].object, "Pod apps/inline");
  EXPECT_EQ(h.named[1].volume, "scratch");
}

TEST(VolumeHealth, AttachFailuresAreCountedOncePerVolume) {
  World w;
  w.add(pod("db-0", "Pending"));
  const std::vector<VolumeEvent> events = {event(
      "FailedAttachVolume", "Pod", "db-0",
      "AttachVolume.Attach failed for volume \"pvc-1\" : rpc error: code = Internal", kNow - 1min)};
  const std::vector<AttachmentState> attachments = {
      {"csi-aaa",
       "pvc-1",
       "node-1",
       false,
       "rpc error: code = Internal desc = no path",
       kNow - 30s,
       std::nullopt,
       {}},
      {"csi-bbb", "pvc-2", "node-2", true, std::nullopt, {}, "rpc error: device busy", kNow - 3min},
      // Attached since: an old attach error no longer counts.
      {"csi-ccc", "pvc-3", "node-3", true, "old", kNow - 1h, std::nullopt, {}}};
  const VolumeHealth h = volumeHealth(kDriver, events, attachments, w.view(), kNow);
  EXPECT_EQ(h.counts,
            (std::map<std::string, std::size_t>{{vh::kAttachFailed, 1}, {vh::kDetachFailed, 1}}));
  ASSERT_EQ(h.named.size(), 2U);
  EXPECT_EQ(h.named[0].object, "VolumeAttachment csi-aaa"); // newer than the pod's Event
  EXPECT_EQ(h.named[0].message, "on node node-1: rpc error: code = Internal desc = no path");
  EXPECT_EQ(h.named[1].object, "VolumeAttachment csi-bbb");
  EXPECT_EQ(h.summary().rfind("1 AttachFailed, 1 DetachFailed: VolumeAttachment csi-aaa (volume "
                              "pvc-1): on node node-1: ",
                              0),
            0U)
      << h.summary();
}

TEST(VolumeHealth, ANamedFewTheNewestAndMessagesBoundedToOneLine) {
  World w;
  std::vector<VolumeEvent> events;
  for (int i = 0; i < 8; ++i) {
    const std::string name = "p" + std::to_string(i);
    w.add(pod(name.c_str(), "Pending"));
    events.push_back(event("FailedMount", "Pod", "", "", kNow - std::chrono::seconds(10 * i)));
    events.back().name = name;
    events.back().message = "MountVolume.SetUp failed for volume \"pvc-1\" : line one\nline two " +
                            std::string(400, 'x');
  }
  const VolumeHealth h = volumeHealth(kDriver, events, {}, w.view(), kNow);
  EXPECT_EQ(h.total(), 8U);
  ASSERT_EQ(h.named.size(), kNamedVolumeFailures);
  EXPECT_EQ(h.named[0].object, "Pod apps/p0");
  EXPECT_EQ(h.named[4].object, "Pod apps/p4");
  EXPECT_LE(h.named[0].message.size(), kVolumeFailureMessage);
  EXPECT_EQ(h.named[0].message.find('\n'), std::string::npos);
  EXPECT_NE(h.named[0].message.find("line one / line two"), std::string::npos);
  EXPECT_EQ(volumeHealth(kDriver, {}, {}, w.view(), kNow), VolumeHealth{});
  EXPECT_EQ(VolumeHealth{}.summary(), "");
}

} // namespace
} // namespace csiop::driverdeployment
