#include <csiop/api/defaults.hpp>

#include <algorithm>
#include <charconv>
#include <utility>

namespace csiop::api::defaults {

Json sidecarResources() {
  return Json{{"requests", {{"cpu", "10m"}, {"memory", "20Mi"}}}};
}

Json sidecarSecurityContext() {
  return Json{{"allowPrivilegeEscalation", false},
              {"capabilities", {{"drop", Json::array({"ALL"})}}},
              {"readOnlyRootFilesystem", true}};
}

Json nodeTolerations() {
  return Json::array({Json{{"operator", "Exists"}}});
}

EffectiveSidecarProbe registrarProbe() {
  return {true, 5, 5, 10, 3};
}

} // namespace csiop::api::defaults

namespace csiop::api {

std::string HttpEndpoint::flag() const {
  return enabled ? host + ":" + std::to_string(port) : std::string();
}

bool HttpEndpoint::loopback() const {
  return enabled && (host == "localhost" || host == "[::1]" || host.starts_with("127."));
}

std::optional<HttpEndpoint> parseHttpEndpoint(const std::string& text) {
  if (text.empty()) {
    return HttpEndpoint{};
  }
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) {
    return std::nullopt;
  }
  const std::string host = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  int n = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || n < 1 || n > 65535 ||
      host.find_first_of(" \t\n/") != std::string::npos ||
      (host.find(':') != std::string::npos && !(host.starts_with('[') && host.ends_with(']')))) {
    return std::nullopt;
  }
  return HttpEndpoint{true, host, n};
}

