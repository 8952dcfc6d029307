// The field masks of the many-object caches (caches.hpp) keep everything their transforms read:
// an object built from its text through the mask and cut down is the object parsed whole and cut
// down. Each case is an object as the API server sends it, with the fields the transform reads
// and many it does not.
#include <gtest/gtest.h>

#include <csiop/api/annotations.hpp>
#include <csiop/driverdeployment/caches.hpp>
#include <csiop/driverdeployment/compare.hpp>
#include <csiop/driverdeployment/node_rollout.hpp>
#include <csiop/driverdeployment/typed_caches.hpp>
#include <csiop/kube/field_mask.hpp>
#include <csiop/runtime/store.hpp>

namespace csiop::driverdeployment {
namespace {

using Transform = bool (*)(Json&);

// The transform of the whole object, and of the object as the mask builds it from its text.
void expectSameCut(const Json& whole, const kube::FieldMask& fields, Transform transform) {
  Json expected = whole;
  const bool keptWhole = transform(expected);
  Json masked = kube::parseMasked(whole.dump(), fields);
  const bool keptMasked = transform(masked);
  EXPECT_EQ(keptMasked, keptWhole) << whole.dump();
  if (keptWhole) {
    EXPECT_EQ(masked, expected) << whole.dump();
  }
}

// The pod cache's decision and entry from the whole pod, and from the pod as its mask builds it.
void expectSamePod(const Json& whole) {
  const Json masked = kube::parseMasked(whole.dump(), podFields());
  EXPECT_EQ(keptInPodCache(masked), keptInPodCache(whole)) << whole.dump();
  EXPECT_EQ(decodePod(masked), decodePod(whole)) << whole.dump();
}

Json workloadPod() {
  return Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {
      "name": "hostpath-node-x1", "generateName": "hostpath-node-", "namespace": "csi",
      "uid": "pod-uid", "resourceVersion": "812", "creationTimestamp": "2026-01-01T00:00:00Z",
      "deletionTimestamp": "2026-01-01T00:10:00Z", "deletionGracePeriodSeconds": 30,
      "labels": {"app.kubernetes.io/name": "hostpath", "csiop.dev/driverdeployment": "hostpath",
                 "controller-revision-hash": "7c9d", "pod-template-generation": "1"},
      "annotations": {"kubectl.kubernetes.io/default-container": "driver"},
      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "hostpath-node",
                           "uid": "ds-uid", "controller": true, "blockOwnerDeletion": true}],
      "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
                         "fieldsV1": {"f:metadata": {"f:labels": {}}}},
                        {"manager": "kubelet", "operation": "Update", "subresource": "status",
                         "fieldsV1": {"f:status": {"f:conditions": {}}}}]},
    "spec": {
      "nodeName": "node-1", "serviceAccountName": "hostpath-node",
      "containers": [{"name": "driver", "image": "registry.k8s.io/x:1", "args": ["--v=5"],
                      "volumeMounts": [{"name": "plugin-dir", "mountPath": "/csi"}]}],
      "volumes": [{"name": "plugin-dir", "hostPath": {"path": "/var/lib/kubelet/plugins/x"}}],
      "tolerations": [{"operator": "Exists"}]},
    "status": {
      "phase": "Pending", "hostIP": "10.0.0.1", "startTime": "2026-01-01T00:00:01Z",
      "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": "0/3 nodes are available", "lastTransitionTime": "t"},
        {"type": "Initialized", "status": "True", "lastTransitionTime": "t"},
        {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "lastTransitionTime": "t"}],
      "initContainerStatuses": [{"name": "init", "ready": true, "restartCount": 0,
                                 "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}],
      "containerStatuses": [
        {"name": "driver", "ready": false, "restartCount": 4, "image": "registry.k8s.io/x:1",
         "imageID": "", "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
             "message": "flag provided but not defined", "finishedAt": "2026-01-01T00:05:00Z",
             "startedAt": "2026-01-01T00:04:59Z", "containerID": "containerd://abc"}},
         "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}}},
        {"name": "registrar", "ready": true, "restartCount": 0,
         "state": {"running": {"startedAt": "t"}}}]}
  })");
}

Json withVolumes(Json pod) {
  pod["spec"]["volumes"] = Json::parse(R"([
      {"name": "data", "persistentVolumeClaim": {"claimName": "data-0", "readOnly": true}},
      {"name": "inline", "csi": {"driver": "hostpath.csi.k8s.io", "volumeAttributes": {"a": "b"}}},
      {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"storageClassName": "x"}}}},
      {"name": "tmp", "emptyDir": {}},
      {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}])");
  return pod;
}

Json withoutOwnerLabel(Json pod) {
  pod["metadata"]["labels"].erase(api::kOwnerLabel);
  return pod;
}

