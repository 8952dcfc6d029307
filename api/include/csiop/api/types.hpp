// DriverDeployment (csiop.dev/v1alpha1): the C++ model of the custom resource.
//
// Every member is declared once, together with its JSON name, in a `fields`
// member template. The codec, the CRD consistency test and the API reference
// all walk that list, so a field cannot be added to one and forgotten in another.
//
// Conventions:
//  * std::optional<T> marks a field the user may leave out; "absent" and "set to
//    the zero value" stay distinguishable so that a decode/encode round trip is
//    lossless and defaulting knows what the user really said.
//  * Embedded Kubernetes types that the operator only passes through (env,
//    resources, tolerations, affinity, volumes, ...) are kept as JSON. They are
//    checked where a mistake would only surface later as a failed rollout.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace csiop::api {

using Json = nlohmann::ordered_json;
using StringMap = std::map<std::string, std::string>;

inline constexpr const char* kGroup = "csiop.dev";
inline constexpr const char* kVersion = "v1alpha1";
inline constexpr const char* kApiVersion = "csiop.dev/v1alpha1";
inline constexpr const char* kKind = "DriverDeployment";
inline constexpr const char* kPlural = "driverdeployments";

// storage.k8s.io/v1 TokenRequest.
struct TokenRequest {
  std::string audience;
  std::optional<std::int64_t> expirationSeconds;

  template <class V> void fields(V&& v) {
    v("audience", audience);
    v("expirationSeconds", expirationSeconds);
  }
};

// Every storage.k8s.io/v1 CSIDriverSpec field (Kubernetes 1.36).
struct CSIDriverSpec {
  std::optional<bool> attachRequired;
  std::optional<bool> podInfoOnMount;
  std::optional<std::vector<std::string>> volumeLifecycleModes;
  std::optional<bool> storageCapacity;
  std::optional<std::string> fsGroupPolicy;
  std::optional<std::vector<TokenRequest>> tokenRequests;
  std::optional<bool> requiresRepublish;
  std::optional<bool> seLinuxMount;
  std::optional<std::int64_t> nodeAllocatableUpdatePeriodSeconds;
  std::optional<bool> serviceAccountTokenInSecrets;
  std::optional<bool> preventPodSchedulingIfMissing;

  template <class V> void fields(V&& v) {
    v("attachRequired", attachRequired);
    v("podInfoOnMount", podInfoOnMount);
    v("volumeLifecycleModes", volumeLifecycleModes);
    v("storageCapacity", storageCapacity);
    v("fsGroupPolicy", fsGroupPolicy);
    v("tokenRequests", tokenRequests);
    v("requiresRepublish", requiresRepublish);
    v("seLinuxMount", seLinuxMount);
    v("nodeAllocatableUpdatePeriodSeconds", nodeAllocatableUpdatePeriodSeconds);
    v("serviceAccountTokenInSecrets", serviceAccountTokenInSecrets);
    v("preventPodSchedulingIfMissing", preventPodSchedulingIfMissing);
  }
};

// The CSI driver container. `spec.driver` is the base for both the node and the
// controller pod; `spec.node.driver` and `spec.controller.driver` override it
// field by field (a field set in the override replaces the base's).
struct DriverContainer {
  std::optional<std::string> name; // the container's; default csi-driver
  std::optional<std::string> image;
  std::optional<std::string> imagePullPolicy;
  std::optional<std::vector<std::string>> command;
  std::optional<std::vector<std::string>> args;
  std::optional<Json> env;             // []core/v1.EnvVar
  std::optional<Json> resources;       // core/v1.ResourceRequirements
  std::optional<Json> ports;           // []core/v1.ContainerPort
  std::optional<Json> volumes;         // []core/v1.Volume, added to the pod
  std::optional<Json> volumeMounts;    // []core/v1.VolumeMount
  std::optional<Json> securityContext; // core/v1.SecurityContext
  std::optional<Json> readinessProbe;  // core/v1.Probe
  std::optional<Json> startupProbe;    // core/v1.Probe
  std::optional<Json> lifecycle;       // core/v1.Lifecycle (preStop, postStart)

  template <class V> void fields(V&& v) {
    v("name", name);
    v("image", image);
    v("imagePullPolicy", imagePullPolicy);
    v("command", command);
    v("args", args);
    v("env", env);
    v("resources", resources);
    v("ports", ports);
    v("volumes", volumes);
    v("volumeMounts", volumeMounts);
    v("securityContext", securityContext);
    v("readinessProbe", readinessProbe);
    v("startupProbe", startupProbe);
    v("lifecycle", lifecycle);
  }
};