namespace {

template <class T> T orDefault(const std::optional<T>& value, T fallback) {
  return value ? *value : std::move(fallback);
}

Json orNull(const std::optional<Json>& value) {
  return value ? *value : Json();
}

// Resources of a container: its own, else its pod's default, else `fallback`.
Json resourcesFor(const std::optional<Json>& own, const std::optional<Json>& pod, Json fallback) {
  if (own) {
    return *own;
  }
  if (pod) {
    return *pod;
  }
  return fallback;
}

template <class Spec>
EffectiveContainer container(const std::optional<Spec>& spec, Component component,
                             const std::string& registry, const std::optional<Json>& podResources) {
  EffectiveContainer out;
  out.image = defaultImage(component, registry);
  out.imagePullPolicy = defaults::kPullPolicy;
  out.resources = resourcesFor(std::nullopt, podResources, defaults::sidecarResources());
  out.securityContext = defaults::sidecarSecurityContext();
  if (spec) {
    const ContainerSettings& c = spec->container;
    out.image = orDefault(c.image, out.image);
    out.imagePullPolicy = orDefault(c.imagePullPolicy, out.imagePullPolicy);
    out.command = c.command;
    out.extraArgs = orDefault(c.args, {});
    out.env = orDefault(c.env, Json::array());
    out.resources = resourcesFor(c.resources, podResources, defaults::sidecarResources());
    out.securityContext = orDefault(c.securityContext, out.securityContext);
    out.lifecycle = orNull(c.lifecycle);
  }
  return out;
}

// A sidecar's own livenessProbe: the user's timings over the operator's.
EffectiveSidecarProbe sidecarProbe(const std::optional<SidecarProbe>& spec,
                                   EffectiveSidecarProbe fallback) {
  if (spec) {
    fallback.enabled = orDefault(spec->enabled, true);
    fallback.initialDelaySeconds =
        orDefault(spec->initialDelaySeconds, fallback.initialDelaySeconds);
    fallback.timeoutSeconds = orDefault(spec->timeoutSeconds, fallback.timeoutSeconds);
    fallback.periodSeconds = orDefault(spec->periodSeconds, fallback.periodSeconds);
    fallback.failureThreshold = orDefault(spec->failureThreshold, fallback.failureThreshold);
  }
  return fallback;
}

// An endpoint given as `httpEndpoint` (validated), else as a port on every interface.
HttpEndpoint endpoint(const std::optional<std::string>& text,
                      const std::optional<std::int32_t>& port, std::int32_t fallback) {
  if (text) {
    return parseHttpEndpoint(*text).value_or(HttpEndpoint{});
  }
  return HttpEndpoint{true, "", orDefault(port, fallback)};
}

EffectiveProbe probe(const std::optional<LivenessProbe>& spec, const std::string& registry,
                     const std::optional<Json>& podResources) {
  EffectiveProbe out;
  out.container = container(spec, Component::LivenessProbe, registry, podResources);
  out.enabled = spec ? orDefault(spec->enabled, true) : true;
  out.http = spec ? endpoint(spec->httpEndpoint, spec->port, defaults::kLivenessPort)
                  : endpoint(std::nullopt, std::nullopt, defaults::kLivenessPort);
  if (spec) {
    out.initialDelaySeconds = orDefault(spec->initialDelaySeconds, out.initialDelaySeconds);
    out.timeoutSeconds = orDefault(spec->timeoutSeconds, out.timeoutSeconds);
    out.periodSeconds = orDefault(spec->periodSeconds, out.periodSeconds);
    out.failureThreshold = orDefault(spec->failureThreshold, out.failureThreshold);
  }
  return out;
}

EffectivePod pod(const PodSettings& p, const std::optional<bool>& hostNetwork,
                 const std::optional<std::string>& priorityClassName, const char* priorityClass) {
  EffectivePod out;
  out.hostNetwork = orDefault(hostNetwork, false);
  out.hostPID = orDefault(p.hostPID, false);
  // A pod on the host's network still resolves cluster names, unless told otherwise.
  out.dnsPolicy =
      orDefault(p.dnsPolicy, std::string(out.hostNetwork ? "ClusterFirstWithHostNet" : ""));
  out.securityContext = orNull(p.securityContext);
  out.terminationGracePeriodSeconds = p.terminationGracePeriodSeconds;
  out.priorityClassName = orDefault(priorityClassName, std::string(priorityClass));
  out.initContainers = orDefault(p.initContainers, Json::array());
  out.extraContainers = orDefault(p.extraContainers, Json::array());
  out.labels = orDefault(p.podLabels, {});
  out.annotations = orDefault(p.podAnnotations, {});
  return out;
}

EffectiveDriver driver(const DriverContainer& base, const std::optional<DriverContainer>& override,
                       const std::optional<Json>& podResources) {
  DriverContainer merged = base;
  if (override) {
    const auto pick = [](auto& into, const auto& from) {
      if (from) {
        into = from;
      }
    };
    pick(merged.name, override->name);
    pick(merged.image, override->image);
    pick(merged.imagePullPolicy, override->imagePullPolicy);
    pick(merged.command, override->command);
    pick(merged.args, override->args);
    pick(merged.env, override->env);
    pick(merged.resources, override->resources);
    pick(merged.ports, override->ports);
    pick(merged.volumes, override->volumes);
    pick(merged.volumeMounts, override->volumeMounts);
    pick(merged.securityContext, override->securityContext);
    pick(merged.readinessProbe, override->readinessProbe);
    pick(merged.startupProbe, override->startupProbe);
    pick(merged.lifecycle, override->lifecycle);
  }
  EffectiveDriver out;
  out.name = orDefault(merged.name, std::string(defaults::kDriverContainerName));
  out.image = orDefault(merged.image, std::string{});
  out.imagePullPolicy = orDefault(merged.imagePullPolicy, std::string(defaults::kPullPolicy));
  out.command = merged.command;
  out.args = orDefault(merged.args, {});
  out.env = orDefault(merged.env, Json::array());
  out.resources = resourcesFor(merged.resources, podResources, Json());
  out.ports = orDefault(merged.ports, Json::array());
  out.volumes = orDefault(merged.volumes, Json::array());
  out.volumeMounts = orDefault(merged.volumeMounts, Json::array());
  out.securityContext = orNull(merged.securityContext);
  out.readinessProbe = orNull(merged.readinessProbe);
  out.startupProbe = orNull(merged.startupProbe);
  out.lifecycle = orNull(merged.lifecycle);
  return out;
}

EffectiveLeaderElection leaderElection(const std::optional<LeaderElection>& pod,
                                       const std::optional<LeaderElection>& own, bool byDefault) {
  EffectiveLeaderElection out;
  out.enabled = byDefault;
  for (const auto* le : {&pod, &own}) {
    if (!*le) {
      continue;
    }
    out.enabled = orDefault((*le)->enabled, out.enabled);
    if ((*le)->leaseDuration) {
      out.leaseDuration = (*le)->leaseDuration;
    }
    if ((*le)->renewDeadline) {
      out.renewDeadline = (*le)->renewDeadline;
    }
    if ((*le)->retryPeriod) {
      out.retryPeriod = (*le)->retryPeriod;
    }
  }
  return out;
}

EffectiveSidecar sidecar(const std::optional<Sidecar>& spec, Component component, const char* name,
                         bool enabledByDefault, std::int32_t port, const ControllerSpec& controller,
                         bool leaderElectionByDefault, const std::string& registry) {
  EffectiveSidecar out;
  out.component = component;
  out.name = name;
  out.enabled = spec ? orDefault(spec->enabled, enabledByDefault) : enabledByDefault;
  out.container = container(spec, component, registry, controller.resources);
  out.leaderElection =
      leaderElection(controller.leaderElection, spec ? spec->leaderElection : std::nullopt,
                     leaderElectionByDefault);
  out.http = spec ? endpoint(spec->httpEndpoint, spec->httpPort, port)
                  : endpoint(std::nullopt, std::nullopt, port);
  // Restart a sidecar whose leader election is stuck (upstream's recommendation).
  out.probe = sidecarProbe(spec ? spec->livenessProbe : std::nullopt, {true, 10, 10, 20, 1});
  return out;
}

EffectiveCSIDriver csiDriver(const std::optional<CSIDriverSpec>& spec) {
  const CSIDriverSpec s = spec ? *spec : CSIDriverSpec{};
  EffectiveCSIDriver out;
  out.attachRequired = orDefault(s.attachRequired, true);
  out.podInfoOnMount = orDefault(s.podInfoOnMount, false);
  out.volumeLifecycleModes =
      orDefault(s.volumeLifecycleModes, std::vector<std::string>{"Persistent"});
  out.storageCapacity = orDefault(s.storageCapacity, false);
  out.fsGroupPolicy = orDefault(s.fsGroupPolicy, std::string(defaults::kFsGroupPolicy));
  out.requiresRepublish = orDefault(s.requiresRepublish, false);
  out.tokenRequests = s.tokenRequests;
  out.seLinuxMount = s.seLinuxMount;
  out.nodeAllocatableUpdatePeriodSeconds = s.nodeAllocatableUpdatePeriodSeconds;
  out.serviceAccountTokenInSecrets = s.serviceAccountTokenInSecrets;
  out.preventPodSchedulingIfMissing = s.preventPodSchedulingIfMissing;
  return out;
}

// A node plugin's or the controller's nodes when spec gives none: Linux's (a Windows node
// cannot run the Linux containers). Given, the user's replace it; {} is no node selector at all.
StringMap linuxNodes() {
  return {{"kubernetes.io/os", "linux"}};
}

// Resolves into `out` what every node plugin has, but its kubeletDir (whose default and form
// are its OS's). `hostNetwork`: the pod's, as its OS decides; `driverBase`: what its driver
// container takes from spec.driver.
void nodePlugin(const NodePluginSpec& n, const std::optional<bool>& hostNetwork,
                const DriverContainer& driverBase, const std::string& registry,
                EffectiveNodePlugin& out) {
  out.updateStrategy = orNull(n.updateStrategy);
  out.nodeSelector = orDefault(n.nodeSelector, linuxNodes());
  out.tolerations = orDefault(n.tolerations, defaults::nodeTolerations());
  out.affinity = orNull(n.affinity);
  out.pod = pod(n.pod, hostNetwork, n.priorityClassName, defaults::kNodePriorityClass);
  out.registrar = container(n.registrar, Component::NodeDriverRegistrar, registry, n.resources);
  out.registrarHttp = n.registrar ? endpoint(n.registrar->httpEndpoint, n.registrar->httpPort,
                                             defaults::kRegistrarPort)
                                  : endpoint(std::nullopt, std::nullopt, defaults::kRegistrarPort);
  out.registrarProbe = sidecarProbe(n.registrar ? n.registrar->livenessProbe : std::nullopt,
                                    defaults::registrarProbe());
  out.livenessProbe = probe(n.livenessProbe, registry, n.resources);
  out.driver = driver(driverBase, n.driver, n.resources);
  out.podTemplatePatch = orNull(n.podTemplatePatch);
}

EffectiveNode node(const DriverDeploymentSpec& spec, const std::string& registry) {
  const NodeSpec n = spec.node ? *spec.node : NodeSpec{};
  EffectiveNode out;
  nodePlugin(n, n.hostNetwork, spec.driver, registry, out);
  out.kubeletDir = kubeletDirOf(spec);
  if (n.provisioner && n.provisioner->enabled.value_or(false)) {
    const NodeProvisioner& p = *n.provisioner;
    EffectiveNodeProvisioner np;
    np.container = container(n.provisioner, Component::Provisioner, registry, n.resources);
    if (p.httpEndpoint || p.httpPort) {
      np.http = endpoint(p.httpEndpoint, p.httpPort, defaults::kProvisionerPort);
    }
    np.immediateBinding = p.immediateBinding.value_or(true);
    np.baseDelay = p.baseDelay;
    np.maxDelay = p.maxDelay;
    out.provisioner = std::move(np);
  }
  out.rbacRules = orDefault(n.rbacRules, Json::array());
  out.namespacedRbacRules = orDefault(n.namespacedRbacRules, Json::array());
  out.serviceAccount = orDefault(n.serviceAccount, {});
  return out;
}

// Windows containers have no Linux capabilities, privilege or read-only root filesystem: the
// API server refuses those fields in a pod for Windows. A sidecar runs with none unless the
// user gives its securityContext.
template <class Settings>
void withoutDefaultSecurity(const std::optional<Settings>& spec, EffectiveContainer& out) {
  if (!spec || !spec->container.securityContext) {
    out.securityContext = Json();
  }
}

std::optional<EffectiveWindowsNode> windowsNode(const DriverDeploymentSpec& spec,
                                                const std::string& registry) {
  if (!spec.windowsNode || !spec.windowsNode->enabled.value_or(true)) {
    return std::nullopt;
  }
  const WindowsNodeSpec& w = *spec.windowsNode;
  EffectiveWindowsNode out;
  out.hostProcess = w.hostProcess.value_or(false);
  // A HostProcess pod is on the host's network, always.
  nodePlugin(w, out.hostProcess ? std::optional<bool>(true) : std::nullopt,
             windowsDriverBase(spec.driver), registry, out);
  out.kubeletDir = orDefault(w.kubeletDir, std::string(defaults::kWindowsKubeletDir));
  while (out.kubeletDir.size() > 3 &&
         (out.kubeletDir.back() == '\\' || out.kubeletDir.back() == '/')) {
    out.kubeletDir.pop_back();
  }
  out.csiProxyPipes = orDefault(w.csiProxyPipes, {});
  out.nodeSelector["kubernetes.io/os"] = "windows";
  withoutDefaultSecurity(w.registrar, out.registrar);
  withoutDefaultSecurity(w.livenessProbe, out.livenessProbe.container);
  return out;
}

EffectiveController controller(const DriverDeploymentSpec& spec, const EffectiveCSIDriver& csi,
                               const std::string& registry) {
  const ControllerSpec& c = *spec.controller;
  EffectiveController out;
  out.placement = orDefault(c.placement, std::string(defaults::kPlacementWorkload));
  out.kind = orDefault(c.kind, std::string(defaults::kControllerKind));
  out.replicas = orDefault(c.replicas, 1);
  out.nodeSelector = orDefault(c.nodeSelector, linuxNodes());
  out.tolerations = orDefault(c.tolerations, Json::array());
  out.affinity = orNull(c.affinity);
  out.topologySpreadConstraints = orNull(c.topologySpreadConstraints);
  out.pod = pod(c.pod, c.hostNetwork, c.priorityClassName, defaults::kControllerPriorityClass);
  out.strategy = orNull(c.strategy);
  // Several pods run the sidecars: the replicas, or one node plugin pod per node (with
  // SinglePod, one pod in the cluster: nothing to elect).
  const bool le = out.replicas > 1 || (out.inNodePlugin() && !out.singlePod());
  out.sidecars = {
      sidecar(c.provisioner, Component::Provisioner, "csi-provisioner", true,
              defaults::kProvisionerPort, c, le, registry),
      sidecar(c.attacher, Component::Attacher, "csi-attacher", csi.attachRequired,
              defaults::kAttacherPort, c, le, registry),
      sidecar(c.resizer, Component::Resizer, "csi-resizer", false, defaults::kResizerPort, c, le,
              registry),
      sidecar(c.snapshotter, Component::Snapshotter, "csi-snapshotter", false,
              defaults::kSnapshotterPort, c, le, registry),
      sidecar(c.healthMonitor, Component::HealthMonitor, "csi-external-health-monitor-controller",
              false, defaults::kHealthMonitorPort, c, le, registry),
  };
  out.livenessProbe = probe(c.livenessProbe, registry, c.resources);
  out.driver = driver(spec.driver, c.driver, c.resources);
  out.rbacRules = orDefault(c.rbacRules, Json::array());
  out.namespacedRbacRules = orDefault(c.namespacedRbacRules, Json::array());
  out.serviceAccount = orDefault(c.serviceAccount, {});
  out.podTemplatePatch = orNull(c.podTemplatePatch);
  return out;
}

EffectiveRollout rollout(const std::optional<RolloutSpec>& spec) {
  const RolloutSpec r = spec.value_or(RolloutSpec{});
  const RolloutCanary canary = r.canary.value_or(RolloutCanary{});
  EffectiveRollout out;
  out.verified =
      orDefault(r.type, std::string(defaults::kRolloutType)) == defaults::kRolloutVerified;
  out.canaryNodes = orDefault(canary.nodes, defaults::kRolloutCanaryNodes);
  out.canarySelector = orDefault(canary.nodeSelector, {});
  out.batchSize = orDefault(r.batchSize, Json(defaults::kRolloutBatchSize));
  out.soakSeconds = orDefault(r.soakSeconds, defaults::kRolloutSoakSeconds);
  out.gateTimeoutSeconds = orDefault(r.gateTimeoutSeconds, defaults::kRolloutGateTimeoutSeconds);
  out.progressDeadlineSeconds =
      orDefault(r.progressDeadlineSeconds, defaults::kRolloutProgressDeadlineSeconds);
  out.rollBack = orDefault(r.onFailure, std::string(defaults::kRolloutOnFailure)) == "Rollback";
  out.paused = r.paused.value_or(false);
  out.prePullImages = r.prePullImages.value_or(true);
  if (r.smokeVolume) {
    EffectiveRollout::SmokeVolume smoke;
    smoke.storageClassName = r.smokeVolume->storageClassName.value_or("");
    smoke.size = orDefault(r.smokeVolume->size, std::string(defaults::kRolloutSmokeSize));
    if (r.smokeVolume->ephemeral) {
      smoke.volumeAttributes = orDefault(r.smokeVolume->ephemeral->volumeAttributes, {});
      smoke.fsType = r.smokeVolume->ephemeral->fsType.value_or("");
    }
    out.smokeVolume = std::move(smoke);
  }
  return out;
}

} // namespace