TEST(CacheFields, AWorkloadPodIsCachedTheSameFromItsMaskedFields) {
  const Json pod = workloadPod();
  expectSamePod(pod);
  const CachedPod cached = decodePod(pod);
  EXPECT_TRUE(cached.deleting);
  EXPECT_TRUE(cached.unschedulable);
  EXPECT_EQ(cached.waiting.size(), 1U) << "the driver crash-looping";
  EXPECT_EQ(cached.crashLoop(), "driver: back-off 40s");
  ASSERT_EQ(cached.restarted.size(), 1U) << "the driver restarted; the registrar did not";
  const CachedPod::RestartedContainer* driver = cached.restartedContainer("driver");
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->restarts, 4);
  EXPECT_EQ(driver->exitCode, 1);
  EXPECT_EQ(driver->reason, "Error");
  EXPECT_EQ(driver->message, "flag provided but not defined");
  EXPECT_EQ(driver->finished, api::parseRfc3339("2026-01-01T00:05:00Z"));
  EXPECT_EQ(cached.restartedContainer("registrar"), nullptr);
  EXPECT_EQ(cached.created, api::parseRfc3339("2026-01-01T00:00:00Z"));
  EXPECT_EQ(cached.readySince, api::WallTime{}) << "not ready";
  Json healthy = pod;
  healthy["status"] = Json::parse(R"({"phase": "Running", "conditions": [
      {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:09Z"},
      {"type": "PodScheduled", "status": "True"}],
      "containerStatuses": [{"name": "driver", "state": {"running": {}}}]})");
  healthy["metadata"].erase("deletionTimestamp");
  expectSamePod(healthy);
  EXPECT_TRUE(decodePod(healthy).ready);
  EXPECT_EQ(decodePod(healthy).readySince, api::parseRfc3339("2026-01-01T00:00:09Z"));
  EXPECT_EQ(decodePod(healthy).crashLoop(), "");
  Json bare = Json::parse(R"({"metadata": {"name": "bare"}})");
  bare["metadata"]["labels"][api::kOwnerLabel] = "hostpath";
  expectSamePod(bare);
  EXPECT_TRUE(keptInPodCache(bare));
}

TEST(CacheFields, AVolumeUserIsCachedTheSameFromItsMaskedFields) {
  Json pod = withVolumes(withoutOwnerLabel(workloadPod()));
  expectSamePod(pod);
  EXPECT_TRUE(keptInPodCache(pod));
  // Not kept at all: no owner label, and no claim, CSI or ephemeral volume.
  expectSamePod(withoutOwnerLabel(workloadPod()));
  EXPECT_FALSE(keptInPodCache(withoutOwnerLabel(workloadPod())));
  pod["spec"]["volumes"] = "not a list";
  expectSamePod(pod);
}

TEST(CacheFields, ALongTerminationMessageIsCutWhereACharacterBegins) {
  Json pod = workloadPod();
  // 511 bytes, then a two-byte character across the 512-byte cut.
  pod["status"]["containerStatuses"][0]["lastState"]["terminated"]["message"] =
      std::string(511, 'x') + "\xc3\xa9" + std::string(100, 'y');
  const CachedPod cached = decodePod(pod);
  ASSERT_EQ(cached.restarted.size(), 1U);
  EXPECT_EQ(cached.restarted[0].message, std::string(511, 'x'));
  EXPECT_NO_THROW((void)Json(cached.restarted[0].message).dump());
}

TEST(CacheFields, AWorkloadPodWithVolumesKeepsBoth) {
  const Json pod = withVolumes(workloadPod());
  expectSamePod(pod);
  const CachedPod cached = decodePod(pod);
  EXPECT_EQ(cached.owner, "hostpath");
  EXPECT_EQ(cached.controllerUid, "ds-uid");
  EXPECT_EQ(cached.revisionHash, "7c9d");
  EXPECT_EQ(cached.volumes.size(), 3U) << "the claim, the CSI volume and the ephemeral one";
  EXPECT_EQ(cached.inlineDrivers(), std::vector<std::string>{"hostpath.csi.k8s.io"});
}

// What the typed entry saves: a healthy node plugin pod as the cache keeps it, against the JSON
// tree of the same fields (what the cache kept before; runtime::heapBytesOf).
TEST(CacheFields, ACachedPodTakesAFractionOfItsFieldsAsAJsonTree) {
  Json pod = workloadPod();
  pod["status"] = Json::parse(R"({"phase": "Running", "conditions": [
      {"type": "Ready", "status": "True"}]})");
  pod["metadata"].erase("deletionTimestamp");
  const CachedPod cached = decodePod(pod);
  const std::size_t typed = sizeof(CachedPod) + runtime::StoreEntry<CachedPod>::heapBytes(cached);
  const Json tree = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "hostpath-node-x1", "namespace": "csi", "uid": "pod-uid",
                   "resourceVersion": "812",
                   "labels": {"csiop.dev/driverdeployment": "hostpath", "controller-revision-hash": "7c9d"},
                   "ownerReferences": [{"kind": "DaemonSet", "name": "hostpath-node", "uid": "ds-uid"}]},
      "spec": {"nodeName": "node-1"},
      "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})");
  EXPECT_LT(typed * 3, runtime::heapBytesOf(tree))
      << "typed " << typed << " bytes, tree " << runtime::heapBytesOf(tree);
}

