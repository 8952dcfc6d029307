#include "sections.hpp"

#include <csiop/api/defaults.hpp>
#include <csiop/api/formats.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/api/kubelet_mounts.hpp>

namespace csiop::api::validation {

Ports node(Validator& v, const DriverDeploymentSpec& spec) {
  const NodeSpec n = spec.node.value_or(NodeSpec{});
  const std::string p = "spec.node";
  if (n.kubeletDir) {
    const auto& d = *n.kubeletDir;
    if (d.empty() || d.front() != '/') {
      v.add(invalid(p + ".kubeletDir", d, "must be an absolute path"));
    } else if (d.find("/../") != std::string::npos || d.ends_with("/..") ||
               d.find_first_of(" \t\n:") != std::string::npos) {
      v.add(invalid(p + ".kubeletDir", d, "must not contain '..', ':' or whitespace"));
    }
  }
  nodePlugin(v, p, n, {.whenVolumesUnused = true});
  v.container(p + ".provisioner", n.provisioner);
  v.rbacRules(p + ".rbacRules", n.rbacRules);
  v.rbacRules(p + ".namespacedRbacRules", n.namespacedRbacRules);
  if (n.serviceAccount) {
    userMetadata(v, p + ".serviceAccount", n.serviceAccount->labels, n.serviceAccount->annotations);
  }
  v.object(p + ".podTemplatePatch", n.podTemplatePatch, "an object (a pod template patch)");
  v.podSettings(p, n.pod);

  const bool hostNetwork = n.hostNetwork.value_or(false);
  Ports reserved = nodeSidecarPorts(v, p, n, hostNetwork, p + ".hostNetwork");
  if (n.provisioner && n.provisioner->enabled.value_or(false)) {
    const NodeProvisioner& np = *n.provisioner;
    const std::string pp = p + ".provisioner";
    for (const auto& [field, value] :
         {std::pair{".baseDelay", np.baseDelay}, std::pair{".maxDelay", np.maxDelay}}) {
      if (value && !formats::goDuration(*value)) {
        v.add(invalid(pp + field, *value, "must be a Go duration such as \"20s\" or \"1m\""));
      }
    }
    if (np.httpEndpoint || np.httpPort) {
      reservePort(v, reserved, pp, np.httpEndpoint, "httpPort",
                  v.httpEndpoint(pp, np.httpEndpoint, np.httpPort, "httpPort",
                                 defaults::kProvisionerPort, true, hostNetwork,
                                 p + ".hostNetwork"));
    }
  }
  return reserved;
}

namespace {

// A driver mount at or above the kubelet's directory is taken only as the one that serves the
// operator's own mounts of its pods and plugins directories (kubelet_mounts.hpp).
void kubeletDirMounts(Validator& v, const DriverDeploymentSpec& spec,
                      const std::optional<DriverContainer>& override,
                      const std::string& kubeletDir) {
  const bool ownMounts = override && override->volumeMounts;
  const auto& mounts = ownMounts ? override->volumeMounts : spec.driver.volumeMounts;
  const auto& volumes = override && override->volumes ? override->volumes : spec.driver.volumes;
  if (!mounts || !mounts->is_array()) {
    return;
  }
  const std::string path =
      (ownMounts ? "spec.node.driver" : "spec.driver") + std::string(".volumeMounts");
  for (std::size_t i = 0; i < mounts->size(); ++i) {
    const Json& m = (*mounts)[i];
    if (kubeletMountOf(m, volumes.value_or(Json::array()), kubeletDir) != KubeletMount::Overlays) {
      continue;
    }
    const std::string at = stringField(m, "mountPath");
    v.add(invalid(idx(path, i) + ".mountPath", at,
                  "lies over the operator's Bidirectional mounts of " + kubeletDir + "/pods and " +
                      kubeletDir + "/plugins: mount a hostPath volume of " + at + " at " + at +
                      " with mountPropagation Bidirectional (the operator then leaves its own "
                      "two out), or a directory beside the kubelet's"));
  }
}

} // namespace

void nodeDriver(Validator& v, const DriverDeploymentSpec& spec, const Ports& reserved) {
  const NodeSpec n = spec.node.value_or(NodeSpec{});
  const std::string p = "spec.node";
  const std::string kubeletDir = kubeletDirOf(spec);
  const bool ownContext = n.driver && n.driver->securityContext;
  const auto& context = ownContext ? n.driver->securityContext : spec.driver.securityContext;
  if (context && context->is_object() && !isTrue(*context, "privileged")) {
    v.add(forbidden((ownContext ? p + ".driver" : std::string("spec.driver")) +
                        ".securityContext.privileged",
                    "the node plugin must be privileged: it mounts the kubelet's pods and "
                    "plugins directories with Bidirectional propagation"));
  }
  const auto volumes =
      driverInPod(v, spec, n.driver, p + ".driver", kNodeVolumes,
                  {"/csi", "/dev", kubeletDir + "/pods", kubeletDir + "/plugins"}, reserved);
  podContainers(v, p, n.pod, volumes, driverName(spec, n.driver));
  kubeletDirMounts(v, spec, n.driver, kubeletDir);
}

} // namespace csiop::api::validation