const EffectiveSidecar* EffectiveController::sidecar(Component c) const {
  for (const auto& s : sidecars) {
    if (s.component == c) {
      return &s;
    }
  }
  return nullptr;
}

DriverContainer windowsDriverBase(const DriverContainer& driver) {
  DriverContainer out = driver;
  out.securityContext.reset();
  out.command.reset();
  out.volumes.reset();
  out.volumeMounts.reset();
  return out;
}

std::string kubeletDirOf(const DriverDeploymentSpec& spec) {
  std::string dir = spec.node && spec.node->kubeletDir ? *spec.node->kubeletDir
                                                       : std::string(defaults::kKubeletDir);
  while (dir.size() > 1 && dir.back() == '/') {
    dir.pop_back();
  }
  return dir;
}

bool toleratesEveryTaintOf(const Json& tolerations, const std::string& key) {
  if (!tolerations.is_array()) {
    return false;
  }
  return std::any_of(tolerations.begin(), tolerations.end(), [&key](const Json& t) {
    const std::string k = t.is_object() ? t.value("key", std::string()) : std::string();
    return t.is_object() && t.value("operator", std::string()) == "Exists" &&
           t.value("effect", std::string()).empty() && (k.empty() || k == key);
  });
}

std::string driverNamespaceOf(const std::string& name, const std::string& specNamespace) {
  return specNamespace.empty() ? "csi-" + name : specNamespace;
}

