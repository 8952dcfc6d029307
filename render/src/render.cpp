#include <csiop/render/render.hpp>

#include <csiop/api/defaults.hpp>

#include "companions.hpp"
#include "rbac.hpp"
#include "storage.hpp"
#include "workloads.hpp"

namespace csiop::render {

std::vector<Json> render(const api::DriverDeployment& object, const ClusterFacts& facts) {
  const api::Effective e = api::resolve(object);
  std::vector<Json> out = renderNamespace(e);
  out.push_back(renderCSIDriver(e, facts.csiDriverV1));
  for (auto& o : renderServiceAccounts(e)) {
    out.push_back(std::move(o));
  }
  const auto append = [&out](std::vector<Json> objects) {
    out.insert(out.end(), std::make_move_iterator(objects.begin()),
               std::make_move_iterator(objects.end()));
  };
  append(renderRbac(e));
  append(renderAggregatedClusterRoles(e));
  append(renderConfigMaps(e));
  out.push_back(renderNodeDaemonSet(e));
  if (e.windowsNode) {
    out.push_back(renderWindowsNodeDaemonSet(e));
  }
  if (e.hasControllerWorkload()) {
    out.push_back(renderControllerWorkload(e));
  }
  if (auto pdb = renderPodDisruptionBudget(e)) {
    out.push_back(std::move(*pdb));
  }
  append(renderServices(e));
  append(renderStorageClasses(e));
  append(renderVolumeSnapshotClasses(e));
  append(renderObjects(e));
  return out;
}

} // namespace csiop::render