// Leader election of the controller sidecars (client-go lease timings, Go
// duration strings such as "15s").
struct LeaderElection {
  std::optional<bool> enabled;
  std::optional<std::string> leaseDuration;
  std::optional<std::string> renewDeadline;
  std::optional<std::string> retryPeriod;

  template <class V> void fields(V&& v) {
    v("enabled", enabled);
    v("leaseDuration", leaseDuration);
    v("renewDeadline", renewDeadline);
    v("retryPeriod", retryPeriod);
  }
};

// Settings every kubernetes-csi sidecar container shares. Its fields appear
// inline in the JSON of the structs that embed it.
struct ContainerSettings {
  std::optional<std::string> image;
  std::optional<std::string> imagePullPolicy;
  std::optional<std::vector<std::string>> command; // the image's entrypoint otherwise
  std::optional<std::vector<std::string>> args;    // appended after the generated args
  std::optional<Json> env;                         // []core/v1.EnvVar
  std::optional<Json> resources;
  std::optional<Json> securityContext; // core/v1.SecurityContext; default: unprivileged
  std::optional<Json> lifecycle;       // core/v1.Lifecycle (preStop, postStart)

  template <class V> void fields(V&& v) {
    v("image", image);
    v("imagePullPolicy", imagePullPolicy);
    v("command", command);
    v("args", args);
    v("env", env);
    v("resources", resources);
    v("securityContext", securityContext);
    v("lifecycle", lifecycle);
  }
};

// The livenessProbe of a sidecar on its own HTTP endpoint (the registrar's /healthz, a
// controller sidecar's /healthz/leader-election).
struct SidecarProbe {
  std::optional<bool> enabled; // default true (when the sidecar has an endpoint)
  std::optional<std::int32_t> initialDelaySeconds;
  std::optional<std::int32_t> timeoutSeconds;
  std::optional<std::int32_t> periodSeconds;
  std::optional<std::int32_t> failureThreshold;

  template <class V> void fields(V&& v) {
    v("enabled", enabled);
    v("initialDelaySeconds", initialDelaySeconds);
    v("timeoutSeconds", timeoutSeconds);
    v("periodSeconds", periodSeconds);
    v("failureThreshold", failureThreshold);
  }
};

// The ServiceAccount the operator creates for a pod: the user's labels and annotations on it
// (a cloud's workload identity, e.g. eks.amazonaws.com/role-arn).
struct ServiceAccountSettings {
  std::optional<StringMap> labels;
  std::optional<StringMap> annotations;

  template <class V> void fields(V&& v) {
    v("labels", labels);
    v("annotations", annotations);
  }
};

// A controller sidecar (external-provisioner, -attacher, ...).
struct Sidecar {
  std::optional<bool> enabled;
  ContainerSettings container;
  std::optional<LeaderElection> leaderElection; // overrides spec.controller.leaderElection
  std::optional<std::int32_t> httpPort;         // --http-endpoint=:PORT (metrics, leader health)
  std::optional<std::string> httpEndpoint;      // --http-endpoint as is; "": none
  std::optional<SidecarProbe> livenessProbe;    // on /healthz/leader-election

  template <class V> void fields(V&& v) {
    v("enabled", enabled);
    container.fields(v);
    v("leaderElection", leaderElection);
    v("httpPort", httpPort);
    v("httpEndpoint", httpEndpoint);
    v("livenessProbe", livenessProbe);
  }
};

// The livenessprobe sidecar and the driver container's livenessProbe wired to it.
struct LivenessProbe {
  std::optional<bool> enabled;
  ContainerSettings container;
  std::optional<std::int32_t> port;                // --http-endpoint=:PORT
  std::optional<std::string> httpEndpoint;         // --http-endpoint as is, e.g. "localhost:29653"
  std::optional<std::int32_t> initialDelaySeconds; // of the driver container's livenessProbe
  std::optional<std::int32_t> timeoutSeconds;
  std::optional<std::int32_t> periodSeconds;
  std::optional<std::int32_t> failureThreshold;

  template <class V> void fields(V&& v) {
    v("enabled", enabled);
    container.fields(v);
    v("port", port);
    v("httpEndpoint", httpEndpoint);
    v("initialDelaySeconds", initialDelaySeconds);
    v("timeoutSeconds", timeoutSeconds);
    v("periodSeconds", periodSeconds);
    v("failureThreshold", failureThreshold);
  }
};

// The node-driver-registrar sidecar.
struct Registrar {
  ContainerSettings container;
  std::optional<std::int32_t> httpPort;      // --http-endpoint=:PORT
  std::optional<std::string> httpEndpoint;   // --http-endpoint as is; "": none
  std::optional<SidecarProbe> livenessProbe; // on /healthz

  template <class V> void fields(V&& v) {
    container.fields(v);
    v("httpPort", httpPort);
    v("httpEndpoint", httpEndpoint);
    v("livenessProbe", livenessProbe);
  }
};