Effective resolve(const DriverDeployment& object) {
  const DriverDeploymentSpec& spec = object.spec;
  Effective out;
  out.name = object.name();
  out.uid = object.uid();
  out.driverName = spec.driverName;
  out.namespace_ = driverNamespaceOf(out.name, spec.namespace_.value_or(""));
  out.createNamespace = orDefault(spec.createNamespace, true);
  out.imageRegistry = orDefault(spec.imageRegistry, std::string{});
  while (!out.imageRegistry.empty() && out.imageRegistry.back() == '/') {
    out.imageRegistry.pop_back();
  }
  out.csiDriver = csiDriver(spec.csiDriver);
  out.node = node(spec, out.imageRegistry);
  out.windowsNode = windowsNode(spec, out.imageRegistry);
  if (spec.startupTaint) {
    // The node plugins run where the taint holds everything else: they are what lifts it.
    out.startupTaint = spec.startupTaint->key;
    const Json toleration = {{"key", out.startupTaint}, {"operator", "Exists"}};
    if (!toleratesEveryTaintOf(out.node.tolerations, out.startupTaint)) {
      out.node.tolerations.push_back(toleration);
    }
    if (out.windowsNode && !toleratesEveryTaintOf(out.windowsNode->tolerations, out.startupTaint)) {
      out.windowsNode->tolerations.push_back(toleration);
    }
  }
  if (spec.controller) {
    out.controller = controller(spec, out.csiDriver, out.imageRegistry);
    if (out.controller->singlePod() && !(spec.node && spec.node->tolerations)) {
      // One pod for the cluster: where the scheduler may put any pod, not on every node whatever
      // its taints (a cordoned one included), as a node plugin goes.
      out.node.tolerations = Json::array();
    }
  }
  out.storageClasses = orDefault(spec.storageClasses, {});
  out.configMaps = orDefault(spec.configMaps, {});
  out.services = orDefault(spec.services, {});
  out.volumeSnapshotClasses = orDefault(spec.volumeSnapshotClasses, {});
  if (out.hasControllerWorkload() && spec.controller->podDisruptionBudget) {
    out.podDisruptionBudget = spec.controller->podDisruptionBudget;
  }
  out.secretAccess = orDefault(spec.secretAccess, {});
  out.additionalNamespaces = orDefault(spec.additionalNamespaces, {});
  out.aggregatedClusterRoles = orDefault(spec.aggregatedClusterRoles, {});
  out.objects = orDefault(spec.objects, Json::array());
  out.requiredAPIs = orDefault(spec.requiredAPIs, {});
  out.imagePullSecrets = orDefault(spec.imagePullSecrets, Json::array());
  out.deletionPolicy = orDefault(spec.deletionPolicy, std::string(defaults::kDeletionPolicy));
  out.paused = spec.paused.value_or(false);
  out.rollout = rollout(spec.rollout);
  out.operatorUpdatesAutomatic =
      orDefault(spec.operatorUpdates, std::string(defaults::kOperatorUpdates)) == "Automatic";
  return out;
}

} // namespace csiop::api
