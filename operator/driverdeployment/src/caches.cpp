#include <csiop/driverdeployment/caches.hpp>

#include <csiop/driverdeployment/pod_creation.hpp>

#include <algorithm>

#include <csiop/api/json_access.hpp>

#include <csiop/driverdeployment/node_rollout.hpp>
#include <csiop/driverdeployment/startup_taint.hpp>
#include <csiop/driverdeployment/volume_health.hpp>
#include <csiop/driverdeployment/volume_usage.hpp>
#include <csiop/render/render.hpp>

namespace csiop::driverdeployment {

namespace r = kube::resources;

namespace {

// A PersistentVolume's spec.csi.driver ("" : not a CSI volume).
std::string persistentVolumeDriver(const Json& pv) {
  return api::stringField(api::member(api::member(pv, "spec"), "csi"), "driver");
}

// The index of the volume Events: the driver they concern (volume_health.hpp).
std::string volumeEventDriver(const Json& event, const Informer& persistentVolumes,
                              const Caches& caches) {
  return driverdeployment::volumeEventDriver(
      volumeEventOf(event),
      [&](const std::string& name) {
        const Json* pv = persistentVolumes.get("", name);
        return pv == nullptr ? std::string() : persistentVolumeDriver(*pv);
      },
      [&](const std::string& ns, const std::string& name) { return caches.pod(ns, name); });
}

std::vector<std::string> registeredDrivers(const CachedCSINode& csiNode) {
  return csiNode.drivers;
}

std::vector<std::string> ownerLabelValue(const Json& object) {
  std::string owner = ownerLabelOf(object);
  return owner.empty() ? std::vector<std::string>{} : std::vector<std::string>{std::move(owner)};
}

std::vector<std::string> startupTaintOf(const Json& driverDeployment) {
  const Json& key =
      api::member(api::member(api::member(driverDeployment, "spec"), "startupTaint"), "key");
  return key.is_string() ? std::vector<std::string>{key.get<std::string>()}
                         : std::vector<std::string>{};
}

std::vector<std::string> driverNameOf(const Json& driverDeployment) {
  const Json& value = api::member(api::member(driverDeployment, "spec"), "driverName");
  return value.is_string() ? std::vector<std::string>{value.get<std::string>()}
                           : std::vector<std::string>{};
}

// apiVersion, kind, metadata.name and metadata.resourceVersion: what every cache keeps.
kube::FieldMask typeAndName() {
  return kube::FieldMask()
      .keep({"apiVersion"})
      .keep({"kind"})
      .keep({"metadata", "name"})
      .keep({"metadata", "resourceVersion"});
}

std::vector<std::string> childOwner(const CachedChild& child) {
  return ownerLabelValue(child.head);
}

} // namespace

std::vector<std::string> podOwner(const CachedPod& pod) {
  return pod.owner.empty() ? std::vector<std::string>{} : std::vector<std::string>{pod.owner};
}

std::vector<std::string> volumeUserIndex(const CachedPod& pod) {
  return pod.usesVolumes() ? std::vector<std::string>{"true"} : std::vector<std::string>{};
}

// What the node plugin rollout reads of a Node; status (images, conditions, ...) is most of it.
bool cutDownNode(Json& node) {
  const Json meta = node.value("metadata", Json::object());
  Json slim = {{"apiVersion", node.value("apiVersion", Json("v1"))},
               {"kind", node.value("kind", Json("Node"))},
               {"metadata",
                {{"name", meta.value("name", Json(""))},
                 {"resourceVersion", meta.value("resourceVersion", Json(""))}}}};
  const Json annotations = meta.value("annotations", Json::object());
  if (annotations.is_object() && annotations.contains(kAllowNodePluginUpdateAnnotation)) {
    slim["metadata"]["annotations"] = {
        {kAllowNodePluginUpdateAnnotation, annotations[kAllowNodePluginUpdateAnnotation]}};
  }
  const Json spec = node.value("spec", Json::object());
  if (spec.is_object() && spec.value("unschedulable", false) == true) {
    slim["spec"]["unschedulable"] = true;
  }
  if (spec.is_object() && spec.contains("taints") && spec["taints"].is_array() &&
      !spec["taints"].empty()) {
    // Whole: a startup taint's removal tests the list as read (startup_taint.hpp).
    slim["spec"]["taints"] = spec["taints"];
  }
  node = std::move(slim);
  return true;
}

kube::FieldMask podFields() {
  kube::FieldMask m = typeAndName();
  m.keep({"metadata", "namespace"})
      .keep({"metadata", "uid"})
      .keep({"metadata", "deletionTimestamp"})
      .keep({"metadata", "creationTimestamp"});
  for (const char* key : {"kind", "uid", "controller"}) {
    m.keep({"metadata", "ownerReferences", key});
  }
  // a workload's pod (CachedPod)
  m.keep({"metadata", "labels", api::kOwnerLabel})
      .keep({"metadata", "labels", "controller-revision-hash"})
      .keep({"metadata", "labels", "pod-template-hash"})
      .keep({"spec", "nodeName"})
      .keep({"status", "phase"});
  for (const char* key : {"type", "status", "reason", "message", "lastTransitionTime"}) {
    m.keep({"status", "conditions", key});
  }
  for (const char* key : {"initContainerStatuses", "containerStatuses"}) {
    m.keep({"status", key, "name"})
        .keep({"status", key, "state", "waiting"})
        .keep({"status", key, "restartCount"});
    for (const char* last : {"exitCode", "reason", "message", "finishedAt"}) {
      m.keep({"status", key, "lastState", "terminated", last});
    }
  }
  // a pod with volumes
  for (const char* key : {"name", "persistentVolumeClaim", "csi", "ephemeral"}) {
    m.keep({"spec", "volumes", key});
  }
  return m;
}

std::string ownerLabelOf(const Json& object) {
  return api::stringField(api::member(api::member(object, "metadata"), "labels"), api::kOwnerLabel);
}

kube::FieldMask nodeFields() {
  return typeAndName()
      .keep({"metadata", "annotations", kAllowNodePluginUpdateAnnotation})
      .keep({"spec", "unschedulable"})
      .keep({"spec", "taints"});
}

kube::FieldMask csiNodeFields() {
  return typeAndName().keep({"spec", "drivers", "name"});
}

kube::FieldMask failedCreateFields() {
  kube::FieldMask m = typeAndName();
  m.keep({"metadata", "namespace"}).keep({"metadata", "creationTimestamp"});
  for (const char* key : {"kind", "namespace", "name", "uid"}) {
    m.keep({"involvedObject", key});
  }
  return m.keep({"message"})
      .keep({"lastTimestamp"})
      .keep({"eventTime"})
      .keep({"series", "lastObservedTime"});
}

kube::FieldMask volumeEventFields() {
  return failedCreateFields()
      .keep({"reason"})
      .keep({"source", "component"})
      .keep({"reportingComponent"});
}

kube::FieldMask childFields() {
  kube::FieldMask m = kube::FieldMask()
                          .keepText({"*"})
                          .keep({"apiVersion"})
                          .keep({"kind"})
                          .keep({"status"})
                          .keep({"metadata", "*"});
  for (const char* key : {"manager", "operation", "subresource"}) {
    m.keep({"metadata", "managedFields", key});
  }
  return m;
}

Caches::Caches(kube::Client& client, const kube::ResourceRef& csiDriverResource,
               const std::vector<api::ObjectKind>& objectKinds)
    : driverDeployments(client, r::driverdeployments), csiDrivers(client, csiDriverResource),
      csiNodes(client, r::csinodes), namespaces(client, r::namespaces),
      pods(client, r::pods, api::kOwnerLabel),
      podsOnDemand(client.executor(), pods, runtime::steadyClock(), kOnDemandPodsIdle,
                   "the workloads' pods"),
      podsWithVolumes(client, r::pods),
      podsWithVolumesOnDemand(client.executor(), podsWithVolumes, runtime::steadyClock(),
                              kOnDemandPodsIdle, "the pods with volumes"),
      podLookups(client), persistentVolumes(client, r::persistentvolumes),
      volumeAttachments(client, r::volumeattachments), nodes(client, r::nodes),
      controllerRevisions(client, r::controllerrevisions, api::kOwnerLabel),
      failedCreates(client, r::events, {}, false, kFailedCreateSelector),
      provisioningFailures(client, r::events, {}, false,
                           volumeEventSelector(kProvisioningFailedEvent)),
      attachFailures(client, r::events, {}, false, volumeEventSelector(kFailedAttachVolumeEvent)),
      mountFailures(client, r::events, {}, false, volumeEventSelector(kFailedMountEvent)),
      sharedRoles(client, r::clusterroles, api::kSharedLabel) {
  // Each many-object cache builds only what its transform reads as it parses (field_mask.hpp).
  pods.setFields(podFields());
  pods.setTransform([](Json& pod) { return keptInPodCache(pod); });
  podsWithVolumes.setFields(podFields());
  podsWithVolumes.setTransform([](Json& pod) { return !workloadPod(pod) && usesReadVolumes(pod); });
  podsWithVolumes.addIndex(kUsesVolumes, volumeUserIndex);
  nodes.setFields(nodeFields());
  nodes.setTransform(cutDownNode);
  nodes.addIndex(kByTaint, taintKeysOf);
  csiNodes.setFields(csiNodeFields());
  csiNodes.addIndex(kByDriver, registeredDrivers);
  driverDeployments.addIndex(kByDriver, driverNameOf);
  driverDeployments.addIndex(kByTaint, startupTaintOf);
  csiDrivers.addIndex(kByOwner, ownerLabelValue); // every one is cached: foreign ones too
  pods.addIndex(kByOwner, podOwner);
  pods.addIndex(kUsesVolumes, volumeUserIndex);
  controllerRevisions.addIndex(kByOwner, ownerLabelValue);
  failedCreates.setFields(failedCreateFields());
  failedCreates.addIndex(kByWorkload,
                         [](const Json& event) { return std::vector{involvedObjectKey(event)}; });
  persistentVolumes.addIndex(
      kByDriver, [](const Json& pv) { return std::vector{persistentVolumeDriver(pv)}; });
  volumeAttachments.addIndex(kByDriver, [](const Json& va) {
    return std::vector{api::stringField(api::member(va, "spec"), "attacher")};
  });
  for (Informer* events : {&provisioningFailures, &attachFailures, &mountFailures}) {
    events->setFields(volumeEventFields());
    // The server selects the reason; other drivers' and foreign pods' Events of that reason are
    // not kept (a busy cluster's FailedMount of ConfigMaps would cost memory and handler calls
    // for nothing). One that arrives before its driver's DriverDeployment or PersistentVolume is
    // in the caches is kept from its next repeat (the kubelet and the provisioner write a
    // failure again as they retry; the count goes up).
    events->setTransform([this](Json& event) {
      const std::string driver = driverOfVolumeEvent(event);
      if (driver.empty()) {
        wantPodOfVolumeEvent(event);
      }
      return !driver.empty() && driverDeployments.countByIndex(kByDriver, driver) > 0;
    });
    events->addIndex(kByDriver,
                     [this](const Json& event) { return std::vector{driverOfVolumeEvent(event)}; });
  }
  controllerRevisions.setFields(typeAndName().keep({"metadata"}).keep({"revision"}));
  controllerRevisions.setTransform([](Json& revision) {
    revision.erase("data"); // the whole pod template, never read
    return true;
  });
  // Only objects carrying the owner label: the operator's, never the cluster's.
  const auto addChild = [&](const kube::ResourceRef& ref, bool optional) {
    children.push_back(std::make_unique<ChildInformer>(client, ref, api::kOwnerLabel, optional));
    children.back()->setFields(childFields());
    children.back()->addIndex(kByOwner, childOwner);
  };
  for (const auto* ref : {&r::serviceaccounts, &r::clusterroles, &r::clusterrolebindings, &r::roles,
                          &r::rolebindings, &r::daemonsets, &r::deployments, &r::statefulsets,
                          &r::storageclasses, &r::configmaps, &r::services}) {
    addChild(*ref, false);
  }
  // policy/v1 since Kubernetes 1.21; the snapshot API only where its CRDs are installed.
  addChild(r::poddisruptionbudgets, true);
  addChild(r::volumesnapshotclasses, true);
  objectKinds_ = api::builtinObjectKinds();
  for (const api::ObjectKind& k : objectKinds) {
    if (std::find(objectKinds_.begin(), objectKinds_.end(), k) != objectKinds_.end()) {
      continue;
    }
    objectKinds_.push_back(k);
    if (child(k.kind) == nullptr) {
      addChild(kube::ResourceRef{k.group(), k.version(), k.resource, k.kind, true}, true);
    }
  }
}

ChildInformer* Caches::child(const std::string& kind) {
  for (auto& c : children) {
    if (c->resource().kind == kind) {
      return c.get();
    }
  }
  return nullptr;
}

const kube::ResourceRef* Caches::resourceOf(const std::string& kind) {
  if (kind == csiDrivers.resource().kind) {
    return &csiDrivers.resource();
  }
  if (kind == namespaces.resource().kind) {
    return &namespaces.resource();
  }
  const ChildInformer* c = child(kind);
  return c == nullptr ? nullptr : &c->resource();
}

std::string Caches::driverOfVolumeEvent(const Json& event) const {
  return volumeEventDriver(event, persistentVolumes, *this);
}

void Caches::wantPodOfVolumeEvent(const Json& event) {
  const VolumeEvent e = volumeEventOf(event);
  // A pod's volume that is no PersistentVolume: an inline one, or a ConfigMap's, a Secret's...
  // Its driver is in the pod's spec: the pod is looked up, and the kubelet's next sighting of
  // the failure (it writes it again as it retries) finds it.
  if (e.kind == "Pod" && pod(e.namespace_, e.name) == nullptr && !namedVolume(e.message).empty() &&
      anyManagedDriverServesInlineVolumes()) {
    podLookups.ask(e.namespace_, e.name);
  }
}

const CachedPod* Caches::pod(const std::string& ns, const std::string& name) const {
  if (const CachedPod* own = pods.get(ns, name)) {
    return own;
  }
  if (const CachedPod* withVolumes = podsWithVolumes.get(ns, name)) {
    return withVolumes;
  }
  return podLookups.get(ns, name);
}

bool Caches::servesInlineVolumes(const std::string& driverName) const {
  const Json* driver = csiDrivers.get("", driverName);
  if (driver == nullptr) {
    return false;
  }
  const Json& modes = api::member(api::member(*driver, "spec"), "volumeLifecycleModes");
  return modes.is_array() &&
         std::find(modes.begin(), modes.end(), Json("Ephemeral")) != modes.end();
}

bool Caches::anyManagedDriverServesInlineVolumes() const {
  for (const Json* dd : driverDeployments.list()) {
    const Json& name = api::member(api::member(*dd, "spec"), "driverName");
    if (name.is_string() && servesInlineVolumes(name.get<std::string>())) {
      return true;
    }
  }
  return false;
}

std::vector<Informer*> Caches::objectCaches() {
  return {&driverDeployments,   &csiDrivers,    &namespaces,
          &persistentVolumes,   &nodes,         &volumeAttachments,
          &controllerRevisions, &failedCreates, &provisioningFailures,
          &attachFailures,      &mountFailures};
}

std::vector<runtime::RunnableCache*> Caches::all() {
  std::vector<runtime::RunnableCache*> out = {&csiNodes, &sharedRoles};
  for (Informer* i : objectCaches()) {
    out.push_back(i);
  }
  for (auto& c : children) {
    out.push_back(c.get());
  }
  return out;
}

std::vector<const Json*> Caches::driverDeploymentsOf(const std::string& driverName) const {
  return driverDeployments.byIndex(kByDriver, driverName);
}

std::size_t Caches::nodesRegistering(const std::string& driverName) const {
  return csiNodes.countByIndex(kByDriver, driverName);
}

VolumeUsage Caches::volumesOf(const std::string& driverName,
                              const std::optional<SmokeTestOwner>& owner) const {
  return volumeUsage(driverName, persistentVolumes.list(), volumeAttachments.list(), volumeUsers(),
                     owner);
}

boost::asio::awaitable<bool> Caches::demandVolumeUsers(runtime::Clock::Duration timeout) {
  podsWithVolumesOnDemand.want(); // both list at once
  const bool own = co_await podsOnDemand.demand(timeout);
  if (!own) {
    co_return false;
  }
  co_return co_await podsWithVolumesOnDemand.demand(timeout);
}

std::vector<const CachedPod*> Caches::volumeUsers() const {
  std::vector<const CachedPod*> out = pods.byIndex(kUsesVolumes, "true");
  const std::vector<const CachedPod*> others = podsWithVolumes.byIndex(kUsesVolumes, "true");
  out.insert(out.end(), others.begin(), others.end());
  return out;
}

bool Caches::synced() {
  for (auto* i : all()) {
    if (!i->synced()) {
      return false;
    }
  }
  return true;
}

} // namespace csiop::driverdeployment
