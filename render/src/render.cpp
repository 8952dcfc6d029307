#include <csiop/render/render.hpp>

#include <csiop/api/defaults.hpp>

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
  for (auto& o : renderRbac(e)) {
    out.push_back(std::move(o));
  }
  out.push_back(renderNodeDaemonSet(e));
  if (e.hasControllerWorkload()) {
    out.push_back(renderControllerWorkload(e));
  }
  for (auto& o : renderStorageClasses(e)) {
    out.push_back(std::move(o));
  }
  return out;
}

} // namespace csiop::render
