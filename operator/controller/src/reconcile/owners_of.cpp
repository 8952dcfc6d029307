// Which DriverDeployments a change of a cached object concerns (the manager queues them).
#include <csiop/controller/reconciler.hpp>

#include <set>

#include <csiop/api/json_access.hpp>
#include <csiop/controller/caches.hpp>
#include <csiop/render/render.hpp>

namespace csiop::controller {
using api::Json;
using api::metadataField;
using api::stringField;

std::vector<std::string> Reconciler::ownersOf(const Json& object) {
  const std::string kind = object.value("kind", std::string());
  if (kind == "DriverDeployment") {
    return {metadataField(object, "name")};
  }
  const std::string owner = ownerLabelOf(object);
  if (!owner.empty() && kind != "CSIDriver" && kind != "Pod") {
    return {owner};
  }
  // A CSIDriver (ours or foreign) or a CSINode concerns the DriverDeployments of its driver(s);
  // a volume of a driver, only those being deleted (their deletion may wait for it).
  std::set<std::string> drivers;
  bool deletingOnly = false;
  std::vector<std::string> out;
  if (!owner.empty()) {
    out.push_back(owner); // a workload's pod (it may have volumes too)
  }
  // A Node, or a pod with volumes, concerns the node plugin rollouts waiting on that node.
  if (kind == "Node" || (kind == "Pod" && usesVolumes(object))) {
    const std::string node = kind == "Node"
                                 ? metadataField(object, "name")
                                 : stringField(object.value("spec", Json::object()), "nodeName");
    for (const auto& [dd, nodes] : waitingNodes_) {
      if (nodes.contains(node)) {
        out.push_back(dd);
      }
    }
  }
  if (const auto used = driversUsedBy(object); !used.empty()) {
    drivers.insert(used.begin(), used.end());
    deletingOnly = true;
  } else if (kind == "CSIDriver") {
    drivers.insert(metadataField(object, "name"));
  } else if (kind == "CSINode") {
    for (const auto& d : object.value("spec", Json::object()).value("drivers", Json::array())) {
      drivers.insert(stringField(d, "name"));
    }
  }
  for (const std::string& driver : drivers) {
    for (const Json* dd : caches_.driverDeploymentsOf(driver)) {
      if (!deletingOnly || (*dd)["metadata"].contains("deletionTimestamp")) {
        out.push_back(metadataField(*dd, "name"));
      }
    }
  }
  return out;
}

} // namespace csiop::controller
