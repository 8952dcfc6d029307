// The smoke test of a verified rollout's canary: its objects, and how far it got as read from
// the pod, the claim, the VolumeAttachment and the events.
#include <gtest/gtest.h>

#include <csiop/driverdeployment/smoke_volume.hpp>

namespace csiop::driverdeployment {
namespace {

using api::Json;

SmokeTarget claimTarget() {
  SmokeTarget t;
  t.owner = "hostpath";
  t.ownerUid = "uid-1";
  t.namespace_ = "csi-hostpath";
  t.driverName = "hostpath.csi.k8s.io";
  t.node = "node-a";
  t.revision = "5d8f7";
  t.image = "ghcr.io/csiop/csi-operator:1.2.3";
  t.nonce = "n0nce";
  t.deadlineSeconds = 120;
  t.volume.storageClassName = "csi-hostpath-sc";
  t.volume.size = "2Gi";
  return t;
}

Json podWith(const std::string& phase, Json containerState = Json::object(),
             Json conditions = Json::array()) {
  Json pod{{"metadata", {{"name", "p"}}}, {"status", {{"phase", phase}}}};
  if (!containerState.empty()) {
    pod["status"]["containerStatuses"] =
        Json::array({Json{{"name", "smoke"}, {"state", std::move(containerState)}}});
  }
  if (!conditions.empty()) {
    pod["status"]["conditions"] = std::move(conditions);
  }
  return pod;
}

Json event(const std::string& kind, const std::string& reason, const std::string& message,
           const std::string& time) {
  return Json{{"involvedObject", {{"kind", kind}, {"name", "p"}}},
              {"reason", reason},
              {"message", message},
              {"lastTimestamp", time}};
}

const Json kWaitingToMount = {{"waiting", {{"reason", "ContainerCreating"}}}};

TEST(SmokeVolume, NamesAreShortStableAndPerNodeAndRevision) {
  const std::string name = smokeName("hostpath", "node-a", "5d8f7");
  EXPECT_EQ(name.rfind("hostpath-smoke-", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("hostpath-smoke-").size() + 10);
  EXPECT_EQ(smokeName("hostpath", "node-a", "5d8f7"), name);
  EXPECT_NE(smokeName("hostpath", "node-b", "5d8f7"), name);
  EXPECT_NE(smokeName("hostpath", "node-a", "6e9a8"), name);
  const std::string longOwner(63, 'x');
  const std::string capped = smokeName(longOwner, "node-a", "5d8f7");
  EXPECT_LE(capped.size(), 63u) << capped;
  EXPECT_EQ(smokeName(std::string(45, 'y') + "-z", "n", "r").substr(0, 46),
            std::string(45, 'y') + "-")
      << "cut at 46";
  EXPECT_EQ(smokeName(std::string(45, 'y') + "-z", "n", "r").find("--"), std::string::npos)
      << "a cut ending in '-' is trimmed";
}

TEST(SmokeVolume, ATestObjectIsNamedAsTheOwnersTestsAreInItsNamespace) {
  const std::string longOwner(63, 'x');
  for (const std::string& owner : {std::string("ctrl"), longOwner}) {
    EXPECT_TRUE(smokeTestObject(owner, "ns", "ns", smokeName(owner, "node-a", "r1"))) << owner;
    EXPECT_TRUE(smokeTestObject(owner, "ns", "ns", provisionName(owner, "digest"))) << owner;
    EXPECT_FALSE(smokeTestObject(owner, "ns", "other", provisionName(owner, "digest"))) << owner;
  }
  EXPECT_FALSE(smokeTestObject("ctrl", "ns", "ns", provisionName("ctrl2", "digest")));
  EXPECT_FALSE(smokeTestObject("ctrl", "ns", "ns", "ctrl-provision-data"));
  EXPECT_FALSE(smokeTestObject("ctrl", "ns", "ns", "ctrl-provision-0123456789a"));
  EXPECT_FALSE(smokeTestObject("ctrl", "ns", "ns", "ctrl-provision-ABCDEF0123"));
  EXPECT_TRUE(smokeTestObject("ctrl", "ns", "ns", "ctrl-smoke-abcdef0123"));
}

TEST(SmokeVolume, AClaimOfTheClassPinnedToTheCanaryByTheScheduler) {
  const SmokeTarget t = claimTarget();
  const auto claim = smokeClaim(t);
  ASSERT_TRUE(claim);
  const std::string name = smokeName("hostpath", "node-a", "5d8f7");
  EXPECT_EQ((*claim)["metadata"]["name"], name);
  EXPECT_EQ((*claim)["metadata"]["namespace"], "csi-hostpath");
  EXPECT_EQ((*claim)["metadata"]["labels"][kSmokeLabel], "hostpath");
  EXPECT_EQ((*claim)["metadata"]["annotations"][kSmokeNodeAnnotation], "node-a");
  EXPECT_EQ((*claim)["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ((*claim)["metadata"]["ownerReferences"][0]["kind"], "DriverDeployment");
  EXPECT_EQ((*claim)["spec"]["storageClassName"], "csi-hostpath-sc");
  EXPECT_EQ((*claim)["spec"]["resources"]["requests"]["storage"], "2Gi");
  EXPECT_EQ((*claim)["spec"]["accessModes"], Json::array({"ReadWriteOnce"}));

  const Json pod = smokePod(t);
  EXPECT_EQ(pod["metadata"]["name"], name);
  const Json& spec = pod["spec"];
  EXPECT_FALSE(spec.contains("nodeName")) << "the scheduler must select the node of a "
                                             "WaitForFirstConsumer claim";
  EXPECT_EQ(spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchFields"][0],
            (Json{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"node-a"}}}));
  EXPECT_EQ(spec["restartPolicy"], "Never");
  EXPECT_EQ(spec["activeDeadlineSeconds"], 120);
  EXPECT_EQ(spec["automountServiceAccountToken"], false);
  EXPECT_EQ(spec["tolerations"], Json::array({Json{{"operator", "Exists"}}}));
  EXPECT_EQ(spec["volumes"][0]["persistentVolumeClaim"]["claimName"], name);
  const Json& c = spec["containers"][0];
  EXPECT_EQ(c["image"], "ghcr.io/csiop/csi-operator:1.2.3");
  EXPECT_EQ(c["args"], Json::array({"smoke-volume", "/smoke", "--nonce", "n0nce"}));
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/smoke");
  EXPECT_EQ(c["securityContext"]["capabilities"]["drop"], Json::array({"ALL"}));
  EXPECT_EQ(c["securityContext"]["allowPrivilegeEscalation"], false);
  EXPECT_EQ(c["securityContext"]["readOnlyRootFilesystem"], true);
  EXPECT_EQ(spec["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
}

TEST(SmokeVolume, AnEphemeralInlineVolumeOfTheDriverNeedsNoClaim) {
  SmokeTarget t = claimTarget();
  t.volume = {};
  t.volume.volumeAttributes = {{"size", "1Mi"}};
  t.volume.fsType = "ext4";
  EXPECT_FALSE(smokeClaim(t));
  const Json volume = smokePod(t)["spec"]["volumes"][0];
  EXPECT_EQ(volume["csi"], (Json{{"driver", "hostpath.csi.k8s.io"},
                                 {"volumeAttributes", {{"size", "1Mi"}}},
                                 {"fsType", "ext4"}}));
}

TEST(SmokeVolume, NoPodIsNotStartedASucceededOneHasPassed) {
  EXPECT_EQ(readSmoke({}).state, SmokeResult::State::NotStarted);
  SmokeObserved o;
  o.pod = podWith("Succeeded", {{"terminated", {{"exitCode", 0}, {"message", "ok"}}}});
  EXPECT_EQ(readSmoke(o).state, SmokeResult::State::Passed);
  EXPECT_EQ(readSmoke(o).message, "Mount: ok");
}

TEST(SmokeVolume, APassedTestListsEveryStageItWentThrough) {
  SmokeObserved o;
  o.pod = podWith(
      "Succeeded",
      {{"terminated",
        {{"exitCode", 0}, {"message", "Write: ok (34 bytes, synced)\nRead: ok\nCleanup: ok\n"}}}});
  o.claim = Json{{"spec", {{"volumeName", "pvc-1"}}}, {"status", {{"phase", "Bound"}}}};
  o.attachment = Json{{"status", {{"attached", true}}}};
  EXPECT_EQ(readSmoke(o).message, "Provision: ok (pvc-1); Attach: ok; Mount: ok; Write: ok (34 "
                                  "bytes, synced); Read: ok; Cleanup: ok");
}

TEST(SmokeVolume, AnUnboundClaimIsTheProvisionStageWithTheLatestFailure) {
  SmokeObserved o;
  o.pod = podWith("Pending");
  o.claim = Json{{"status", {{"phase", "Pending"}}}};
  o.events = {event("PersistentVolumeClaim", "ProvisioningFailed", "quota exceeded",
                    "2026-11-28T10:00:00Z"),
              event("PersistentVolumeClaim", "ExternalProvisioning", "waiting for a volume",
                    "2026-11-28T10:00:09Z"),
              event("PersistentVolumeClaim", "ProvisioningFailed", "no space left",
                    "2026-11-28T10:00:05Z")};
  const SmokeResult r = readSmoke(o);
  EXPECT_EQ(r.state, SmokeResult::State::Running) << "the provisioner retries: the gate's "
                                                     "timeout decides";
  EXPECT_EQ(r.stage, "Provision");
  EXPECT_EQ(r.message, "no space left");
}

TEST(SmokeVolume, AnUnattachedVolumeIsTheAttachStageWithItsError) {
  SmokeObserved o;
  o.pod = podWith("Pending", kWaitingToMount);
  o.claim = Json{{"status", {{"phase", "Bound"}}}};
  o.attachment =
      Json{{"status", {{"attached", false}, {"attachError", {{"message", "rpc error: denied"}}}}}};
  const SmokeResult r = readSmoke(o);
  EXPECT_EQ(r.stage, "Attach");
  EXPECT_EQ(r.message, "rpc error: denied");
  o.attachment = Json{{"status", {{"attached", true}}}};
  o.events = {event("Pod", "FailedMount", "MountVolume.SetUp failed: read-only file system",
                    "2026-11-28T10:00:00Z")};
  EXPECT_EQ(readSmoke(o).stage, "Mount");
  EXPECT_EQ(readSmoke(o).message, "MountVolume.SetUp failed: read-only file system");
}

TEST(SmokeVolume, APodWaitingToStartSaysWhy) {
  SmokeObserved o;
  o.pod = podWith("Pending", Json::object(),
                  Json::array({Json{{"type", "PodScheduled"},
                                    {"status", "False"},
                                    {"reason", "Unschedulable"},
                                    {"message", "0/3 nodes are available"}}}));
  EXPECT_EQ(readSmoke(o).stage, "Start");
  EXPECT_EQ(readSmoke(o).message, "Unschedulable: 0/3 nodes are available");
  o.pod = podWith("Pending", {{"waiting", {{"reason", "ImagePullBackOff"}, {"message", "gone"}}}});
  EXPECT_EQ(readSmoke(o).stage, "Start");
  EXPECT_EQ(readSmoke(o).message, "ImagePullBackOff: gone");
}

TEST(SmokeVolume, ARunningContainerHasMountedAndReportsItsOwnStages) {
  SmokeObserved o;
  o.pod = podWith("Running", {{"running", Json::object()}});
  EXPECT_EQ(readSmoke(o).state, SmokeResult::State::Running);
  EXPECT_EQ(readSmoke(o).stage, "Write");
  o.pod = podWith(
      "Failed", {{"terminated", {{"exitCode", 1}, {"message", "Read: read back 3 bytes, not 5"}}}});
  const SmokeResult r = readSmoke(o);
  EXPECT_EQ(r.state, SmokeResult::State::Failed);
  EXPECT_EQ(r.stage, "Read");
  EXPECT_EQ(r.message, "read back 3 bytes, not 5");
}

TEST(SmokeVolume, APodEndedByItsDeadlineFailsAtTheStageItWasIn) {
  SmokeObserved o;
  o.pod = podWith("Failed", kWaitingToMount);
  o.pod->at("status")["reason"] = "DeadlineExceeded";
  o.pod->at("status")["message"] = "Pod was active on the node longer than the specified deadline";
  o.events = {
      event("Pod", "FailedMount", "timed out waiting for the condition", "2026-11-28T10:00:00Z")};
  const SmokeResult r = readSmoke(o);
  EXPECT_EQ(r.state, SmokeResult::State::Failed);
  EXPECT_EQ(r.stage, "Mount");
  EXPECT_EQ(r.message,
            "DeadlineExceeded: Pod was active on the node longer than the specified deadline");
}

TEST(SmokeVolume, TheVolumeAttachmentNameIsKubernetes) {
  // csi-<sha256 of handle, driver and node>, as the kubelet and attach-detach controller name it.
  EXPECT_EQ(volumeAttachmentName("vol-1", "hostpath.csi.k8s.io", "node-a"),
            "csi-5a70c5de395ccad5e79daeb27c7c4f2634b675e6e1bb2a397999a016143bc9fb");
}

TEST(SmokeVolume, TheControllersProvisionTestIsAClaimWithTheSelectedNode) {
  ProvisionTarget t;
  t.owner = "hostpath";
  t.ownerUid = "uid-1";
  t.namespace_ = "csi-hostpath";
  t.templateDigest = "abc";
  t.node = "node-1";
  t.volume.storageClassName = "csi-hostpath-sc";
  t.volume.size = "1Mi";
  const Json claim = provisionClaim(t);
  EXPECT_EQ(claim["metadata"]["name"], provisionName("hostpath", "abc"));
  EXPECT_EQ(claim["metadata"]["name"].get<std::string>().rfind("hostpath-provision-", 0), 0u);
  EXPECT_EQ(claim["metadata"]["labels"][kProvisionLabel], "hostpath");
  EXPECT_EQ(claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"], "node-1");
  EXPECT_EQ(claim["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(claim["spec"]["storageClassName"], "csi-hostpath-sc");
  EXPECT_EQ(claim["spec"]["resources"]["requests"]["storage"], "1Mi");
  EXPECT_NE(provisionName("hostpath", "abd"), provisionName("hostpath", "abc"));
  EXPECT_LE(provisionName(std::string(80, 'a'), "abc").size(), 63u);
}

TEST(SmokeVolume, TheProvisionTestPassesOnceItsClaimIsBound) {
  EXPECT_EQ(readProvision(std::nullopt, {}).state, SmokeResult::State::NotStarted);
  Json claim = {{"spec", {{"volumeName", ""}}}, {"status", {{"phase", "Pending"}}}};
  const std::vector<Json> events = {{{"involvedObject", {{"kind", "PersistentVolumeClaim"}}},
                                     {"reason", "ProvisioningFailed"},
                                     {"lastTimestamp", "2026-11-29T04:00:00Z"},
                                     {"message", "rpc error: code = Unavailable"}}};
  const SmokeResult pending = readProvision(claim, events);
  EXPECT_EQ(pending.state, SmokeResult::State::Running);
  EXPECT_EQ(pending.stage, "Provision");
  EXPECT_EQ(pending.message, "rpc error: code = Unavailable");
  claim["spec"]["volumeName"] = "pvc-1";
  claim["status"]["phase"] = "Bound";
  const SmokeResult bound = readProvision(claim, events);
  EXPECT_EQ(bound.state, SmokeResult::State::Passed);
  EXPECT_EQ(bound.message, "Provision: ok (pvc-1)");
}

} // namespace
} // namespace csiop::driverdeployment
