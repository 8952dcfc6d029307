#include "containers.hpp"

#include <csiop/api/json_access.hpp>

namespace csiop::render {
namespace {

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

Json fieldRef(const char* name, const char* path) {
  return Json{{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", path}}}}}};
}

Json httpProbe(const char* path, const char* port, int initialDelay, int timeout, int period,
               int failures) {
  return Json{{"httpGet", {{"path", path}, {"port", port}}},
              {"initialDelaySeconds", initialDelay},
              {"timeoutSeconds", timeout},
              {"periodSeconds", period},
              {"failureThreshold", failures}};
}

const char* portName(api::Component c) {
  switch (c) {
  case api::Component::Provisioner:
    return "provisioner";
  case api::Component::Attacher:
    return "attacher";
  case api::Component::Resizer:
    return "resizer";
  case api::Component::Snapshotter:
    return "snapshotter";
  case api::Component::HealthMonitor:
    return "health-monitor";
  default:
    return "http";
  }
}

} // namespace

Json sidecarSecurityContext(const api::EffectiveDriver& driver, bool nodePlugin) {
  // A node plugin's driver without a securityContext of its own runs privileged.
  const bool privileged = nodePlugin ? driver.securityContext.is_null() ||
                                           api::isTrue(driver.securityContext, "privileged")
                                     : api::isTrue(driver.securityContext, "privileged");
  if (privileged) {
    return Json{{"privileged", true}};
  }
  return Json{{"allowPrivilegeEscalation", false}, {"readOnlyRootFilesystem", true}};
}

int capacityOwnerLevel(const Effective& e) {
  return e.hasControllerWorkload() && e.controller->kind == "Deployment" ? 2 : 1;
}

Json socketMount() {
  return Json{{"name", "socket-dir"}, {"mountPath", kSocketDir}};
}

Json driverContainer(const Effective& e, const api::EffectiveDriver& d,
                     const api::EffectiveProbe& probe, bool nodePlugin) {
  Json c = Json::object();
  c["name"] = kDriverContainer;
  c["image"] = d.image;
  c["imagePullPolicy"] = d.imagePullPolicy;
  if (d.command) {
    c["command"] = *d.command;
  }
  if (!d.args.empty()) {
    c["args"] = d.args;
  }
  Json env =
      Json::array({Json{{"name", "CSI_ENDPOINT"}, {"value", std::string("unix://") + kSocketPath}},
                   fieldRef("KUBE_NODE_NAME", "spec.nodeName")});
  for (const auto& v : d.env) {
    env.push_back(v);
  }
  c["env"] = std::move(env);
  Json ports = Json::array();
  if (probe.enabled) {
    ports.push_back(Json{{"name", "healthz"}, {"containerPort", probe.port}, {"protocol", "TCP"}});
  }
  for (const auto& p : d.ports) {
    ports.push_back(p);
  }
  if (!ports.empty()) {
    c["ports"] = std::move(ports);
  }
  if (probe.enabled) {
    c["livenessProbe"] = httpProbe("/healthz", "healthz", 10, 3, 10, 5);
  }
  if (!d.securityContext.is_null()) {
    c["securityContext"] = d.securityContext;
  } else if (nodePlugin) {
    // Mounts with Bidirectional propagation need a privileged container.
    c["securityContext"] = Json{{"privileged", true}};
  }
  setResources(c, d.resources);
  Json mounts = Json::array({socketMount()});
  if (nodePlugin) {
    const std::string& k = e.node.kubeletDir;
    mounts.push_back(Json{{"name", "mountpoint-dir"},
                          {"mountPath", k + "/pods"},
                          {"mountPropagation", "Bidirectional"}});
    mounts.push_back(Json{{"name", "plugins-dir"},
                          {"mountPath", k + "/plugins"},
                          {"mountPropagation", "Bidirectional"}});
    mounts.push_back(Json{{"name", "dev-dir"}, {"mountPath", "/dev"}});
  }
  for (const auto& m : d.volumeMounts) {
    mounts.push_back(m);
  }
  c["volumeMounts"] = std::move(mounts);
  return c;
}

Json registrarContainer(const Effective& e) {
  const auto& n = e.node;
  Json c = Json::object();
  c["name"] = "node-driver-registrar";
  c["image"] = n.registrar.image;
  c["imagePullPolicy"] = n.registrar.imagePullPolicy;
  c["args"] = argsOf(
      {std::string("--csi-address=") + kSocketPath,
       "--kubelet-registration-path=" + n.kubeletDir + "/plugins/" + e.driverName + "/csi.sock",
       "--http-endpoint=:" + std::to_string(n.registrarPort)},
      n.registrar.extraArgs);
  c["ports"] = Json::array(
      {Json{{"name", "registrar"}, {"containerPort", n.registrarPort}, {"protocol", "TCP"}}});
  c["livenessProbe"] = httpProbe("/healthz", "registrar", 5, 5, 10, 3);
  // The node driver is always privileged; see sidecarSecurityContext.
  c["securityContext"] = Json{{"privileged", true}};
  setResources(c, n.registrar.resources);
  c["volumeMounts"] = Json::array(
      {socketMount(), Json{{"name", "registration-dir"}, {"mountPath", "/registration"}}});
  return c;
}

Json livenessContainer(const api::EffectiveProbe& probe, const Json& securityContext) {
  Json c = Json::object();
  c["name"] = "liveness-probe";
  c["image"] = probe.container.image;
  c["imagePullPolicy"] = probe.container.imagePullPolicy;
  c["args"] = argsOf(
      {std::string("--csi-address=") + kSocketPath, "--health-port=" + std::to_string(probe.port)},
      probe.container.extraArgs);
  c["securityContext"] = securityContext;
  setResources(c, probe.container.resources);
  c["volumeMounts"] = Json::array({socketMount()});
  return c;
}

Json sidecarContainer(const Effective& e, const api::EffectiveSidecar& s,
                      const Json& securityContext) {
  Json c = Json::object();
  c["name"] = s.name;
  c["image"] = s.container.image;
  c["imagePullPolicy"] = s.container.imagePullPolicy;
  Json args = Json::array({std::string("--csi-address=") + kSocketPath,
                           "--http-endpoint=:" + std::to_string(s.httpPort)});
  const auto& le = s.leaderElection;
  if (le.enabled) {
    args.push_back("--leader-election");
    if (le.leaseDuration) {
      args.push_back("--leader-election-lease-duration=" + *le.leaseDuration);
    }
    if (le.renewDeadline) {
      args.push_back("--leader-election-renew-deadline=" + *le.renewDeadline);
    }
    if (le.retryPeriod) {
      args.push_back("--leader-election-retry-period=" + *le.retryPeriod);
    }
  }
  const bool capacity = s.component == api::Component::Provisioner && e.csiDriver.storageCapacity;
  if (capacity) {
    // The CSIStorageCapacity objects are owned by the sidecar's workload: pod ->
    // StatefulSet or DaemonSet is one level, pod -> ReplicaSet -> Deployment two.
    args.push_back("--enable-capacity");
    args.push_back("--capacity-ownerref-level=" + std::to_string(capacityOwnerLevel(e)));
  }
  for (const auto& a : s.container.extraArgs) {
    args.push_back(a);
  }
  c["args"] = std::move(args);
  if (capacity) {
    c["env"] = Json::array(
        {fieldRef("NAMESPACE", "metadata.namespace"), fieldRef("POD_NAME", "metadata.name")});
  }
  const char* port = portName(s.component);
  c["ports"] =
      Json::array({Json{{"name", port}, {"containerPort", s.httpPort}, {"protocol", "TCP"}}});
  if (le.enabled) {
    // Restart a sidecar whose leader election is stuck (upstream's recommendation).
    c["livenessProbe"] = httpProbe("/healthz/leader-election", port, 10, 10, 20, 1);
  }
  c["securityContext"] = securityContext;
  setResources(c, s.container.resources);
  c["volumeMounts"] = Json::array({socketMount()});
  return c;
}

} // namespace csiop::render
