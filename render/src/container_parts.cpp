#include "container_parts.hpp"

namespace csiop::render {

Json argsOf(std::initializer_list<std::string> generated, const std::vector<std::string>& extra) {
  Json out = Json::array();
  for (const auto& a : generated) {
    out.push_back(a);
  }
  for (const auto& a : extra) {
    out.push_back(a);
  }
  return out;
}

void setResources(Json& c, const Json& resources) {
  if (!resources.is_null()) {
    c["resources"] = resources;
  }
}

Json containerHead(const char* name, const std::string& image, const std::string& pullPolicy,
                   const std::optional<std::vector<std::string>>& command) {
  Json c = Json::object();
  c["name"] = name;
  c["image"] = image;
  c["imagePullPolicy"] = pullPolicy;
  if (command) {
    c["command"] = *command;
  }
  return c;
}

Json sidecarBase(const char* name, const api::EffectiveContainer& settings) {
  return containerHead(name, settings.image, settings.imagePullPolicy, settings.command);
}

Json sidecarHead(const char* name, const api::EffectiveContainer& settings,
                 const SocketAccess& socket, const char* hostProcessBinary) {
  Json c = sidecarBase(name, settings);
  if (socket.hostProcess && !settings.command) {
    c["command"] = Json::array({hostProcessBinary});
  }
  return c;
}

void setEnv(Json& c, const api::EffectiveContainer& settings, Json env) {
  for (const auto& v : settings.env) {
    env.push_back(v);
  }
  if (!env.empty()) {
    c["env"] = std::move(env);
  }
}

void setSecurityAndResources(Json& c, const api::EffectiveContainer& settings) {
  if (!settings.lifecycle.is_null()) {
    c["lifecycle"] = settings.lifecycle;
  }
  if (!settings.securityContext.is_null()) {
    c["securityContext"] = settings.securityContext;
  }
  setResources(c, settings.resources);
}

Json fieldRef(const char* name, const char* path) {
  return Json{{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", path}}}}}};
}

Json httpProbe(const char* path, const api::HttpEndpoint& endpoint, const char* port,
               int initialDelay, int timeout, int period, int failures) {
  Json get = Json{{"path", path}, {"port", port}};
  if (endpoint.loopback()) {
    std::string host = endpoint.host;
    if (host.starts_with('[')) {
      host = host.substr(1, host.size() - 2);
    }
    get["host"] = host;
  }
  return Json{{"httpGet", std::move(get)},
              {"initialDelaySeconds", initialDelay},
              {"timeoutSeconds", timeout},
              {"periodSeconds", period},
              {"failureThreshold", failures}};
}

Json tcpPort(const char* name, std::int32_t port) {
  return Json{{"name", name}, {"containerPort", port}, {"protocol", "TCP"}};
}

Json driverContainerBase(const api::EffectiveDriver& d, const api::EffectiveProbe& probe,
                         const std::string& endpoint) {
  Json c = containerHead(d.name.c_str(), d.image, d.imagePullPolicy, d.command);
  if (!d.args.empty()) {
    c["args"] = d.args;
  }
  Json env = Json::array({Json{{"name", "CSI_ENDPOINT"}, {"value", endpoint}},
                          fieldRef("KUBE_NODE_NAME", "spec.nodeName")});
  for (const auto& v : d.env) {
    env.push_back(v);
  }
  c["env"] = std::move(env);
  Json ports = Json::array();
  if (probe.enabled) {
    ports.push_back(tcpPort("healthz", probe.http.port));
  }
  for (const auto& p : d.ports) {
    ports.push_back(p);
  }
  if (!ports.empty()) {
    c["ports"] = std::move(ports);
  }
  if (probe.enabled) {
    c["livenessProbe"] =
        httpProbe("/healthz", probe.http, "healthz", probe.initialDelaySeconds,
                  probe.timeoutSeconds, probe.periodSeconds, probe.failureThreshold);
  }
  for (const auto& [field, value] :
       {std::pair{"readinessProbe", &d.readinessProbe}, std::pair{"startupProbe", &d.startupProbe},
        std::pair{"lifecycle", &d.lifecycle}}) {
    if (!value->is_null()) {
      c[field] = *value;
    }
  }
  return c;
}

Json driverContainer(const api::EffectiveDriver& d, const api::EffectiveProbe& probe,
                     const std::string& endpoint, const Json& fallbackSecurity, Json mounts) {
  Json c = driverContainerBase(d, probe, endpoint);
  if (!d.securityContext.is_null()) {
    c["securityContext"] = d.securityContext;
  } else if (!fallbackSecurity.is_null()) {
    c["securityContext"] = fallbackSecurity;
  }
  setResources(c, d.resources);
  for (const auto& m : d.volumeMounts) {
    mounts.push_back(m);
  }
  if (!mounts.empty()) {
    c["volumeMounts"] = std::move(mounts);
  }
  return c;
}

Json sidecarProbe(const char* path, const api::HttpEndpoint& endpoint, const char* port,
                  const api::EffectiveSidecarProbe& timings) {
  return httpProbe(path, endpoint, port, timings.initialDelaySeconds, timings.timeoutSeconds,
                   timings.periodSeconds, timings.failureThreshold);
}

} // namespace csiop::render