TEST(CacheFields, ANodeIsCutTheSameFromItsMaskedFields) {
  Json node = Json::parse(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "node-1", "uid": "n1", "resourceVersion": "55",
                 "labels": {"kubernetes.io/hostname": "node-1"},
                 "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
    "spec": {"unschedulable": true, "podCIDR": "10.1.0.0/24",
             "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]},
    "status": {"capacity": {"cpu": "4"}, "images": [{"names": ["a"], "sizeBytes": 1}],
               "conditions": [{"type": "Ready", "status": "True"}]}
  })");
  node["metadata"]["annotations"][kAllowNodePluginUpdateAnnotation] = "true";
  expectSameCut(node, nodeFields(), cutDownNode);
  node["spec"].erase("unschedulable");
  node["metadata"]["annotations"].erase(kAllowNodePluginUpdateAnnotation);
  expectSameCut(node, nodeFields(), cutDownNode);
}

TEST(CacheFields, ACSINodeIsCachedTheSameFromItsMaskedFields) {
  const Json csiNode = Json::parse(R"({
    "apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
    "metadata": {"name": "node-1", "uid": "c1", "resourceVersion": "9",
                 "ownerReferences": [{"kind": "Node", "name": "node-1", "uid": "n1"}]},
    "spec": {"drivers": [
      {"name": "hostpath.csi.k8s.io", "nodeID": "node-1", "topologyKeys": ["topology.hostpath"],
       "allocatable": {"count": 100}},
      {"name": "ebs.csi.aws.com", "nodeID": "i-123", "topologyKeys": null}]}
  })");
  const CachedCSINode cached = decodeCSINode(csiNode);
  EXPECT_EQ(decodeCSINode(kube::parseMasked(csiNode.dump(), csiNodeFields())), cached);
  EXPECT_EQ(cached.name, "node-1");
  EXPECT_EQ(cached.drivers, (std::vector<std::string>{"hostpath.csi.k8s.io", "ebs.csi.aws.com"}));
  EXPECT_TRUE(
      decodeCSINode(Json::parse(R"({"metadata": {"name": "n"}, "spec": {"drivers": null}})"))
          .drivers.empty());
}

Json daemonSet() {
  return Json::parse(R"({
    "apiVersion": "apps/v1", "kind": "DaemonSet",
    "metadata": {
      "name": "hostpath-node", "namespace": "csi", "uid": "ds-uid", "resourceVersion": "90",
      "generation": 2, "labels": {"csiop.dev/driverdeployment": "hostpath"},
      "annotations": {"deprecated.daemonset.template.generation": "2"},
      "ownerReferences": [{"apiVersion": "csiop.dev/v1alpha1", "kind": "DriverDeployment",
                           "name": "hostpath", "uid": "dd-uid", "controller": true}],
      "managedFields": [
        {"manager": "csi-operator", "operation": "Apply", "apiVersion": "apps/v1",
         "time": "t", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {}}}}}},
        {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
         "fieldsV1": {"f:status": {"f:numberReady": {}}}}]},
    "spec": {"selector": {"matchLabels": {"app": "x"}},
             "template": {"metadata": {"labels": {"app": "x"}},
                          "spec": {"containers": [{"name": "driver", "image": "x:1",
                                                   "args": ["--v=5"], "managedFields": 1}]}}},
    "status": {"numberReady": 3, "desiredNumberScheduled": 3, "observedGeneration": 2}
  })");
}

// The entry of `object` as a children's cache keeps it: built through the mask, prepared as the
// store prepares it (managedFields summarised), decoded.
CachedChild cachedThroughMask(const Json& object) {
  Json masked = kube::parseMasked(object.dump(), childFields());
  if (masked["metadata"].contains("managedFields")) {
    masked["metadata"]["managedFields"] =
        runtime::managerSummary(masked["metadata"]["managedFields"]);
  }
  return decodeChild(std::move(masked));
}

