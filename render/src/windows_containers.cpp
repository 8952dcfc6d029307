#include "windows_containers.hpp"

#include "container_parts.hpp"
#include "containers.hpp"

namespace csiop::render {
namespace {

const api::EffectiveWindowsNode& node(const Effective& e) {
  return *e.windowsNode;
}

std::string hostSocketDir(const Effective& e) {
  return node(e).kubeletDir + "\\plugins\\" + e.driverName;
}

std::string endpoint(const Effective& e) {
  return "unix://" + windowsSocketDir(e) + "\\csi.sock";
}

Json mount(const char* volume, const std::string& path) {
  return Json{{"name", volume}, {"mountPath", path}};
}

std::string pipe(const std::string& api) {
  return "\\\\.\\pipe\\csi-proxy-" + api;
}

// A HostProcess container starts its command on the host, where the image's entrypoint path
// means nothing: the binary is named (it is on the PATH of the container's sandbox).
Json head(const Effective& e, const char* name, const api::EffectiveContainer& settings,
          const char* hostProcessBinary) {
  Json c = sidecarBase(name, settings);
  if (node(e).hostProcess && !settings.command) {
    c["command"] = Json::array({hostProcessBinary});
  }
  return c;
}

} // namespace

std::string windowsSocketDir(const Effective& e) {
  return node(e).hostProcess ? hostSocketDir(e) : std::string(kWindowsSocketDir);
}

Json windowsDriverContainer(const Effective& e) {
  const auto& w = node(e);
  const api::EffectiveDriver& d = w.driver;
  Json c = driverContainerBase(d, w.livenessProbe, endpoint(e));
  if (!d.securityContext.is_null()) {
    c["securityContext"] = d.securityContext;
  }
  setResources(c, d.resources);
  Json mounts = Json::array();
  if (!w.hostProcess) {
    mounts.push_back(mount("socket-dir", kWindowsSocketDir));
    mounts.push_back(mount("kubelet-dir", w.kubeletDir));
    for (const auto& api : w.csiProxyPipes) {
      mounts.push_back(mount(("csi-proxy-" + api).c_str(), pipe(api)));
    }
  }
  for (const auto& m : d.volumeMounts) {
    mounts.push_back(m);
  }
  if (!mounts.empty()) {
    c["volumeMounts"] = std::move(mounts);
  }
  return c;
}

Json windowsRegistrarContainer(const Effective& e) {
  const auto& w = node(e);
  Json c = head(e, "node-driver-registrar", w.registrar, "csi-node-driver-registrar.exe");
  Json args = Json::array(
      {"--csi-address=" + endpoint(e),
       "--kubelet-registration-path=" + hostSocketDir(e) + "\\csi.sock",
       "--plugin-registration-path=" + (w.hostProcess ? w.kubeletDir + "\\plugins_registry"
                                                      : std::string(kWindowsRegistrationDir))});
  if (w.registrarHttp.enabled) {
    args.push_back("--http-endpoint=" + w.registrarHttp.flag());
  }
  for (const auto& a : w.registrar.extraArgs) {
    args.push_back(a);
  }
  c["args"] = std::move(args);
  setEnv(c, w.registrar, Json::array());
  if (w.registrarHttp.enabled) {
    c["ports"] = Json::array({tcpPort("registrar", w.registrarHttp.port)});
    if (w.registrarProbe.enabled) {
      c["livenessProbe"] = sidecarProbe("/healthz", w.registrarHttp, "registrar", w.registrarProbe);
    }
  }
  setSecurityAndResources(c, w.registrar);
  if (!w.hostProcess) {
    c["volumeMounts"] = Json::array({mount("socket-dir", kWindowsSocketDir),
                                     mount("registration-dir", kWindowsRegistrationDir)});
  }
  return c;
}

Json windowsLivenessContainer(const Effective& e) {
  const auto& w = node(e);
  const api::EffectiveProbe& probe = w.livenessProbe;
  Json c = head(e, "liveness-probe", probe.container, "livenessprobe.exe");
  c["args"] = argsOf({"--csi-address=" + endpoint(e), "--http-endpoint=" + probe.http.flag()},
                     probe.container.extraArgs);
  setEnv(c, probe.container, Json::array());
  setSecurityAndResources(c, probe.container);
  if (!w.hostProcess) {
    c["volumeMounts"] = Json::array({mount("socket-dir", kWindowsSocketDir)});
  }
  return c;
}

Json windowsNodeVolumes(const Effective& e) {
  const auto& w = node(e);
  const auto hostPath = [](const char* name, const std::string& path, const char* type) {
    Json source = Json{{"path", path}};
    if (type != nullptr) {
      source["type"] = type;
    }
    return Json{{"name", name}, {"hostPath", std::move(source)}};
  };
  // The socket directory exists before the driver starts (the kubelet creates it), in both
  // modes: a HostProcess pod mounts none of these, but the kubelet still sets them up.
  Json volumes = Json::array({hostPath("socket-dir", hostSocketDir(e), "DirectoryOrCreate")});
  if (!w.hostProcess) {
    volumes.push_back(
        hostPath("registration-dir", w.kubeletDir + "\\plugins_registry", "Directory"));
    volumes.push_back(hostPath("kubelet-dir", w.kubeletDir, "Directory"));
    for (const auto& api : w.csiProxyPipes) {
      volumes.push_back(hostPath(("csi-proxy-" + api).c_str(), pipe(api), nullptr));
    }
  }
  for (const auto& v : w.driver.volumes) {
    volumes.push_back(v);
  }
  return volumes;
}

} // namespace csiop::render
