#include "sections.hpp"

#include <string_view>

#include <csiop/api/defaults.hpp>
#include <csiop/api/formats.hpp>
#include <csiop/api/json_access.hpp>

namespace csiop::api::validation {

const std::set<std::string> kWindowsNodeVolumes = {"socket-dir", "registration-dir", "kubelet-dir"};

namespace {

// Fields of a (Pod)SecurityContext that a pod for Windows may not set: the API server refuses
// them once spec.os.name is windows (Linux users, capabilities, SELinux, seccomp, ...).
const std::vector<const char*> kLinuxPodSecurity = {
    "seLinuxOptions",      "seccompProfile",
    "appArmorProfile",     "runAsUser",
    "runAsGroup",          "fsGroup",
    "fsGroupChangePolicy", "sysctls",
    "supplementalGroups",  "supplementalGroupsPolicy",
    "seLinuxChangePolicy"};
const std::vector<const char*> kLinuxContainerSecurity = {"seLinuxOptions",
                                                          "seccompProfile",
                                                          "appArmorProfile",
                                                          "runAsUser",
                                                          "runAsGroup",
                                                          "capabilities",
                                                          "privileged",
                                                          "readOnlyRootFilesystem",
                                                          "allowPrivilegeEscalation",
                                                          "procMount"};

void windowsSecurity(Validator& v, const std::string& path, const std::optional<Json>& context,
                     const std::vector<const char*>& linuxOnly) {
  if (!context || !context->is_object()) {
    return;
  }
  for (const char* field : linuxOnly) {
    if (context->contains(field)) {
      v.add(forbidden(path + "." + field, "is not supported in a pod for Windows nodes"));
    }
  }
}

// The pipe's volume, csi-proxy-<name>, is a DNS label: at most 63 characters.
constexpr std::size_t kMaxCsiProxyApiLength = 63 - std::string_view("csi-proxy-").size();

template <class Settings>
void sidecarSecurity(Validator& v, const std::string& path, const std::optional<Settings>& s) {
  if (s) {
    windowsSecurity(v, path + ".securityContext", s->container.securityContext,
                    kLinuxContainerSecurity);
  }
}

} // namespace

void windowsNode(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.windowsNode || !spec.windowsNode->enabled.value_or(true)) {
    return;
  }
  const WindowsNodeSpec& w = *spec.windowsNode;
  const std::string p = "spec.windowsNode";
  const bool hostProcess = w.hostProcess.value_or(false);
  if (w.kubeletDir && !formats::windowsAbsolutePath(*w.kubeletDir)) {
    v.add(invalid(p + ".kubeletDir", *w.kubeletDir,
                  "must be an absolute Windows path such as C:\\var\\lib\\kubelet, without '..'"));
  }
  if (w.csiProxyPipes) {
    if (hostProcess) {
      v.add(forbidden(p + ".csiProxyPipes",
                      "a HostProcess driver reaches the host directly, not through csi-proxy"));
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < w.csiProxyPipes->size(); ++i) {
      const std::string& name = (*w.csiProxyPipes)[i];
      if (!formats::csiProxyApi(name)) {
        v.add(invalid(idx(p + ".csiProxyPipes", i), name,
                      "must be a csi-proxy API group and version such as \"filesystem-v1\" or "
                      "\"smb-v1\" (the pipe \\\\.\\pipe\\csi-proxy-<name>)"));
      } else if (name.size() > kMaxCsiProxyApiLength) {
        v.add(tooLong(idx(p + ".csiProxyPipes", i), name, kMaxCsiProxyApiLength));
      } else if (!seen.insert(name).second) {
        v.add(duplicate(idx(p + ".csiProxyPipes", i), name));
      }
    }
  }
  nodePlugin(v, p, w, {.os = "windows"});
  v.object(p + ".podTemplatePatch", w.podTemplatePatch, "an object (a pod template patch)");
  v.podSettings(p, w.pod);
  if (w.pod.hostPID.value_or(false)) {
    v.add(forbidden(p + ".hostPID", "Windows pods cannot share the host's process namespace"));
  }
  windowsSecurity(v, p + ".securityContext", w.pod.securityContext, kLinuxPodSecurity);
  sidecarSecurity(v, p + ".registrar", w.registrar);
  sidecarSecurity(v, p + ".livenessProbe", w.livenessProbe);
  if (w.driver) {
    windowsSecurity(v, p + ".driver.securityContext", w.driver->securityContext,
                    kLinuxContainerSecurity);
  }

  // A HostProcess pod is on the host's network: loopback endpoints are reachable there.
  const Ports reserved = nodeSidecarPorts(v, p, w, hostProcess, p + ".hostProcess");

  // The driver container: spec.driver without what belongs to the Linux pod (see
  // windowsDriverBase), then spec.windowsNode.driver.
  DriverDeploymentSpec base = spec;
  base.driver = windowsDriverBase(spec.driver);
  std::set<std::string> volumes = kWindowsNodeVolumes;
  for (const auto& pipe : w.csiProxyPipes.value_or(std::vector<std::string>{})) {
    volumes.insert("csi-proxy-" + pipe);
  }
  const std::string kubeletDir = w.kubeletDir.value_or(defaults::kWindowsKubeletDir);
  const auto podVolumes =
      driverInPod(v, base, w.driver, p + ".driver", volumes, {"C:\\csi", kubeletDir}, reserved);
  podContainers(v, p, w.pod, podVolumes, driverName(spec, w.driver));
}

} // namespace csiop::api::validation