// external-provisioner on every node beside the driver (--node-deployment), for drivers of
// node-local storage: each provisions (and, with csiDriver.storageCapacity, publishes the
// capacity of) its own node. No controller is needed for it.
struct NodeProvisioner {
  std::optional<bool> enabled;
  ContainerSettings container;
  std::optional<std::int32_t> httpPort;    // --http-endpoint=:PORT; default: no endpoint
  std::optional<std::string> httpEndpoint; // --http-endpoint as is
  std::optional<bool> immediateBinding;    // --node-deployment-immediate-binding
  std::optional<std::string> baseDelay;    // --node-deployment-base-delay (Go duration)
  std::optional<std::string> maxDelay;     // --node-deployment-max-delay (Go duration)

  template <class V> void fields(V&& v) {
    v("enabled", enabled);
    container.fields(v);
    v("httpPort", httpPort);
    v("httpEndpoint", httpEndpoint);
    v("immediateBinding", immediateBinding);
    v("baseDelay", baseDelay);
    v("maxDelay", maxDelay);
  }
};

// Pod-level fields the node plugin and the controller pods share.
struct PodSettings {
  std::optional<Json> securityContext; // core/v1.PodSecurityContext
  std::optional<bool> hostPID;
  std::optional<std::string> dnsPolicy;
  std::optional<std::int64_t> terminationGracePeriodSeconds;
  std::optional<Json> initContainers;  // []core/v1.Container, before the pod's containers
  std::optional<Json> extraContainers; // []core/v1.Container, after the operator's
  std::optional<StringMap> podLabels;
  std::optional<StringMap> podAnnotations;

  template <class V> void fields(V&& v) {
    v("securityContext", securityContext);
    v("hostPID", hostPID);
    v("dnsPolicy", dnsPolicy);
    v("terminationGracePeriodSeconds", terminationGracePeriodSeconds);
    v("initContainers", initContainers);
    v("extraContainers", extraContainers);
    v("podLabels", podLabels);
    v("podAnnotations", podAnnotations);
  }
};

// What every node plugin DaemonSet has, on Linux and Windows nodes alike.
struct NodePluginSpec {
  std::optional<std::string> kubeletDir;
  std::optional<Json> updateStrategy; // apps/v1.DaemonSetUpdateStrategy
  std::optional<StringMap> nodeSelector;
  std::optional<Json> tolerations; // []core/v1.Toleration
  std::optional<Json> affinity;    // core/v1.Affinity
  std::optional<std::string> priorityClassName;
  std::optional<Json> resources; // default for every container without its own
  PodSettings pod;
  std::optional<Registrar> registrar;
  std::optional<LivenessProbe> livenessProbe;
  std::optional<DriverContainer> driver; // overrides spec.driver field by field
  std::optional<Json> podTemplatePatch;  // strategic-merge patch of the pod template

  // updateStrategy to resources, as both schemas order them.
  template <class V> void workloadFields(V&& v) {
    v("updateStrategy", updateStrategy);
    v("nodeSelector", nodeSelector);
    v("tolerations", tolerations);
    v("affinity", affinity);
    v("priorityClassName", priorityClassName);
    v("resources", resources);
  }
};

// The node plugin DaemonSet.
struct NodeSpec : NodePluginSpec {
  std::optional<bool> hostNetwork;
  std::optional<NodeProvisioner> provisioner;
  std::optional<Json> rbacRules;           // []rbac/v1.PolicyRule for the node driver
  std::optional<Json> namespacedRbacRules; // the same, granted in the driver's namespace only
  std::optional<ServiceAccountSettings> serviceAccount;

  template <class V> void fields(V&& v) {
    v("kubeletDir", kubeletDir);
    workloadFields(v);
    v("hostNetwork", hostNetwork);
    pod.fields(v);
    v("registrar", registrar);
    v("livenessProbe", livenessProbe);
    v("provisioner", provisioner);
    v("driver", driver);
    v("rbacRules", rbacRules);
    v("namespacedRbacRules", namespacedRbacRules);
    v("serviceAccount", serviceAccount);
    v("podTemplatePatch", podTemplatePatch);
  }
};

// The node plugin of Windows nodes: a second DaemonSet of the same driver, for nodes labelled
// kubernetes.io/os=windows. The driver reaches the host through csi-proxy's named pipes, or runs
// as a HostProcess container (hostProcess: true) that sees the host directly. Its kubeletDir
// defaults to C:\var\lib\kubelet; kubernetes.io/os=windows is always added to its nodeSelector.
struct WindowsNodeSpec : NodePluginSpec {
  std::optional<bool> enabled;                           // default true
  std::optional<bool> hostProcess;                       // default false: csi-proxy
  std::optional<std::vector<std::string>> csiProxyPipes; // e.g. filesystem-v1, smb-v1

