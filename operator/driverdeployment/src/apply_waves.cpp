#include <csiop/driverdeployment/apply_waves.hpp>

namespace csiop::driverdeployment {

int applyWave(const std::string& kind, bool serviceAccountsExist) {
  if (kind == "ClusterRoleBinding" || kind == "RoleBinding") {
    return 1;
  }
  return isWorkload(kind) && !serviceAccountsExist ? 1 : 0;
}

bool isWorkload(const std::string& kind) {
  return kind == "DaemonSet" || kind == "Deployment" || kind == "StatefulSet";
}

} // namespace csiop::driverdeployment
