#include "sections.hpp"

#include <csiop/api/defaults.hpp>

namespace csiop::api::validation {
namespace {

// The fields that shape a controller pod of its own, which placements NodePlugin and SinglePod
// have not.
void noControllerPod(Validator& v, const ControllerSpec& c, const std::string& p) {
  const std::string message = "applies to the controller workload, and with placement " +
                              c.placement.value_or("") +
                              " there is none: the sidecars run in the node plugin's pods (set it "
                              "under spec.node)";
  const auto reject = [&](const char* field, bool set) {
    if (set) {
      v.add(forbidden(p + "." + field, message));
    }
  };
  // kind has a schema default (Deployment), so only another value is the user's.
  reject("kind", c.kind && *c.kind != defaults::kControllerKind);
  reject("replicas", c.replicas.has_value());
  reject("nodeSelector", c.nodeSelector.has_value());
  reject("tolerations", c.tolerations.has_value());
  reject("affinity", c.affinity.has_value());
  reject("topologySpreadConstraints", c.topologySpreadConstraints.has_value());
  reject("priorityClassName", c.priorityClassName.has_value());
  reject("livenessProbe", c.livenessProbe.has_value());
  reject("driver", c.driver.has_value());
  reject("podTemplatePatch", c.podTemplatePatch.has_value());
  reject("serviceAccount", c.serviceAccount.has_value());
  reject("hostNetwork", c.hostNetwork.has_value());
  reject("strategy", c.strategy.has_value());
  const PodSettings& pod = c.pod;
  reject("securityContext", pod.securityContext.has_value());
  reject("hostPID", pod.hostPID.has_value());
  reject("dnsPolicy", pod.dnsPolicy.has_value());
  reject("terminationGracePeriodSeconds", pod.terminationGracePeriodSeconds.has_value());
  reject("initContainers", pod.initContainers.has_value());
  reject("extraContainers", pod.extraContainers.has_value());
  reject("podLabels", pod.podLabels.has_value());
  reject("podAnnotations", pod.podAnnotations.has_value());
}

// With placement SinglePod the node plugin is one pod on one node (a StatefulSet of one replica):
// what needs a node plugin on every node, or a DaemonSet, has none.
void singlePod(Validator& v, const DriverDeploymentSpec& spec) {
  const auto reject = [&v](const std::string& path, bool set, const char* why) {
    if (set) {
      v.add(forbidden(path, std::string("not with spec.controller.placement SinglePod: ") + why));
    }
  };
  const NodeSpec node = spec.node.value_or(NodeSpec{});
  reject("spec.windowsNode.enabled", spec.windowsNode && spec.windowsNode->enabled.value_or(true),
         "the driver keeps its volumes in its one process, and a Windows node plugin would be "
         "a second one that knows none of them");
  reject("spec.node.provisioner.enabled",
         node.provisioner && node.provisioner->enabled.value_or(false),
         "the pod's provisioner is the controller's (spec.controller.provisioner)");
  reject("spec.node.updateStrategy", node.updateStrategy.has_value(),
         "it is a DaemonSet's, and the pod is a StatefulSet's, replaced when its template changes");
  reject("spec.startupTaint", spec.startupTaint.has_value(),
         "the driver registers on one node only, so every other node would keep the taint");
  reject("spec.rollout.type", spec.rollout && spec.rollout->type == "Verified",
         "a verified rollout replaces node plugin pods node by node, and there is one pod");
}

// spec.controller.strategy: the workload kind's own update strategy.
void strategy(Validator& v, const ControllerSpec& c, const std::string& p) {
  if (!c.strategy) {
    return;
  }
  if (!c.strategy->is_object()) {
    v.add(invalid(p + ".strategy", *c.strategy, "must be an object"));
    return;
  }
  const bool statefulSet = c.kind == "StatefulSet";
  if (c.strategy->contains("type")) {
    const Json& t = (*c.strategy)["type"];
    v.oneOf(p + ".strategy.type", t.is_string() ? t.get<std::string>() : "",
            statefulSet ? std::vector<std::string>{"OnDelete", "RollingUpdate"}
                        : std::vector<std::string>{"Recreate", "RollingUpdate"});
  }
  v.rollingUpdate(p + ".strategy", c.strategy);
}

} // namespace

Ports controller(Validator& v, const DriverDeploymentSpec& spec, const Ports& nodePorts) {
  const bool attachRequired =
      spec.csiDriver && spec.csiDriver->attachRequired ? *spec.csiDriver->attachRequired : true;
  const bool capacity = spec.csiDriver && spec.csiDriver->storageCapacity.value_or(false);
  const bool nodeProvisioner =
      spec.node && spec.node->provisioner && spec.node->provisioner->enabled.value_or(false);
  if (!spec.controller) {
    if (capacity && !nodeProvisioner) {
      v.add(forbidden("spec.csiDriver.storageCapacity",
                      "requires a provisioner, which publishes CSIStorageCapacity objects: "
                      "spec.controller with the provisioner enabled, or spec.node.provisioner"));
    }
    if (attachRequired) {
      v.warn("spec.csiDriver.attachRequired is true (the default) but there is no "
             "spec.controller, so no external-attacher will handle VolumeAttachments");
    }
    return nodePorts;
  }
  const ControllerSpec& c = *spec.controller;
  const std::string p = "spec.controller";
  if (c.placement) {
    v.oneOf(p + ".placement", *c.placement,
            {defaults::kPlacementWorkload, defaults::kPlacementNodePlugin,
             defaults::kPlacementSinglePod});
  }
  const bool single = c.placement == defaults::kPlacementSinglePod;
  const bool inNodePlugin = c.placement == defaults::kPlacementNodePlugin || single;
  if (inNodePlugin) {
    noControllerPod(v, c, p);
  }
  if (single) {
    singlePod(v, spec);
  }
  if (c.kind) {
    v.oneOf(p + ".kind", *c.kind, {"Deployment", "StatefulSet"});
  }
  const std::int32_t replicas = c.replicas.value_or(1);
  if (replicas < 0) {
    v.add(invalid(p + ".replicas", replicas, "must be greater than or equal to 0"));
  }
  if (c.nodeSelector) {
    v.labels(p + ".nodeSelector", *c.nodeSelector, true);
  }
  v.tolerations(p + ".tolerations", c.tolerations);
  v.object(p + ".affinity", c.affinity, "an Affinity object");
  v.list(p + ".topologySpreadConstraints", c.topologySpreadConstraints, "TopologySpreadConstraint");
  v.priorityClass(p + ".priorityClassName", c.priorityClassName);
  v.resources(p + ".resources", c.resources);
  v.leaderElection(p + ".leaderElection", c.leaderElection);
  v.rbacRules(p + ".rbacRules", c.rbacRules);
  v.rbacRules(p + ".namespacedRbacRules", c.namespacedRbacRules);
  if (c.serviceAccount) {
    userMetadata(v, p + ".serviceAccount", c.serviceAccount->labels, c.serviceAccount->annotations);
  }
  v.object(p + ".podTemplatePatch", c.podTemplatePatch, "an object (a pod template patch)");
  v.container(p + ".livenessProbe", c.livenessProbe);
  v.podSettings(p, c.pod);
  strategy(v, c, p);
  // The pod the sidecars run in, and whether it is on the node's network.
  const bool hostNetwork = inNodePlugin ? spec.node && spec.node->hostNetwork.value_or(false)
                                        : c.hostNetwork.value_or(false);
  const std::string hostNetworkPath = inNodePlugin ? "spec.node.hostNetwork" : p + ".hostNetwork";

  // Leader election explicitly switched off, and where it was said.
  const bool leOffForAll = c.leaderElection && c.leaderElection->enabled == false;

  struct Entry {
    const char* name;
    const std::optional<Sidecar>& spec;
    bool enabledByDefault;
    std::int32_t port;
  };
  const Entry sidecars[] = {
      {"provisioner", c.provisioner, true, defaults::kProvisionerPort},
      {"attacher", c.attacher, attachRequired, defaults::kAttacherPort},
      {"resizer", c.resizer, false, defaults::kResizerPort},
      {"snapshotter", c.snapshotter, false, defaults::kSnapshotterPort},
      {"healthMonitor", c.healthMonitor, false, defaults::kHealthMonitorPort},
  };
  // In the node plugin the sidecars share the pod (and its ports) with the node's containers.
  Ports reserved = inNodePlugin ? nodePorts : Ports{};
  for (const auto& s : sidecars) {
    const std::string sp = p + "." + s.name;
    v.container(sp, s.spec);
    const bool enabled = s.spec && s.spec->enabled ? *s.spec->enabled : s.enabledByDefault;
    if (s.spec) {
      v.leaderElection(sp + ".leaderElection", s.spec->leaderElection);
    }
    if (!enabled) {
      continue;
    }
    const bool ownSetting = s.spec && s.spec->leaderElection && s.spec->leaderElection->enabled;
    const bool leOff = ownSetting ? !*s.spec->leaderElection->enabled : leOffForAll;
    if ((replicas > 1 || (inNodePlugin && !single)) && leOff) {
      v.add(forbidden(ownSetting ? sp + ".leaderElection.enabled" : p + ".leaderElection.enabled",
                      std::string("leader election must stay enabled ") +
                          (inNodePlugin ? "with placement NodePlugin: otherwise the " +
                                              std::string(s.name) + " of every node acts at once"
                                        : "when replicas > 1: otherwise every replica of the " +
                                              std::string(s.name) + " acts at once")));
    }
    const Sidecar own = s.spec.value_or(Sidecar{});
    reservePort(v, reserved, sp, own.httpEndpoint, "httpPort",
                v.httpEndpoint(sp, own.httpEndpoint, own.httpPort, "httpPort", s.port, true,
                               hostNetwork, hostNetworkPath));
  }
  const bool attacherEnabled =
      c.attacher && c.attacher->enabled ? *c.attacher->enabled : attachRequired;
  if (!attachRequired && c.attacher && c.attacher->enabled == true) {
    v.add(forbidden(p + ".attacher.enabled", "the external-attacher has nothing to do when "
                                             "spec.csiDriver.attachRequired is false"));
  }
  if (attachRequired && !attacherEnabled) {
    v.warn("spec.controller.attacher is disabled although spec.csiDriver.attachRequired is true: "
           "volumes will not attach unless another attacher handles this driver");
  }
  const bool provisionerEnabled = !(c.provisioner && c.provisioner->enabled == false);
  if (capacity && !provisionerEnabled && !nodeProvisioner) {
    v.add(forbidden("spec.csiDriver.storageCapacity",
                    "requires a provisioner, which publishes CSIStorageCapacity objects: "
                    "spec.controller.provisioner or spec.node.provisioner"));
  }
  if (provisionerEnabled && nodeProvisioner) {
    v.add(forbidden("spec.node.provisioner.enabled",
                    "a driver provisions either centrally or on every node: disable "
                    "spec.controller.provisioner (or leave out spec.controller) to provision on "
                    "every node"));
  }
  if (inNodePlugin) {
    return reserved; // no pod, probe or driver container of its own
  }
  livenessSidecar(v, reserved, p + ".livenessProbe", c.livenessProbe, hostNetwork, hostNetworkPath);
  const auto volumes =
      driverInPod(v, spec, c.driver, p + ".driver", kControllerVolumes, {"/csi"}, reserved);
  podContainers(v, p, c.pod, volumes, driverName(spec, c.driver));
  return nodePorts;
}

} // namespace csiop::api::validation