  template <class V> void fields(V&& v) {
    v("enabled", enabled);
    v("hostProcess", hostProcess);
    v("kubeletDir", kubeletDir);
    v("csiProxyPipes", csiProxyPipes);
    workloadFields(v);
    pod.fields(v);
    v("registrar", registrar);
    v("livenessProbe", livenessProbe);
    v("driver", driver);
    v("podTemplatePatch", podTemplatePatch);
  }
};

// The controller workload's PodDisruptionBudget (policy/v1).
struct PodDisruptionBudgetSpec {
  std::optional<Json> minAvailable;                      // an integer or a percentage
  std::optional<Json> maxUnavailable;                    // an integer or a percentage
  std::optional<std::string> unhealthyPodEvictionPolicy; // IfHealthyBudget | AlwaysAllow

  template <class V> void fields(V&& v) {
    v("minAvailable", minAvailable);
    v("maxUnavailable", maxUnavailable);
    v("unhealthyPodEvictionPolicy", unhealthyPodEvictionPolicy);
  }
};

// The controller side of the driver: its sidecars, and where they run (a Deployment or
// StatefulSet of their own, or the node plugin's pods).
struct ControllerSpec {
  std::optional<std::string> placement; // Workload | NodePlugin | SinglePod
  std::optional<std::string> kind;      // Deployment | StatefulSet
  std::optional<std::int32_t> replicas;
  std::optional<StringMap> nodeSelector;
  std::optional<Json> tolerations;
  std::optional<Json> affinity;
  std::optional<Json> topologySpreadConstraints;
  std::optional<std::string> priorityClassName;
  std::optional<Json> resources;
  std::optional<bool> hostNetwork;
  PodSettings pod;
  std::optional<Json> strategy; // apps/v1 DeploymentStrategy or StatefulSetUpdateStrategy
  std::optional<PodDisruptionBudgetSpec> podDisruptionBudget;
  std::optional<LeaderElection> leaderElection;
  std::optional<Sidecar> provisioner;
  std::optional<Sidecar> attacher;
  std::optional<Sidecar> resizer;
  std::optional<Sidecar> snapshotter;
  std::optional<Sidecar> healthMonitor;
  std::optional<LivenessProbe> livenessProbe;
  std::optional<DriverContainer> driver;
  std::optional<Json> rbacRules;
  std::optional<Json> namespacedRbacRules;
  std::optional<ServiceAccountSettings> serviceAccount;
  std::optional<Json> podTemplatePatch;

  template <class V> void fields(V&& v) {
    v("placement", placement);
    v("kind", kind);
    v("replicas", replicas);
    v("nodeSelector", nodeSelector);
    v("tolerations", tolerations);
    v("affinity", affinity);
    v("topologySpreadConstraints", topologySpreadConstraints);
    v("priorityClassName", priorityClassName);
    v("resources", resources);
    v("hostNetwork", hostNetwork);
    pod.fields(v);
    v("strategy", strategy);
    v("podDisruptionBudget", podDisruptionBudget);
    v("leaderElection", leaderElection);
    v("provisioner", provisioner);
    v("attacher", attacher);
    v("resizer", resizer);
    v("snapshotter", snapshotter);
    v("healthMonitor", healthMonitor);
    v("livenessProbe", livenessProbe);
    v("driver", driver);
    v("rbacRules", rbacRules);
    v("namespacedRbacRules", namespacedRbacRules);
    v("serviceAccount", serviceAccount);
    v("podTemplatePatch", podTemplatePatch);
  }
};

// A StorageClass whose provisioner is the driver.
struct StorageClassSpec {
  std::string name;
  std::optional<StringMap> parameters;
  std::optional<std::string> reclaimPolicy;     // Delete | Retain
  std::optional<std::string> volumeBindingMode; // Immediate | WaitForFirstConsumer
  std::optional<bool> allowVolumeExpansion;
  std::optional<std::vector<std::string>> mountOptions;
  std::optional<Json> allowedTopologies; // []core/v1.TopologySelectorTerm
  std::optional<bool> isDefault;
  std::optional<StringMap> labels;
  std::optional<StringMap> annotations;

  template <class V> void fields(V&& v) {
    v("name", name);
    v("parameters", parameters);
    v("reclaimPolicy", reclaimPolicy);
    v("volumeBindingMode", volumeBindingMode);
    v("allowVolumeExpansion", allowVolumeExpansion);
    v("mountOptions", mountOptions);
    v("allowedTopologies", allowedTopologies);
    v("isDefault", isDefault);
    v("labels", labels);
    v("annotations", annotations);
  }
};

