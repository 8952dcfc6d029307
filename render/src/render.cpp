#include <csiop/render/render.hpp>

#include <csiop/api/defaults.hpp>
#include <csiop/api/json_access.hpp>

#include "companions.hpp"
#include "rbac.hpp"
#include "storage.hpp"
#include "workloads.hpp"

namespace csiop::render {

std::vector<Json> render(const api::DriverDeployment& object, const ClusterFacts& facts) {
  const api::Effective effective = api::resolve(object);
  std::vector<Json> out = renderNamespace(effective);
  out.push_back(renderCSIDriver(effective, facts.csiDriverV1));
  for (auto& o : renderServiceAccounts(effective)) {
    out.push_back(std::move(o));
  }
  const auto append = [&out](std::vector<Json> objects) {
    out.insert(out.end(), std::make_move_iterator(objects.begin()),
               std::make_move_iterator(objects.end()));
  };
  append(renderRbac(effective));
  append(renderAggregatedClusterRoles(effective));
  append(renderConfigMaps(effective));
  out.push_back(renderNodePlugin(effective));
  if (effective.windowsNode) {
    out.push_back(renderWindowsNodeDaemonSet(effective));
  }
  if (effective.hasControllerWorkload()) {
    out.push_back(renderControllerWorkload(effective));
  }
  if (auto pdb = renderPodDisruptionBudget(effective)) {
    out.push_back(std::move(*pdb));
  }
  append(renderServices(effective));
  append(renderStorageClasses(effective));
  append(renderVolumeSnapshotClasses(effective));
  append(renderObjects(effective));
  return out;
}

bool isNodePlugin(const Json& workload) {
  const std::string c = api::stringField(api::member(api::member(workload, "metadata"), "labels"),
                                         "app.kubernetes.io/component");
  return c == component::kNode || c == component::kWindowsNode;
}

} // namespace csiop::render
