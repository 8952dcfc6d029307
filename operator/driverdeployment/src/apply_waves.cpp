#include <csiop/driverdeployment/apply_waves.hpp>

namespace csiop::driverdeployment {

bool isIdentity(const std::string& kind) {
  return kind == "ServiceAccount" || kind == "Role" || kind == "ClusterRole";
}

int applyWave(const std::string& kind, bool identitiesExist) {
  if (identitiesExist) {
    return 0;
  }
  return kind == "ClusterRoleBinding" || kind == "RoleBinding" || isWorkload(kind) ? 1 : 0;
}

bool isWorkload(const std::string& kind) {
  return kind == "DaemonSet" || kind == "Deployment" || kind == "StatefulSet";
}

} // namespace csiop::driverdeployment