// A child's cache keeps it whole but for its managedFields' field sets: built through the mask,
// it is the whole object with managedFields cut to runtime::managerSummary, as the store keeps it;
// its metadata and status as a tree, the rest as text.
TEST(CacheFields, AChildIsWholeButTheFieldSetsOfItsManagedFields) {
  const Json whole = daemonSet();
  Json expected = whole;
  expected["metadata"]["managedFields"] =
      runtime::managerSummary(whole["metadata"]["managedFields"]);
  const CachedChild cached = cachedThroughMask(whole);
  EXPECT_TRUE(sameJson(cached.whole(), expected)) << cached.whole().dump();
  // The same entry from the whole object (as tests and the relist fallback give it).
  const CachedChild fromWhole = decodeChild(Json(expected));
  EXPECT_TRUE(sameJson(fromWhole.whole(), expected)) << fromWhole.whole().dump();
  EXPECT_EQ(fromWhole.body, cached.body);
  EXPECT_EQ(fromWhole.content, cached.content);
  // Nothing of a field set was built; the spec is text only.
  for (const Json& entry : cached.head["metadata"]["managedFields"]) {
    EXPECT_FALSE(entry.contains("fieldsV1")) << entry.dump();
    EXPECT_FALSE(entry.contains("time")) << entry.dump();
  }
  EXPECT_EQ(cached.head["status"], whole["status"]);
  EXPECT_FALSE(cached.head.contains("spec")); // a DaemonSet has no spec.replicas
  // Of the metadata, what every pass reads; the other labels and annotations in the body.
  const Json& meta = cached.head["metadata"];
  for (const char* key :
       {"name", "namespace", "uid", "resourceVersion", "generation", "ownerReferences"}) {
    EXPECT_EQ(meta[key], whole["metadata"][key]) << key;
  }
  EXPECT_EQ(meta["labels"], whole["metadata"]["labels"]); // csiop.dev/driverdeployment only
  EXPECT_FALSE(meta.contains("annotations"));
  Json bodyMetadata = whole["metadata"];
  bodyMetadata.erase("resourceVersion");
  bodyMetadata.erase("managedFields");
  EXPECT_TRUE(
      sameJson(Json::parse(cached.body), Json{{"metadata", bodyMetadata}, {"spec", whole["spec"]}}))
      << cached.body;
}

// A Deployment's head has its spec.replicas (the status reads it); a ClusterRole has no spec,
// its rules are the body.
TEST(CacheFields, AChildsHeadHasWhatEveryPassReads) {
  Json deployment = daemonSet();
  deployment["kind"] = "Deployment";
  deployment["spec"]["replicas"] = 2;
  const CachedChild cached = cachedThroughMask(deployment);
  EXPECT_EQ(cached.head["spec"], (Json{{"replicas", 2}}));
  EXPECT_EQ(cached.whole()["spec"], deployment["spec"]); // the body's spec, whole
  const Json role = Json::parse(R"({"apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole", "metadata": {"name": "r", "resourceVersion": "5"},
    "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})");
  const CachedChild r = cachedThroughMask(role);
  const Json head = {{"apiVersion", role["apiVersion"]},
                     {"kind", "ClusterRole"},
                     {"metadata", {{"name", "r"}, {"resourceVersion", "5"}}}};
  EXPECT_TRUE(sameJson(r.head, head)) << r.head.dump();
  EXPECT_EQ(r.whole()["rules"], role["rules"]);
}

// The content digest tells a change of what the operator applies (spec, labels, annotations,
// owners) from one of status, resourceVersion or who wrote it. The operator's own labels and
// annotations are in the head; the others only in the body.
TEST(CacheFields, AChildsContentIgnoresStatusVersionAndWriters) {
  const Json base = daemonSet();
  const std::uint64_t content = cachedThroughMask(base).content;
  Json statusOnly = base;
  statusOnly["status"]["numberReady"] = 2;
  statusOnly["metadata"]["resourceVersion"] = "91";
  statusOnly["metadata"]["managedFields"][1]["time"] = "later";
  EXPECT_EQ(cachedThroughMask(statusOnly).content, content);
  Json spec = base;
  spec["spec"]["template"]["spec"]["containers"][0]["image"] = "x:2";
  Json label = base;
  label["metadata"]["labels"]["extra"] = "1";
  Json annotation = base;
  annotation["metadata"]["annotations"]["a"] = "b";
  EXPECT_FALSE(cachedThroughMask(annotation).head["metadata"].contains("annotations"));
  Json unmanaged = base;
  unmanaged["metadata"]["annotations"]["csiop.dev/unmanaged"] = "true";
  EXPECT_EQ(cachedThroughMask(unmanaged).head["metadata"]["annotations"],
            (Json{{"csiop.dev/unmanaged", "true"}}));
  Json recreated = base;
  recreated["metadata"]["uid"] = "other-uid";
  for (const Json* changed : {&spec, &label, &annotation, &unmanaged, &recreated}) {
    EXPECT_NE(cachedThroughMask(*changed).content, content) << changed->dump();
  }
}

} // namespace
} // namespace csiop::driverdeployment