// A ConfigMap in the driver's namespace that the driver's pods mount or read.
struct ConfigMapSpec {
  std::string name;
  std::optional<StringMap> data;
  std::optional<StringMap> binaryData; // base64
  std::optional<StringMap> labels;
  std::optional<StringMap> annotations;

  template <class V> void fields(V&& v) {
    v("name", name);
    v("data", data);
    v("binaryData", binaryData);
    v("labels", labels);
    v("annotations", annotations);
  }
};

// A Service in the driver's namespace in front of the node plugin's or the controller's pods
// (metrics, a driver's own endpoint).
struct ServiceSpec {
  std::string name;
  std::string component;                // Node | Controller: the pods it selects
  std::optional<std::string> type;      // ClusterIP | NodePort | LoadBalancer
  std::optional<std::string> clusterIP; // "None": headless
  std::optional<Json> ports;            // []core/v1.ServicePort, at least one
  std::optional<StringMap> labels;
  std::optional<StringMap> annotations;

  template <class V> void fields(V&& v) {
    v("name", name);
    v("component", component);
    v("type", type);
    v("clusterIP", clusterIP);
    v("ports", ports);
    v("labels", labels);
    v("annotations", annotations);
  }
};

// A VolumeSnapshotClass (snapshot.storage.k8s.io/v1) whose driver is this one.
struct VolumeSnapshotClassSpec {
  std::string name;
  std::optional<std::string> deletionPolicy; // Delete | Retain
  std::optional<StringMap> parameters;
  std::optional<bool> isDefault;
  std::optional<StringMap> labels;
  std::optional<StringMap> annotations;

  template <class V> void fields(V&& v) {
    v("name", name);
    v("deletionPolicy", deletionPolicy);
    v("parameters", parameters);
    v("isDefault", isDefault);
    v("labels", labels);
    v("annotations", annotations);
  }
};

// A ClusterRole for the driver's users, aggregated into Kubernetes' admin, edit or view roles
// (rbac.authorization.k8s.io/aggregate-to-<role>): who may use the driver's own APIs, e.g. create
// a SecretProviderClass in their namespace.
struct AggregatedClusterRole {
  std::string name;
  std::vector<std::string> aggregateTo; // admin | edit | view
  std::optional<Json> rules;            // []rbac/v1.PolicyRule
  std::optional<StringMap> labels;
  std::optional<StringMap> annotations;

  template <class V> void fields(V&& v) {
    v("name", name);
    v("aggregateTo", aggregateTo);
    v("rules", rules);
    v("labels", labels);
    v("annotations", annotations);
  }
};

// Secrets the driver's pods read that no StorageClass of this DriverDeployment names (the
// StorageClasses an admin writes, a driver's own configuration): `get` on them, in one
// namespace.
struct SecretAccess {
  std::optional<std::string> namespace_;                   // default: the driver's namespace
  std::optional<std::vector<std::string>> names;           // absent: any Secret of the namespace
  std::optional<std::vector<std::string>> serviceAccounts; // Controller | Node

  template <class V> void fields(V&& v) {
    v("namespace", namespace_);
    v("names", names);
    v("serviceAccounts", serviceAccounts);
  }
};

// A namespace beside spec.namespace that the driver keeps objects of its own in (OpenEBS LVM
// LocalPV's LVMVolumes in LVM_NAMESPACE): created if missing, never deleted, and the rules the
// driver's pods need there.
struct AdditionalNamespace {
  std::string name;
  std::optional<Json> controllerRbacRules; // a Role there, bound to the controller's account
  std::optional<Json> nodeRbacRules;       // a Role there, bound to the node plugin's account

  template <class V> void fields(V&& v) {
    v("name", name);
    v("controllerRbacRules", controllerRbacRules);
    v("nodeRbacRules", nodeRbacRules);
  }
};

// The canary nodes of a verified rollout: the first `nodes` nodes (by name) that may be updated,
// among those the nodeSelector picks when it is given (a pool the admin chose).
struct RolloutCanary {
  std::optional<std::int32_t> nodes;
  std::optional<StringMap> nodeSelector;

  template <class V> void fields(V&& v) {
    v("nodes", nodes);
    v("nodeSelector", nodeSelector);
  }
};

// A CSI ephemeral inline volume of the driver, for the smoke test of a node-only driver.
struct RolloutSmokeEphemeral {
  std::optional<StringMap> volumeAttributes;
  std::optional<std::string> fsType;

  template <class V> void fields(V&& v) {
    v("volumeAttributes", volumeAttributes);
    v("fsType", fsType);
  }
};

