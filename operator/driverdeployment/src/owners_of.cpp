// Which DriverDeployments a change of a cached object concerns (watches.cpp queues them).
#include <csiop/driverdeployment/reconciler.hpp>

#include <set>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/caches.hpp>
#include <csiop/driverdeployment/startup_taint.hpp>
#include <csiop/driverdeployment/volume_health.hpp>
#include <csiop/render/render.hpp>

namespace csiop::driverdeployment {
using api::Json;
using api::metadataField;
using api::stringField;

std::vector<std::string> Reconciler::ownersOf(const Json& object) {
  const std::string kind = object.value("kind", std::string());
  if (kind == "DriverDeployment") {
    return {metadataField(object, "name")};
  }
  if (const std::string owner = ownerLabelOf(object); !owner.empty() && kind != "CSIDriver") {
    return {owner};
  }
  if (kind == "Namespace") { // its labels (Pod Security) may allow what was refused
    std::vector<std::string> out;
    const std::string name = metadataField(object, "name");
    for (const Json* dd : caches_.driverDeployments.list()) {
      const std::string ddName = metadataField(*dd, "name");
      if (api::driverNamespaceOf(ddName, stringField(api::member(*dd, "spec"), "namespace")) ==
          name) {
        out.push_back(ddName);
      }
    }
    return out;
  }
  if (const std::string reason = stringField(object, "reason");
      kind == "Event" && (reason == kProvisioningFailedEvent || reason == kFailedMountEvent ||
                          reason == kFailedAttachVolumeEvent)) {
    // A volume of a driver failing: the DriverDeployments of the driver.
    std::vector<std::string> out;
    if (const std::string driver = caches_.driverOfVolumeEvent(object); !driver.empty()) {
      for (const Json* dd : caches_.driverDeploymentsOf(driver)) {
        out.push_back(metadataField(*dd, "name"));
      }
    }
    return out;
  }
  if (kind == "Event") { // a workload's FailedCreate: the DriverDeployment of the workload
    const Json& involved = api::member(object, "involvedObject");
    if (ChildInformer* workloads = caches_.child(stringField(involved, "kind"))) {
      if (const CachedChild* workload =
              workloads->get(stringField(involved, "namespace"), stringField(involved, "name"))) {
        if (std::string owner = ownerLabelOf(workload->head); !owner.empty()) {
          return {std::move(owner)};
        }
      }
    }
    return {};
  }
  // A CSIDriver (ours or foreign) concerns the DriverDeployments of its driver; a volume of a
  // driver, only those being deleted (their deletion may wait for it).
  std::set<std::string> drivers;
  bool deletingOnly = false;
  std::vector<std::string> out;
  if (kind == "Node") { // the node plugin rollouts waiting on it, the startup taints it carries
    waitingOn(metadataField(object, "name"), out);
    for (const std::string& key : taintKeysOf(object)) {
      for (const Json* dd : caches_.driverDeployments.byIndex(kByTaint, key)) {
        out.push_back(metadataField(*dd, "name"));
      }
    }
  }
  if (kind == "VolumeAttachment") { // one the status names, or a new error of a driver's
    failingOn("VolumeAttachment " + metadataField(object, "name"), out);
    const Json& status = api::member(object, "status");
    if (status.contains("attachError") || status.contains("detachError")) {
      for (const Json* dd :
           caches_.driverDeploymentsOf(stringField(api::member(object, "spec"), "attacher"))) {
        out.push_back(metadataField(*dd, "name"));
      }
    }
  }
  if (const auto used = driversUsedBy(object); !used.empty()) {
    drivers.insert(used.begin(), used.end());
    deletingOnly = true;
  } else if (kind == "CSIDriver") {
    drivers.insert(metadataField(object, "name"));
  }
  for (const std::string& driver : drivers) {
    deletionsOf(driver, deletingOnly, out);
  }
  return out;
}

std::vector<std::string> Reconciler::ownersOf(const CachedPod& pod) {
  std::vector<std::string> out;
  if (!pod.owner.empty()) {
    out.push_back(pod.owner); // a workload's pod (it may have volumes too)
  }
  if (pod.usesVolumes()) {
    failingOn("Pod " + pod.key(), out);
    waitingOn(pod.nodeName, out);
    const std::vector<std::string> drivers = pod.inlineDrivers();
    for (const std::string& driver : std::set<std::string>(drivers.begin(), drivers.end())) {
      deletionsOf(driver, true, out);
    }
  }
  return out;
}

std::vector<std::string> Reconciler::ownersOf(const CachedCSINode& csiNode) {
  const std::set<std::string> drivers(csiNode.drivers.begin(), csiNode.drivers.end());
  std::vector<std::string> out;
  for (const std::string& driver : drivers) {
    deletionsOf(driver, false, out);
  }
  return out;
}

std::vector<std::string> Reconciler::ownersOf(const CachedChild& child) {
  return ownersOf(child.head);
}

void Reconciler::waitingOn(const std::string& node, std::vector<std::string>& out) const {
  for (const auto& [dd, nodes] : waitingNodes_) {
    if (nodes.contains(node)) {
      out.push_back(dd);
    }
  }
}

void Reconciler::deletionsOf(const std::string& driver, bool deletingOnly,
                             std::vector<std::string>& out) const {
  for (const Json* dd : caches_.driverDeploymentsOf(driver)) {
    if (!deletingOnly ||
        !api::member(api::member(*dd, "metadata"), "deletionTimestamp").is_null()) {
      out.push_back(metadataField(*dd, "name"));
    }
  }
}

void Reconciler::failingOn(const std::string& object, std::vector<std::string>& out) const {
  for (const auto& [name, objects] : volumeFailureObjects_) {
    if (objects.contains(object)) {
      out.push_back(name);
    }
  }
}

} // namespace csiop::driverdeployment
