#include "containers.hpp"

#include <optional>
#include <string>
#include <vector>

#include <csiop/api/json_access.hpp>

namespace csiop::render {
namespace {

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

int capacityOwnerLevel(const Effective& effective) {
  return effective.hasControllerWorkload() && effective.controller->kind == "Deployment" ? 2 : 1;
}

Json socketMount() {
  return Json{{"name", "socket-dir"}, {"mountPath", kSocketDir}};
}

SocketAccess linuxSocket() {
  return SocketAccess{kSocketPath, socketMount(), false};
}

Json livenessContainer(const api::EffectiveProbe& probe, const SocketAccess& socket) {
  Json c = sidecarHead("liveness-probe", probe.container, socket, "livenessprobe.exe");
  // --http-endpoint, not the deprecated --health-port (which binds every interface and,
  // given beside --http-endpoint, makes livenessprobe exit).
  c["args"] = argsOf({"--csi-address=" + socket.address, "--http-endpoint=" + probe.http.flag()},
                     probe.container.extraArgs);
  setEnv(c, probe.container, Json::array());
  setSecurityAndResources(c, probe.container);
  if (!socket.mount.is_null()) {
    c["volumeMounts"] = Json::array({socket.mount});
  }
  return c;
}

Json sidecarContainer(const Effective& effective, const api::EffectiveSidecar& s) {
  Json c = sidecarBase(s.name, s.container);
  Json args = Json::array({std::string("--csi-address=") + kSocketPath});
  if (s.http.enabled) {
    args.push_back("--http-endpoint=" + s.http.flag());
  }
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
  const bool capacity =
      s.component == api::Component::Provisioner && effective.csiDriver.storageCapacity;
  if (capacity) {
    // The CSIStorageCapacity objects are owned by the sidecar's workload: pod ->
    // StatefulSet or DaemonSet is one level, pod -> ReplicaSet -> Deployment two.
    args.push_back("--enable-capacity");
    args.push_back("--capacity-ownerref-level=" + std::to_string(capacityOwnerLevel(effective)));
  }
  for (const auto& a : s.container.extraArgs) {
    args.push_back(a);
  }
  c["args"] = std::move(args);
  setEnv(c, s.container,
         capacity ? Json::array({fieldRef("NAMESPACE", "metadata.namespace"),
                                 fieldRef("POD_NAME", "metadata.name")})
                  : Json::array());
  const char* port = portName(s.component);
  if (s.http.enabled) {
    c["ports"] = Json::array({tcpPort(port, s.http.port)});
    if (le.enabled && s.probe.enabled) {
      c["livenessProbe"] = sidecarProbe("/healthz/leader-election", s.http, port, s.probe);
    }
  }
  setSecurityAndResources(c, s.container);
  c["volumeMounts"] = Json::array({socketMount()});
  return c;
}

Json nodeProvisionerContainer(const Effective& effective, const api::EffectiveNodeProvisioner& p) {
  Json c = sidecarBase("csi-provisioner", p.container);
  // Each node is its own topology segment: only the selected node's topology goes into
  // CreateVolume, and none for immediate binding (upstream's advice for node deployments).
  Json args = Json::array({std::string("--csi-address=") + kSocketPath, "--node-deployment=true",
                           "--strict-topology=true", "--immediate-topology=false"});
  if (p.http.enabled) {
    args.push_back("--http-endpoint=" + p.http.flag());
  }
  if (!p.immediateBinding) {
    args.push_back("--node-deployment-immediate-binding=false");
  }
  if (p.baseDelay) {
    args.push_back("--node-deployment-base-delay=" + *p.baseDelay);
  }
  if (p.maxDelay) {
    args.push_back("--node-deployment-max-delay=" + *p.maxDelay);
  }
  const bool capacity = effective.csiDriver.storageCapacity;
  if (capacity) {
    // The node plugin DaemonSet owns each node's CSIStorageCapacity objects (pod -> DaemonSet).
    args.push_back("--enable-capacity");
    args.push_back("--capacity-ownerref-level=1");
  }
  for (const auto& a : p.container.extraArgs) {
    args.push_back(a);
  }
  c["args"] = std::move(args);
  Json env = Json::array({fieldRef("NODE_NAME", "spec.nodeName")});
  if (capacity) {
    env.push_back(fieldRef("NAMESPACE", "metadata.namespace"));
    env.push_back(fieldRef("POD_NAME", "metadata.name"));
  }
  setEnv(c, p.container, std::move(env));
  if (p.http.enabled) {
    c["ports"] = Json::array({tcpPort("provisioner", p.http.port)});
  }
  setSecurityAndResources(c, p.container);
  c["volumeMounts"] = Json::array({socketMount()});
  return c;
}

} // namespace csiop::render
