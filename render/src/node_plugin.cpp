#include "node_plugin.hpp"

#include "containers.hpp"

namespace csiop::render {
namespace {

Json registrarContainer(const api::EffectiveNodePlugin& n, const NodePluginLayout& layout) {
  Json c = sidecarHead("node-driver-registrar", n.registrar, layout.socket,
                       "csi-node-driver-registrar.exe");
  Json args = Json::array({"--csi-address=" + layout.socket.address});
  for (const auto& a : layout.registration) {
    args.push_back(a);
  }
  if (n.registrarHttp.enabled) {
    args.push_back("--http-endpoint=" + n.registrarHttp.flag());
  }
  for (const auto& a : n.registrar.extraArgs) {
    args.push_back(a);
  }
  c["args"] = std::move(args);
  setEnv(c, n.registrar, Json::array());
  if (n.registrarHttp.enabled) {
    c["ports"] = Json::array({tcpPort("registrar", n.registrarHttp.port)});
    if (n.registrarProbe.enabled) {
      c["livenessProbe"] = sidecarProbe("/healthz", n.registrarHttp, "registrar", n.registrarProbe);
    }
  }
  setSecurityAndResources(c, n.registrar);
  if (!layout.registrarMounts.is_null()) {
    c["volumeMounts"] = layout.registrarMounts;
  }
  return c;
}

} // namespace

Json nodePluginContainers(const api::EffectiveNodePlugin& n, const NodePluginLayout& layout) {
  Json out = Json::array({driverContainer(n.driver, n.livenessProbe, layout.driverEndpoint,
                                          layout.driverSecurityContext, layout.driverMounts),
                          registrarContainer(n, layout)});
  if (n.livenessProbe.enabled) {
    out.push_back(livenessContainer(n.livenessProbe, layout.socket));
  }
  return out;
}

Json nodePluginVolumes(const api::EffectiveNodePlugin& n, const NodePluginLayout& layout) {
  Json volumes = layout.volumes;
  for (const auto& v : n.driver.volumes) {
    volumes.push_back(v);
  }
  return volumes;
}

} // namespace csiop::render
