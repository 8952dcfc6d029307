#include "node_layouts.hpp"

#include <algorithm>

#include <csiop/api/kubelet_mounts.hpp>

#include "containers.hpp"

namespace csiop::render {
namespace {

// `type` nullptr: none.
Json hostPath(const char* name, const std::string& path, const char* type) {
  Json source = Json{{"path", path}};
  if (type != nullptr) {
    source["type"] = type;
  }
  return Json{{"name", name}, {"hostPath", std::move(source)}};
}

Json mount(const char* volume, const std::string& path) {
  return Json{{"name", volume}, {"mountPath", path}};
}

Json bidirectionalMount(const char* volume, const std::string& path) {
  return Json{{"name", volume}, {"mountPath", path}, {"mountPropagation", "Bidirectional"}};
}

std::string pipe(const std::string& api) {
  return "\\\\.\\pipe\\csi-proxy-" + api;
}

// The driver mounts the kubelet's directory (or one above it) itself, as hostPath D at D,
// Bidirectional (kubelet_mounts.hpp): its pods and plugins directories are there already.
bool driverMountsTheKubeletDir(const Effective& effective) {
  const auto& d = effective.node.driver;
  return d.volumeMounts.is_array() &&
         std::any_of(d.volumeMounts.begin(), d.volumeMounts.end(), [&](const Json& m) {
           return api::kubeletMountOf(m, d.volumes, effective.node.kubeletDir) ==
                  api::KubeletMount::Covers;
         });
}

} // namespace

NodePluginLayout linuxNodeLayout(const Effective& effective) {
  const std::string& k = effective.node.kubeletDir;
  NodePluginLayout l;
  l.socket = linuxSocket();
  l.driverEndpoint = kSocketEndpoint;
  // Mounts with Bidirectional propagation need a privileged container.
  l.driverSecurityContext = Json{{"privileged", true}};
  const bool kubeletDirMounted = driverMountsTheKubeletDir(effective);
  l.driverMounts = Json::array({socketMount()});
  if (!kubeletDirMounted) {
    l.driverMounts.push_back(bidirectionalMount("mountpoint-dir", k + "/pods"));
    l.driverMounts.push_back(bidirectionalMount("plugins-dir", k + "/plugins"));
  }
  l.driverMounts.push_back(mount("dev-dir", "/dev"));
  l.registration = {"--kubelet-registration-path=" + k + "/plugins/" + effective.driverName +
                    "/csi.sock"};
  l.registrarMounts = Json::array({socketMount(), mount("registration-dir", "/registration")});
  // The volumes stay: init and extra containers may mount them by name.
  l.volumes = Json::array({
      hostPath("socket-dir", k + "/plugins/" + effective.driverName, "DirectoryOrCreate"),
      hostPath("registration-dir", k + "/plugins_registry", "Directory"),
      hostPath("mountpoint-dir", k + "/pods", "DirectoryOrCreate"),
      hostPath("plugins-dir", k + "/plugins", "Directory"),
      hostPath("dev-dir", "/dev", "Directory"),
  });
  return l;
}

NodePluginLayout windowsNodeLayout(const Effective& effective) {
  const auto& w = *effective.windowsNode;
  const std::string hostSocketDir = w.kubeletDir + "\\plugins\\" + effective.driverName;
  const std::string endpoint =
      "unix://" + (w.hostProcess ? hostSocketDir : std::string(kWindowsSocketDir)) + "\\csi.sock";
  NodePluginLayout l;
  l.socket = {endpoint, w.hostProcess ? Json() : mount("socket-dir", kWindowsSocketDir),
              w.hostProcess};
  l.driverEndpoint = endpoint;
  l.registration = {"--kubelet-registration-path=" + hostSocketDir + "\\csi.sock",
                    "--plugin-registration-path=" + (w.hostProcess
                                                         ? w.kubeletDir + "\\plugins_registry"
                                                         : std::string(kWindowsRegistrationDir))};
  // The socket directory exists before the driver starts (the kubelet creates it), in both
  // modes: a HostProcess pod mounts none of these, but the kubelet still sets them up.
  l.volumes = Json::array({hostPath("socket-dir", hostSocketDir, "DirectoryOrCreate")});
  if (w.hostProcess) {
    return l;
  }
  l.driverMounts =
      Json::array({mount("socket-dir", kWindowsSocketDir), mount("kubelet-dir", w.kubeletDir)});
  l.registrarMounts = Json::array(
      {mount("socket-dir", kWindowsSocketDir), mount("registration-dir", kWindowsRegistrationDir)});
  l.volumes.push_back(
      hostPath("registration-dir", w.kubeletDir + "\\plugins_registry", "Directory"));
  l.volumes.push_back(hostPath("kubelet-dir", w.kubeletDir, "Directory"));
  for (const auto& api : w.csiProxyPipes) {
    const std::string volume = "csi-proxy-" + api;
    l.driverMounts.push_back(mount(volume.c_str(), pipe(api)));
    l.volumes.push_back(hostPath(volume.c_str(), pipe(api), nullptr));
  }
  return l;
}

} // namespace csiop::render