// The volume a canary must provision (where it is a claim), mount, write and read back before
// any other node changes: a claim of one of the driver's StorageClasses, or an inline volume.
struct RolloutSmokeVolume {
  std::optional<std::string> storageClassName;
  std::optional<std::string> size; // a quantity; with storageClassName only
  std::optional<RolloutSmokeEphemeral> ephemeral;

  template <class V> void fields(V&& v) {
    v("storageClassName", storageClassName);
    v("size", size);
    v("ephemeral", ephemeral);
  }
};

// How a changed node plugin reaches the nodes. Verified: the operator replaces the plugin pods
// itself, canary nodes first, each proven to serve the driver again (the new pod Ready, the
// driver registered again in the node's CSINode) before the rest go in batches with a soak
// between them; a failed gate rolls back (or holds). Unverified: the DaemonSet's own
// updateStrategy (or WhenVolumesUnused) rolls it out, as it comes.
struct RolloutSpec {
  std::optional<std::string> type; // Verified | Unverified
  std::optional<RolloutCanary> canary;
  std::optional<Json> batchSize; // an integer or a percentage of the nodes
  std::optional<std::int64_t> soakSeconds;
  std::optional<std::int64_t> gateTimeoutSeconds;
  std::optional<std::int64_t> progressDeadlineSeconds;
  std::optional<std::string> onFailure;          // Rollback | Hold
  std::optional<bool> paused;                    // true: no node changes until false
  std::optional<RolloutSmokeVolume> smokeVolume; // absent: the pod and registration gates only
  // true (default): a node plugin pod the operator replaces goes once the new images are on its
  // node (a short-lived pod pulls them first).
  std::optional<bool> prePullImages;

  template <class V> void fields(V&& v) {
    v("type", type);
    v("canary", canary);
    v("batchSize", batchSize);
    v("soakSeconds", soakSeconds);
    v("gateTimeoutSeconds", gateTimeoutSeconds);
    v("progressDeadlineSeconds", progressDeadlineSeconds);
    v("onFailure", onFailure);
    v("paused", paused);
    v("smokeVolume", smokeVolume);
    v("prePullImages", prePullImages);
  }
};

// Nodes kept from workloads until the driver is registered on them: a taint the admin's nodes
// are created with (the kubelet's --register-with-taints, a node pool's taints). The node plugins
// tolerate it; the operator removes it from a node once the node's CSINode lists the driver, and
// again whenever it comes back while the driver stays registered there.
struct StartupTaintSpec {
  std::string key; // every taint of this key is removed, whatever its value and effect

  template <class V> void fields(V&& v) { v("key", key); }
};

struct DriverDeploymentSpec {
  std::string driverName;
  std::optional<std::string> namespace_;
  std::optional<bool> createNamespace;
  std::optional<CSIDriverSpec> csiDriver;
  DriverContainer driver;
  std::optional<NodeSpec> node;
  std::optional<WindowsNodeSpec> windowsNode; // absent: Linux nodes only
  std::optional<ControllerSpec> controller;   // absent: node-only driver
  std::optional<std::vector<StorageClassSpec>> storageClasses;
  std::optional<Json> imagePullSecrets; // []core/v1.LocalObjectReference
  std::optional<std::string> imageRegistry;
  std::optional<std::string> deletionPolicy; // Delete | Orphan
  std::optional<bool> paused;                // true: the operator writes nothing for it
  std::optional<RolloutSpec> rollout;        // how a changed node plugin reaches the nodes
  // What a change of the workloads that comes from the operator, not from this spec (a new
  // operator's default images, a changed default, a renderer fix), does: Manual (held until an
  // annotation approves it) | Automatic (rolled out like a change of the spec).
  std::optional<std::string> operatorUpdates;
  std::optional<StartupTaintSpec> startupTaint; // absent: no node is held
  std::optional<std::vector<ConfigMapSpec>> configMaps;
  std::optional<std::vector<ServiceSpec>> services;
  std::optional<std::vector<VolumeSnapshotClassSpec>> volumeSnapshotClasses;
  std::optional<std::vector<SecretAccess>> secretAccess;
  std::optional<std::vector<AdditionalNamespace>> additionalNamespaces;
  std::optional<std::vector<AggregatedClusterRole>> aggregatedClusterRoles;
  std::optional<Json> objects; // further namespaced objects of the kinds the operator may create
  std::optional<std::vector<std::string>> requiredAPIs; // "group/version/resource", reported

