#include "workloads.hpp"

#include <algorithm>

#include "containers.hpp"
#include "patch.hpp"
#include "windows_containers.hpp"

namespace csiop::render {
namespace {

Json hostPath(const char* name, const std::string& path, const char* type) {
  return Json{{"name", name}, {"hostPath", {{"path", path}, {"type", type}}}};
}

// Linux nodes only, unless the user chose the nodes.
Json nodeSelector(const api::StringMap& chosen) {
  if (chosen.empty()) {
    return Json{{"kubernetes.io/os", "linux"}};
  }
  Json out = Json::object();
  for (const auto& [k, v] : chosen) {
    out[k] = v;
  }
  return out;
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

void imagePullSecrets(Json& spec, const Effective& e) {
  if (!e.imagePullSecrets.empty()) {
    spec["imagePullSecrets"] = e.imagePullSecrets;
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

Json podTemplate(const Effective& e, const char* componentName, const api::EffectivePod& pod,
                 const std::string& driverContainer, Json spec, const Json& patch) {
  Json podLabels = labels(e, componentName);
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

} // namespace

Json renderNodeDaemonSet(const Effective& e) {
  const auto& n = e.node;
  Json spec = Json::object();
  const bool withController = e.controller && e.controller->inNodePlugin();
  spec["serviceAccountName"] = nodeName(e);
  // The node plugin talks to the API server only if the driver was granted rules, or
  // if the controller sidecars or a node-local provisioner run in it.
  spec["automountServiceAccountToken"] = !n.rbacRules.empty() || !n.namespacedRbacRules.empty() ||
                                         withController || n.provisioner.has_value();
  commonPodFields(spec, n.pod);
  spec["nodeSelector"] = nodeSelector(n.nodeSelector);
  if (!n.tolerations.empty()) {
    spec["tolerations"] = n.tolerations;
  }
  if (!n.affinity.is_null()) {
    spec["affinity"] = n.affinity;
  }
  imagePullSecrets(spec, e);
  Json own =
      Json::array({driverContainer(e, n.driver, n.livenessProbe, true), registrarContainer(e)});
  if (n.livenessProbe.enabled) {
    own.push_back(livenessContainer(n.livenessProbe));
  }
  if (n.provisioner) {
    own.push_back(nodeProvisionerContainer(e, *n.provisioner));
  }
  if (withController) {
    // One driver process per node serves both CSI services (drivers that keep their
    // volumes in memory need that), and the sidecars reach it on the node's socket.
    for (const auto& s : e.controller->sidecars) {
      if (s.enabled) {
        own.push_back(sidecarContainer(e, s));
      }
    }
  }
  containers(spec, std::move(own), n.pod);
  const std::string& k = n.kubeletDir;
  Json volumes = Json::array({
      hostPath("socket-dir", k + "/plugins/" + e.driverName, "DirectoryOrCreate"),
      hostPath("registration-dir", k + "/plugins_registry", "Directory"),
      hostPath("mountpoint-dir", k + "/pods", "DirectoryOrCreate"),
      hostPath("plugins-dir", k + "/plugins", "Directory"),
      hostPath("dev-dir", "/dev", "Directory"),
  });
  for (const auto& v : n.driver.volumes) {
    volumes.push_back(v);
  }
  spec["volumes"] = std::move(volumes);

  Json ds = object(e, "apps/v1", "DaemonSet", nodeName(e), e.namespace_, component::kNode);
  Json dsSpec = Json::object();
  dsSpec["selector"] = Json{{"matchLabels", selectorLabels(e, component::kNode)}};
  if (n.updateStrategy.is_object() &&
      n.updateStrategy.value("type", Json()) == "WhenVolumesUnused") {
    // The operator replaces the pods itself, node by node, where no volume is in use.
    dsSpec["updateStrategy"] = Json{{"type", "OnDelete"}};
  } else if (!n.updateStrategy.is_null()) {
    dsSpec["updateStrategy"] = n.updateStrategy;
  }
  dsSpec["template"] =
      podTemplate(e, component::kNode, n.pod, n.driver.name, std::move(spec), n.podTemplatePatch);
  ds["spec"] = std::move(dsSpec);
  return ds;
}

Json renderWindowsNodeDaemonSet(const Effective& e) {
  const auto& w = *e.windowsNode;
  Json spec = Json::object();
  // The API server then holds the pod to what Windows supports (no Linux security fields).
  spec["os"] = Json{{"name", "windows"}};
  spec["serviceAccountName"] = nodeName(e); // the node plugin's: the same driver, the same rules
  spec["automountServiceAccountToken"] =
      !e.node.rbacRules.empty() || !e.node.namespacedRbacRules.empty();
  api::EffectivePod pod = w.pod;
  if (w.hostProcess) {
    // Every container of the pod runs on the host, as SYSTEM unless the user names another.
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
  }
  commonPodFields(spec, pod);
  spec["nodeSelector"] = nodeSelector(w.nodeSelector);
  if (!w.tolerations.empty()) {
    spec["tolerations"] = w.tolerations;
  }
  if (!w.affinity.is_null()) {
    spec["affinity"] = w.affinity;
  }
  imagePullSecrets(spec, e);
  Json own = Json::array({windowsDriverContainer(e), windowsRegistrarContainer(e)});
  if (w.livenessProbe.enabled) {
    own.push_back(windowsLivenessContainer(e));
  }
  containers(spec, std::move(own), w.pod);
  spec["volumes"] = windowsNodeVolumes(e);

  Json ds =
      object(e, "apps/v1", "DaemonSet", windowsNodeName(e), e.namespace_, component::kWindowsNode);
  Json dsSpec = Json::object();
  dsSpec["selector"] = Json{{"matchLabels", selectorLabels(e, component::kWindowsNode)}};
  if (!w.updateStrategy.is_null()) {
    dsSpec["updateStrategy"] = w.updateStrategy;
  }
  dsSpec["template"] = podTemplate(e, component::kWindowsNode, w.pod, w.driver.name,
                                   std::move(spec), w.podTemplatePatch);
  ds["spec"] = std::move(dsSpec);
  return ds;
}

Json renderControllerWorkload(const Effective& e) {
  const auto& c = *e.controller;
  Json spec = Json::object();
  spec["serviceAccountName"] = controllerName(e);
  commonPodFields(spec, c.pod);
  spec["nodeSelector"] = nodeSelector(c.nodeSelector);
  if (!c.tolerations.empty()) {
    spec["tolerations"] = c.tolerations;
  }
  if (!c.affinity.is_null()) {
    spec["affinity"] = c.affinity;
  } else if (c.replicas > 1) {
    // Spread replicas over nodes so that one node failure leaves a leader.
    spec["affinity"] = Json{
        {"podAntiAffinity",
         {{"preferredDuringSchedulingIgnoredDuringExecution",
           Json::array({Json{
               {"weight", 100},
               {"podAffinityTerm",
                {{"labelSelector", {{"matchLabels", selectorLabels(e, component::kController)}}},
                 {"topologyKey", "kubernetes.io/hostname"}}}}})}}}};
  }
  if (!c.topologySpreadConstraints.is_null()) {
    spec["topologySpreadConstraints"] = c.topologySpreadConstraints;
  }
  imagePullSecrets(spec, e);
  Json own = Json::array({driverContainer(e, c.driver, c.livenessProbe, false)});
  for (const auto& s : c.sidecars) {
    if (s.enabled) {
      own.push_back(sidecarContainer(e, s));
    }
  }
  if (c.livenessProbe.enabled) {
    own.push_back(livenessContainer(c.livenessProbe));
  }
  containers(spec, std::move(own), c.pod);
  Json volumes = Json::array({Json{{"name", "socket-dir"}, {"emptyDir", Json::object()}}});
  for (const auto& v : c.driver.volumes) {
    volumes.push_back(v);
  }
  spec["volumes"] = std::move(volumes);

  const bool statefulSet = c.kind == "StatefulSet";
  Json w = object(e, "apps/v1", statefulSet ? "StatefulSet" : "Deployment", controllerName(e),
                  e.namespace_, component::kController);
  Json wSpec = Json::object();
  wSpec["replicas"] = c.replicas;
  wSpec["selector"] = Json{{"matchLabels", selectorLabels(e, component::kController)}};
  if (statefulSet) {
    wSpec["serviceName"] = controllerName(e);
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
  wSpec["template"] = podTemplate(e, component::kController, c.pod, c.driver.name, std::move(spec),
                                  c.podTemplatePatch);
  w["spec"] = std::move(wSpec);
  return w;
}

} // namespace csiop::render
