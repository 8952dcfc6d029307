#include <gtest/gtest.h>

#include <csiop/driverdeployment/smoke_volume.hpp>
#include <csiop/driverdeployment/volume_usage.hpp>

#include "cached_pods.hpp"

namespace csiop::driverdeployment {
namespace {

Json pv(const std::string& name, const std::string& driver) {
  return {{"kind", "PersistentVolume"},
          {"metadata", {{"name", name}}},
          {"spec", {{"csi", {{"driver", driver}, {"volumeHandle", name + "-handle"}}}}}};
}

Json va(const std::string& name, const std::string& attacher) {
  return {{"kind", "VolumeAttachment"},
          {"metadata", {{"name", name}}},
          {"spec", {{"attacher", attacher}, {"nodeName", "node-1"}}}};
}

Json pod(const std::string& ns, const std::string& name, const Json& volumes,
         const std::string& phase = "Running") {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"uid", name + "-uid"},
            {"resourceVersion", "7"},
            {"labels", {{"app", "web"}}},
            {"annotations", {{"big", std::string(100, 'x')}}},
            {"ownerReferences", Json::array({{{"apiVersion", "apps/v1"},
                                              {"kind", "ReplicaSet"},
                                              {"name", "web-1"},
                                              {"uid", "rs-uid"},
                                              {"controller", true}}})}}},
          {"spec",
           {{"nodeName", "node-1"},
            {"containers", Json::array({{{"name", "c"}, {"image", "busybox"}}})},
            {"volumes", volumes}}},
          {"status", {{"phase", phase}, {"podIP", "10.0.0.1"}}}};
}

Json inlineVolume(const std::string& driver) {
  return {{"name", "inline"}, {"csi", {{"driver", driver}, {"volumeAttributes", {{"a", "b"}}}}}};
}

std::vector<const Json*> pointers(const std::vector<Json>& objects) {
  std::vector<const Json*> out;
  for (const Json& o : objects) {
    out.push_back(&o);
  }
  return out;
}

TEST(VolumeUsage, CountsTheDriversVolumesAttachmentsAndInlineVolumesOnly) {
  const std::vector<Json> pvs = {pv("pv-b", "a.csi"), pv("pv-a", "a.csi"), pv("pv-x", "b.csi"),
                                 Json{{"kind", "PersistentVolume"},
                                      {"metadata", {{"name", "nfs"}}},
                                      {"spec", {{"nfs", {{"server", "x"}}}}}}};
  const std::vector<Json> vas = {va("csi-1", "a.csi"), va("csi-2", "b.csi")};
  const std::vector<Json> pods = {
      pod("default", "inline", Json::array({inlineVolume("a.csi")})),
      pod("default", "other", Json::array({inlineVolume("b.csi")})),
      pod("default", "done", Json::array({inlineVolume("a.csi")}), "Succeeded"),
      pod("default", "failed", Json::array({inlineVolume("a.csi")}), "Failed"),
      pod("default", "claim",
          Json::array({{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "c"}}}}}))};
  const std::vector<CachedPod> cached = test::decoded(pods);
  const VolumeUsage u =
      volumeUsage("a.csi", pointers(pvs), pointers(vas), test::podPointers(cached));
  EXPECT_EQ(u.persistentVolumes, (std::vector<std::string>{"pv-b", "pv-a"}));
  EXPECT_EQ(u.volumeAttachments, (std::vector<std::string>{"csi-1"}));
  EXPECT_EQ(u.pods, (std::vector<std::string>{"default/inline"})); // finished pods hold nothing
  EXPECT_FALSE(u.empty());
  EXPECT_TRUE(
      volumeUsage("c.csi", pointers(pvs), pointers(vas), test::podPointers(cached)).empty());
}