  template <class V> void fields(V&& v) {
    v("driverName", driverName);
    v("namespace", namespace_);
    v("createNamespace", createNamespace);
    v("csiDriver", csiDriver);
    v("driver", driver);
    v("node", node);
    v("windowsNode", windowsNode);
    v("controller", controller);
    v("storageClasses", storageClasses);
    v("imagePullSecrets", imagePullSecrets);
    v("imageRegistry", imageRegistry);
    v("deletionPolicy", deletionPolicy);
    v("paused", paused);
    v("rollout", rollout);
    v("operatorUpdates", operatorUpdates);
    v("startupTaint", startupTaint);
    v("configMaps", configMaps);
    v("services", services);
    v("volumeSnapshotClasses", volumeSnapshotClasses);
    v("secretAccess", secretAccess);
    v("additionalNamespaces", additionalNamespaces);
    v("aggregatedClusterRoles", aggregatedClusterRoles);
    v("objects", objects);
    v("requiredAPIs", requiredAPIs);
  }
};

// metav1.Condition.
struct Condition {
  std::string type;
  std::string status; // True | False | Unknown
  std::optional<std::int64_t> observedGeneration;
  std::string lastTransitionTime; // RFC 3339
  std::string reason;
  std::string message;

  template <class V> void fields(V&& v) {
    v("type", type);
    v("status", status);
    v("observedGeneration", observedGeneration);
    v("lastTransitionTime", lastTransitionTime);
    v("reason", reason);
    v("message", message);
  }
};

// A node that waits: for its node plugin's update (updateStrategy WhenVolumesUnused, a verified
// rollout), or for the driver's registration there.
struct NodeWaiting {
  std::string node;
  // VolumesInUse, MaxUnavailable, InvalidAnnotation, PullingImages, ImagePullFailed;
  // NotRegistered, NoCSINode, RegistrarRestarting
  std::string reason;
  std::string message;

  template <class V> void fields(V&& v) {
    v("node", node);
    v("reason", reason);
    v("message", message);
  }
};

struct NodesStatus {
  std::optional<std::int32_t> desired;    // nodes the DaemonSet should run on
  std::optional<std::int32_t> ready;      // node plugin pods ready
  std::optional<std::int32_t> registered; // CSINode objects that list the driver
  std::optional<std::int32_t> updated;    // node plugin pods of the current template
  std::optional<std::int32_t> held;       // nodes with spec.startupTaint, the driver not registered
  std::optional<std::vector<NodeWaiting>> waiting; // nodes not updated yet, or not registered

  template <class V> void fields(V&& v) {
    v("desired", desired);
    v("ready", ready);
    v("registered", registered);
    v("updated", updated);
    v("held", held);
    v("waiting", waiting);
  }
};

struct ControllerStatus {
  std::optional<std::int32_t> replicas;
  std::optional<std::int32_t> ready;

  template <class V> void fields(V&& v) {
    v("replicas", replicas);
    v("ready", ready);
  }
};

// A child the operator leaves alone because it carries csiop.dev/unmanaged.
struct UnmanagedObject {
  std::string kind;
  std::optional<std::string> namespace_; // absent for cluster-scoped objects
  std::string name;

  template <class V> void fields(V&& v) {
    v("kind", kind);
    v("namespace", namespace_);
    v("name", name);
  }
};

// A workload (DaemonSet, Deployment, StatefulSet) as the operator last wrote it: the spec's
// generation and the operator that rendered it, and whether this operator holds a change of its
// own to it (spec.operatorUpdates Manual).
struct WorkloadRendering {
  std::string kind;
  std::string name;
  std::optional<std::int64_t> specGeneration; // absent: written before the operator recorded it
  std::optional<std::string> renderedBy;      // the operator's version
  std::optional<bool> held;

  template <class V> void fields(V&& v) {
    v("kind", kind);
    v("name", name);
    v("specGeneration", specGeneration);
    v("renderedBy", renderedBy);
    v("held", held);
  }
};

// The verified rollout of one node plugin DaemonSet, as far as it has come (the operator's
// memory of it between passes).
struct RolloutStatus {
  std::string phase; // None, Canary, Soak, Batch, Complete, RollingBack, RolledBack, Held
  std::optional<std::string>
      revision;                    // the DaemonSet revision rolled out (controller-revision-hash)
  std::optional<std::string> from; // the revision it replaces
  std::optional<std::string> template_; // the operator's digest of that pod template
  std::optional<std::string> since;     // RFC 3339: when the phase began
  std::optional<std::vector<std::string>> canaries;
  std::optional<std::vector<std::string>> batch;
  std::optional<std::int32_t> updated; // plugin pods at revision
  std::optional<std::int32_t> total;   // plugin pods
  std::optional<std::string> failedTemplate;
  std::optional<std::string> failedGate; // PodReady, Registered, SmokeVolume, Batch
  std::optional<std::string> failedNode;
  std::optional<std::string> message;
  std::optional<std::string> retry; // the csiop.dev/retry-rollout value last honoured
  // The gates each canary must pass: PodReady, Registered, and SmokeVolume where configured.
  std::optional<std::vector<std::string>> gates;

