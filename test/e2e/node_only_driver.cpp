#include "node_only_driver.hpp"

namespace csiop::e2e {

std::string nodeOnlyDriverManifest(const NodeOnlyDriver& d) {
  const std::string arg = d.firstArg.empty() ? "--drivername=" + d.driverName : d.firstArg;
  return "apiVersion: csiop.dev/v1alpha1\nkind: DriverDeployment\nmetadata:\n  name: " + d.name +
         "\nspec:\n  driverName: " + d.driverName + "\n  namespace: " + d.namespace_ + R"(
  csiDriver:
    attachRequired: false
    podInfoOnMount: true
    volumeLifecycleModes: [Ephemeral]
  driver:
    image: )" +
         d.image + "\n    imagePullPolicy: " + d.pullPolicy + "\n    args:\n    - " + arg + R"(
    - --endpoint=$(CSI_ENDPOINT)
    - --nodeid=$(KUBE_NODE_NAME)
    securityContext:
      privileged: true
    volumes:
    - name: csi-data-dir
      hostPath:
        path: )" +
         d.stateDir +
         R"(
        type: DirectoryOrCreate
    volumeMounts:
    - name: csi-data-dir
      mountPath: /csi-data-dir
      readOnly: )" +
         (d.readOnlyState ? "true" : "false") + "\n  rollout:\n" + d.rollout;
}

} // namespace csiop::e2e
