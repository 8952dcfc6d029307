#include "workloads.hpp"

#include <algorithm>

#include "containers.hpp"
#include "node_layouts.hpp"
#include "patch.hpp"

namespace csiop::render {
namespace {

// The nodes as resolved (api::resolve: Linux's unless the spec chose); none: no field.
void setNodeSelector(Json& spec, const api::StringMap& nodes) {
  if (nodes.empty()) {
    return;
  }
  Json out = Json::object();
  for (const auto& [k, v] : nodes) {
    out[k] = v;
  }
  spec["nodeSelector"] = std::move(out);
}

// The pod fields the node plugin and the controller pod share, after serviceAccountName.
void commonPodFields(Json& spec, const api::EffectivePod& pod) {
  if (!pod.priorityClassName.empty()) {
    spec["priorityClassName"] = pod.priorityClassName;
  }
  if (pod.hostNetwork) {
    spec["hostNetwork"] = true;
  }
  if (pod.hostPID) {
    spec["hostPID"] = true;
  }
  if (!pod.dnsPolicy.empty()) {
    spec["dnsPolicy"] = pod.dnsPolicy;
  }
  if (!pod.securityContext.is_null()) {
    spec["securityContext"] = pod.securityContext;
  }
  if (pod.terminationGracePeriodSeconds) {
    spec["terminationGracePeriodSeconds"] = *pod.terminationGracePeriodSeconds;
  }
}

void imagePullSecrets(Json& spec, const Effective& effective) {
  if (!effective.imagePullSecrets.empty()) {
    spec["imagePullSecrets"] = effective.imagePullSecrets;
  }
}

// The operator's containers, then the user's; init containers before them.
void containers(Json& spec, Json own, const api::EffectivePod& pod) {
  if (!pod.initContainers.empty()) {
    spec["initContainers"] = pod.initContainers;
  }
  for (const auto& c : pod.extraContainers) {
    own.push_back(c);
  }
  spec["containers"] = std::move(own);
}

Json podTemplate(const Effective& effective, const char* componentName,
                 const api::EffectivePod& pod, const std::string& driverContainer, Json spec,
                 const Json& patch) {
  Json podLabels = labels(effective, componentName);
  for (const auto& [k, v] : pod.labels) {
    if (!podLabels.contains(k)) { // the operator's own labels (the selector) stay
      podLabels[k] = v;
    }
  }
  Json annotations = Json{{"kubectl.kubernetes.io/default-container", driverContainer}};
  for (const auto& [k, v] : pod.annotations) {
    annotations[k] = v;
  }
  Json tmpl = Json{{"metadata", {{"labels", std::move(podLabels)}, {"annotations", annotations}}},
                   {"spec", std::move(spec)}};
  if (!patch.is_null()) {
    tmpl = strategicMerge(std::move(tmpl), patch);
  }
  return tmpl;
}

// What a node plugin's workload has from its OS, beside its pod's layout.
struct NodePluginWorkload {
  std::string name; // of the DaemonSet (the StatefulSet)
  const char* component;
  Json podSpec;          // the pod spec's fields before the ones every node plugin has
  api::EffectivePod pod; // as the pod spec has it
  Json sidecars;         // the operator's containers after the livenessprobe
  Json updateStrategy;   // null: the server's default
  // placement SinglePod: a StatefulSet of one replica (one pod in the cluster, never two at
  // once, even while a node is lost), not a DaemonSet; its update strategy the server's default.
  bool singlePod = false;
};

// The DaemonSet's updateStrategy: OnDelete where the operator replaces the plugin pods itself (a
// verified rollout, or WhenVolumesUnused: node by node, where no volume is in use); else as given
// (null: the server's default).
Json nodePluginStrategy(const Effective& effective, const api::EffectiveNodePlugin& n) {
  const Json& strategy = n.updateStrategy;
  if (effective.rollout.verified ||
      (strategy.is_object() && strategy.value("type", Json()) == "WhenVolumesUnused")) {
    return Json{{"type", "OnDelete"}};
  }
  return strategy;
}

Json nodePluginWorkload(const Effective& effective, const api::EffectiveNodePlugin& n,
                        const NodePluginLayout& layout, NodePluginWorkload workload) {
  Json spec = std::move(workload.podSpec);
  commonPodFields(spec, workload.pod);
  setNodeSelector(spec, n.nodeSelector);
  if (!n.tolerations.empty()) {
    spec["tolerations"] = n.tolerations;
  }
  if (!n.affinity.is_null()) {
    spec["affinity"] = n.affinity;
  }
  imagePullSecrets(spec, effective);
  Json own = nodePluginContainers(n, layout);
  for (auto& c : workload.sidecars) {
    own.push_back(std::move(c));
  }
  containers(spec, std::move(own), workload.pod);
  spec["volumes"] = nodePluginVolumes(n, layout);

  Json ds = object(effective, "apps/v1", workload.singlePod ? "StatefulSet" : "DaemonSet",
                   workload.name, effective.namespace_, workload.component);
  Json dsSpec = Json::object();
  if (workload.singlePod) {
    dsSpec["replicas"] = 1;
    dsSpec["serviceName"] = workload.name; // required; as for the controller, no Service
  }
  dsSpec["selector"] = Json{{"matchLabels", selectorLabels(effective, workload.component)}};
  if (!workload.updateStrategy.is_null()) {
    dsSpec["updateStrategy"] = std::move(workload.updateStrategy);
  }
  dsSpec["template"] = podTemplate(effective, workload.component, workload.pod, n.driver.name,
                                   std::move(spec), n.podTemplatePatch);
  ds["spec"] = std::move(dsSpec);
  return ds;
}

// Every container of a HostProcess pod runs on the host, as SYSTEM unless the user names another.
api::EffectivePod hostProcessPod(api::EffectivePod pod) {
  Json& context = pod.securityContext;
  if (!context.is_object()) {
    context = Json::object();
  }
  Json& options = context["windowsOptions"];
  if (!options.is_object()) {
    options = Json::object();
  }
  options["hostProcess"] = true;
  if (!options.contains("runAsUserName")) {
    options["runAsUserName"] = "NT AUTHORITY\\SYSTEM";
  }
  return pod;
}

} // namespace

Json renderNodePlugin(const Effective& effective) {
  const auto& n = effective.node;
  Json spec = Json::object();
  const bool withController = effective.controller && effective.controller->inNodePlugin();
  spec["serviceAccountName"] = nodeName(effective);
  // The node plugin talks to the API server only if the driver was granted rules, or
  // if the controller sidecars or a node-local provisioner run in it.
  spec["automountServiceAccountToken"] = !n.rbacRules.empty() || !n.namespacedRbacRules.empty() ||
                                         withController || n.provisioner.has_value();
  Json sidecars = Json::array();
  if (n.provisioner) {
    sidecars.push_back(nodeProvisionerContainer(effective, *n.provisioner));
  }
  if (withController) {
    // One driver process per node serves both CSI services (drivers that keep their
    // volumes in memory need that), and the sidecars reach it on the node's socket.
    for (const auto& s : effective.controller->sidecars) {
      if (s.enabled) {
        sidecars.push_back(sidecarContainer(effective, s));
      }
    }
  }
  return nodePluginWorkload(
      effective, n, linuxNodeLayout(effective),
      {.name = nodeName(effective),
       .component = component::kNode,
       .podSpec = std::move(spec),
       .pod = n.pod,
       .sidecars = std::move(sidecars),
       .updateStrategy = effective.singlePod() ? Json() : nodePluginStrategy(effective, n),
       .singlePod = effective.singlePod()});
}

Json renderWindowsNodeDaemonSet(const Effective& effective) {
  const auto& w = *effective.windowsNode;
  Json spec = Json::object();
  // The API server then holds the pod to what Windows supports (no Linux security fields).
  spec["os"] = Json{{"name", "windows"}};
  spec["serviceAccountName"] =
      nodeName(effective); // the node plugin's: the same driver, the same rules
  spec["automountServiceAccountToken"] =
      !effective.node.rbacRules.empty() || !effective.node.namespacedRbacRules.empty();
  return nodePluginWorkload(effective, w, windowsNodeLayout(effective),
                            {.name = windowsNodeName(effective),
                             .component = component::kWindowsNode,
                             .podSpec = std::move(spec),
                             .pod = w.hostProcess ? hostProcessPod(w.pod) : w.pod,
                             .sidecars = Json::array(),
                             .updateStrategy = nodePluginStrategy(effective, w)});
}

Json renderControllerWorkload(const Effective& effective) {
  const auto& c = *effective.controller;
  Json spec = Json::object();
  spec["serviceAccountName"] = controllerName(effective);
  commonPodFields(spec, c.pod);
  setNodeSelector(spec, c.nodeSelector);
  if (!c.tolerations.empty()) {
    spec["tolerations"] = c.tolerations;
  }
  if (!c.affinity.is_null()) {
    spec["affinity"] = c.affinity;
  } else if (c.replicas > 1) {
    // Spread replicas over nodes so that one node failure leaves a leader.
    spec["affinity"] =
        Json{{"podAntiAffinity",
              {{"preferredDuringSchedulingIgnoredDuringExecution",
                Json::array(
                    {Json{{"weight", 100},
                          {"podAffinityTerm",
                           {{"labelSelector",
                             {{"matchLabels", selectorLabels(effective, component::kController)}}},
                            {"topologyKey", "kubernetes.io/hostname"}}}}})}}}};
  }
  if (!c.topologySpreadConstraints.is_null()) {
    spec["topologySpreadConstraints"] = c.topologySpreadConstraints;
  }
  imagePullSecrets(spec, effective);
  Json own = Json::array({driverContainer(c.driver, c.livenessProbe, kSocketEndpoint, Json(),
                                          Json::array({socketMount()}))});
  for (const auto& s : c.sidecars) {
    if (s.enabled) {
      own.push_back(sidecarContainer(effective, s));
    }
  }
  if (c.livenessProbe.enabled) {
    own.push_back(livenessContainer(c.livenessProbe, linuxSocket()));
  }
  containers(spec, std::move(own), c.pod);
  Json volumes = Json::array({Json{{"name", "socket-dir"}, {"emptyDir", Json::object()}}});
  for (const auto& v : c.driver.volumes) {
    volumes.push_back(v);
  }
  spec["volumes"] = std::move(volumes);

  const bool statefulSet = c.kind == "StatefulSet";
  Json w = object(effective, "apps/v1", statefulSet ? "StatefulSet" : "Deployment",
                  controllerName(effective), effective.namespace_, component::kController);
  Json wSpec = Json::object();
  wSpec["replicas"] = c.replicas;
  wSpec["selector"] = Json{{"matchLabels", selectorLabels(effective, component::kController)}};
  if (statefulSet) {
    wSpec["serviceName"] = controllerName(effective);
    if (!c.strategy.is_null()) {
      wSpec["updateStrategy"] = c.strategy;
    }
  } else if (!c.strategy.is_null()) {
    wSpec["strategy"] = c.strategy;
  } else {
    const bool anyElection = std::any_of(c.sidecars.begin(), c.sidecars.end(), [](const auto& s) {
      return s.enabled && s.leaderElection.enabled;
    });
    if (!anyElection) {
      // Without leader election two controller pods must never overlap, not
      // even during a rollout.
      wSpec["strategy"] = Json{{"type", "Recreate"}};
    }
  }
  wSpec["template"] = podTemplate(effective, component::kController, c.pod, c.driver.name,
                                  std::move(spec), c.podTemplatePatch);
  w["spec"] = std::move(wSpec);
  return w;
}

} // namespace csiop::render