// A volume of the driver bound to the claim `claim` of namespace `ns`.
Json claimedPv(const std::string& name, const std::string& ns, const std::string& claim,
               const std::string& reclaim = "Delete") {
  Json out = pv(name, "a.csi");
  out["spec"]["claimRef"] = {{"namespace", ns}, {"name", claim}};
  out["spec"]["persistentVolumeReclaimPolicy"] = reclaim;
  return out;
}

TEST(VolumeUsage, TheOwnersSmokeTestsAreToldApartFromVolumesInUse) {
  const std::string smoke = smokeName("ctrl", "node-1", "abc");
  const std::string provision = provisionName("ctrl", "digest");
  const std::vector<Json> pvs = {
      claimedPv("pv-smoke", "csi-ctrl", smoke), claimedPv("pv-provision", "csi-ctrl", provision),
      claimedPv("pv-kept", "csi-ctrl", provisionName("ctrl", "other"), "Retain"),
      // the same names in another namespace, a name alike: a user's volumes
      claimedPv("pv-user", "default", provision),
      claimedPv("pv-alike", "csi-ctrl", "ctrl-provision-data"),
      claimedPv("pv-other-owner", "csi-ctrl", provisionName("ctrl2", "digest"))};
  Json attached = va("csi-smoke", "a.csi");
  attached["spec"]["source"]["persistentVolumeName"] = "pv-smoke";
  Json user = va("csi-user", "a.csi");
  user["spec"]["source"]["persistentVolumeName"] = "pv-user";
  const std::vector<Json> vas = {attached, user};
  const std::vector<Json> pods = {pod("csi-ctrl", smoke, Json::array({inlineVolume("a.csi")})),
                                  pod("default", smoke, Json::array({inlineVolume("a.csi")}))};
  const std::vector<CachedPod> cached = test::decoded(pods);
  const SmokeTestOwner owner{"ctrl", "csi-ctrl"};
  const VolumeUsage u =
      volumeUsage("a.csi", pointers(pvs), pointers(vas), test::podPointers(cached), owner);
  EXPECT_EQ(u.persistentVolumes,
            (std::vector<std::string>{"pv-user", "pv-alike", "pv-other-owner"}));
  EXPECT_EQ(u.volumeAttachments, (std::vector<std::string>{"csi-user"}));
  EXPECT_EQ(u.pods, (std::vector<std::string>{"default/" + smoke}));
  EXPECT_EQ(u.tests, (std::vector<std::string>{"pv-smoke", "pv-provision", "csi-smoke",
                                               "csi-ctrl/" + smoke}))
      << "a retained test volume is not waited for";
  EXPECT_EQ(describeTests(u),
            "4 objects of the smoke tests (csi-ctrl/" + smoke + ", csi-smoke, pv-provision, ...)");
  // With no owner named, every one is in use.
  const VolumeUsage all =
      volumeUsage("a.csi", pointers(pvs), pointers(vas), test::podPointers(cached));
  EXPECT_EQ(all.persistentVolumes.size(), pvs.size());
  EXPECT_TRUE(all.tests.empty());
}

TEST(VolumeUsage, OnlyTestsLeftIsEmpty) {
  const std::vector<Json> pvs = {claimedPv("pv-provision", "csi-ctrl", provisionName("ctrl", "d"))};
  const VolumeUsage u =
      volumeUsage("a.csi", pointers(pvs), {}, {}, SmokeTestOwner{"ctrl", "csi-ctrl"});
  EXPECT_TRUE(u.empty());
  EXPECT_EQ(u.tests, (std::vector<std::string>{"pv-provision"}));
}