  template <class V> void fields(V&& v) {
    v("phase", phase);
    v("revision", revision);
    v("from", from);
    v("template", template_);
    v("since", since);
    v("canaries", canaries);
    v("batch", batch);
    v("updated", updated);
    v("total", total);
    v("failedTemplate", failedTemplate);
    v("failedGate", failedGate);
    v("failedNode", failedNode);
    v("message", message);
    v("retry", retry);
    v("gates", gates);
  }
};

// The verified rollout of the controller workload: a RolloutStatus without nodes (revisions are
// the pods' pod-template-hash or controller-revision-hash; updated and total count replicas).
struct ControllerRolloutStatus {
  std::string phase; // None, Canary, Complete, RollingBack, RolledBack, Held
  std::optional<std::string> revision;
  std::optional<std::string> from;
  std::optional<std::string> template_;
  std::optional<std::string> since;
  std::optional<std::int32_t> updated;
  std::optional<std::int32_t> total;
  std::optional<std::string> failedTemplate;
  std::optional<std::string> failedGate; // Available, SmokeVolume
  std::optional<std::string> message;
  std::optional<std::string> retry;
  std::optional<std::vector<std::string>> gates; // Available, and SmokeVolume where configured

  template <class V> void fields(V&& v) {
    v("phase", phase);
    v("revision", revision);
    v("from", from);
    v("template", template_);
    v("since", since);
    v("updated", updated);
    v("total", total);
    v("failedTemplate", failedTemplate);
    v("failedGate", failedGate);
    v("message", message);
    v("retry", retry);
    v("gates", gates);
  }
};

struct RolloutsStatus {
  std::optional<RolloutStatus> node;
  std::optional<RolloutStatus> windowsNode;
  std::optional<ControllerRolloutStatus> controller;

  template <class V> void fields(V&& v) {
    v("node", node);
    v("windowsNode", windowsNode);
    v("controller", controller);
  }
};

// A volume of the driver that fails (status.volumes.failures): a claim it does not provision, a
// volume it does not attach or detach, a pod whose volume it does not mount.
struct VolumeFailureStatus {
  std::string reason; // ProvisioningFailed | AttachFailed | DetachFailed | MountFailed
  std::string object; // "PersistentVolumeClaim ns/name", "Pod ns/name", ...
  std::optional<std::string> volume; // the PersistentVolume or inline volume
  std::string message;               // the Event's or the VolumeAttachment's words
  std::string lastSeen;              // RFC 3339

  template <class V> void fields(V&& v) {
    v("reason", reason);
    v("object", object);
    v("volume", volume);
    v("message", message);
    v("lastSeen", lastSeen);
  }
};

// The driver's volumes that fail, counted by reason, the newest few named (only while some do).
struct VolumesStatus {
  std::optional<std::int32_t> provisioningFailed;
  std::optional<std::int32_t> attachFailed;
  std::optional<std::int32_t> detachFailed;
  std::optional<std::int32_t> mountFailed;
  std::optional<std::vector<VolumeFailureStatus>> failures;

  template <class V> void fields(V&& v) {
    v("provisioningFailed", provisioningFailed);
    v("attachFailed", attachFailed);
    v("detachFailed", detachFailed);
    v("mountFailed", mountFailed);
    v("failures", failures);
  }
};

struct DriverDeploymentStatus {
  std::optional<std::int64_t> observedGeneration;
  std::optional<std::vector<Condition>> conditions;
  std::optional<NodesStatus> nodes;
  std::optional<ControllerStatus> controller;
  std::optional<VolumesStatus> volumes;
  std::optional<std::vector<UnmanagedObject>> unmanaged;
  std::optional<RolloutsStatus> rollout;
  std::optional<std::vector<WorkloadRendering>> workloads;

  template <class V> void fields(V&& v) {
    v("observedGeneration", observedGeneration);
    v("conditions", conditions);
    v("nodes", nodes);
    v("controller", controller);
    v("volumes", volumes);
    v("rollout", rollout);
    v("workloads", workloads);
    v("unmanaged", unmanaged);
  }
};

// The whole object. metadata is kept verbatim (it is the API server's, and is
// round-tripped untouched); the accessors read what the operator needs.
struct DriverDeployment {
  std::string apiVersion = kApiVersion;
  std::string kind = kKind;
  Json metadata = Json::object();
  DriverDeploymentSpec spec;
  std::optional<DriverDeploymentStatus> status;

  template <class V> void fields(V&& v) {
    v("apiVersion", apiVersion);
    v("kind", kind);
    v("metadata", metadata);
    v("spec", spec);
    v("status", status);
  }

  [[nodiscard]] std::string name() const;
  [[nodiscard]] std::string uid() const;
  [[nodiscard]] std::int64_t generation() const;
};

} // namespace csiop::api