TEST(VolumeUsage, DescribeCountsAndNamesAFewOfEachKindSorted) {
  VolumeUsage u;
  u.persistentVolumes = {"pv-d", "pv-b", "pv-c", "pv-a"};
  EXPECT_EQ(describe(u), "4 PersistentVolumes (pv-a, pv-b, pv-c, ...)");
  u.volumeAttachments = {"csi-1"};
  EXPECT_EQ(describe(u), "4 PersistentVolumes (pv-a, pv-b, pv-c, ...) and 1 VolumeAttachment "
                         "(csi-1)");
  u.pods = {"ns/b", "ns/a"};
  EXPECT_EQ(describe(u, 1), "4 PersistentVolumes (pv-a, ...), 1 VolumeAttachment (csi-1) and 2 "
                            "pods with inline volumes (ns/a, ...)");
  u.persistentVolumes = {"pv-a"};
  u.volumeAttachments.clear();
  u.pods = {"ns/a"};
  EXPECT_EQ(describe(u), "1 PersistentVolume (pv-a) and 1 pod with an inline volume (ns/a)");
  EXPECT_EQ(describe(VolumeUsage{}), "");
}

TEST(VolumeUsage, DriversUsedByReadsEachKindsField) {
  EXPECT_EQ(driversUsedBy(pv("p", "a.csi")), (std::vector<std::string>{"a.csi"}));
  EXPECT_EQ(driversUsedBy(va("v", "b.csi")), (std::vector<std::string>{"b.csi"}));
  EXPECT_TRUE(driversUsedBy(Json{{"kind", "PersistentVolume"}, {"spec", {{"nfs", {}}}}}).empty());
  EXPECT_TRUE(driversUsedBy(Json{{"kind", "ConfigMap"}}).empty());
  // A pod's are its inline volumes' (CachedPod::inlineDrivers).
  EXPECT_EQ(decodePod(pod("ns", "p",
                          Json::array({inlineVolume("a.csi"),
                                       inlineVolume("c.csi"),
                                       {{"name", "e"}, {"emptyDir", Json::object()}}})))
                .inlineDrivers(),
            (std::vector<std::string>{"a.csi", "c.csi"}));
  EXPECT_TRUE(decodePod(Json{{"kind", "Pod"}, {"spec", "garbage"}}).inlineDrivers().empty());
}

TEST(VolumeUsage, AVolumeUserIsKeptWithWhatTheDecisionsRead) {
  const Json p =
      pod("default", "web",
          Json::array({inlineVolume("a.csi"),
                       {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "c"}}}},
                       {{"name", "scratch"}, {"ephemeral", {{"volumeClaimTemplate", {}}}}},
                       {{"name", "tmp"}, {"emptyDir", Json::object()}},
                       {{"name", "cfg"}, {"configMap", {{"name", "x"}}}}}));
  ASSERT_TRUE(keptInPodCache(p)) << "no owner label, but volumes";
  const CachedPod cached = decodePod(p);
  CachedPod expected;
  expected.namespace_ = "default";
  expected.name = "web";
  expected.uid = "web-uid";
  expected.controllerUid = "rs-uid";
  expected.nodeName = "node-1";
  expected.phase = "Running";
  // name, claim, CSI driver, generic ephemeral
  expected.volumes = {
      {"inline", "", "a.csi", false}, {"data", "c", "", false}, {"scratch", "", "", true}};
  EXPECT_EQ(cached, expected);
  EXPECT_FALSE(cached.drainLeaves) << "a ReplicaSet's pod is evicted by a drain";
  EXPECT_EQ(cached.inlineDrivers(), (std::vector<std::string>{"a.csi"}));
}

TEST(VolumeUsage, APodWithoutClaimsOrCSIVolumesIsNotKept) {
  const Json p = pod("default", "web",
                     Json::array({{{"name", "tmp"}, {"emptyDir", Json::object()}},
                                  {{"name", "host"}, {"hostPath", {{"path", "/var"}}}}}));
  EXPECT_FALSE(keptInPodCache(p));
  EXPECT_FALSE(keptInPodCache(Json{{"metadata", {{"name", "x"}}}, {"spec", Json::object()}}));
  EXPECT_FALSE(
      keptInPodCache(Json{{"metadata", {{"name", "x"}}}, {"spec", {{"volumes", "not a list"}}}}));
  EXPECT_FALSE(keptInPodCache(Json::array()));
}

} // namespace
} // namespace csiop::driverdeployment
