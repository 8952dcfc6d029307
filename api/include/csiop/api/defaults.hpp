// Defaulting, in one place: a DriverDeployment as the user wrote it becomes an
// Effective spec in which every choice is made. The renderer reads only this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <csiop/api/images.hpp>
#include <csiop/api/types.hpp>

namespace csiop::api::defaults {

inline constexpr const char* kKubeletDir = "/var/lib/kubelet";
inline constexpr const char* kWindowsKubeletDir = "C:\\var\\lib\\kubelet";
inline constexpr const char* kNodePriorityClass = "system-node-critical";
inline constexpr const char* kControllerPriorityClass = "system-cluster-critical";
inline constexpr const char* kPullPolicy = "IfNotPresent";
inline constexpr const char* kDriverContainerName = "csi-driver";
inline constexpr const char* kFsGroupPolicy = "ReadWriteOnceWithFSType";
inline constexpr const char* kDeletionPolicy = "Delete";
inline constexpr const char* kOperatorUpdates = "Manual";
// spec.rollout: see docs/how-to/rollouts.md for why these are the defaults.
inline constexpr const char* kRolloutVerified = "Verified";
inline constexpr const char* kRolloutUnverified = "Unverified";
inline constexpr const char* kRolloutType = "Unverified";
inline constexpr std::int32_t kRolloutCanaryNodes = 1;
inline constexpr const char* kRolloutBatchSize = "25%";
inline constexpr std::int64_t kRolloutSoakSeconds = 60;
inline constexpr std::int64_t kRolloutGateTimeoutSeconds = 300;
inline constexpr std::int64_t kRolloutProgressDeadlineSeconds = 600;
inline constexpr const char* kRolloutOnFailure = "Rollback";
inline constexpr std::int64_t kRolloutMaxSoakSeconds = 604'800;    // a week
inline constexpr std::int64_t kRolloutMaxDeadlineSeconds = 86'400; // a day
// The smoke volume's claim: 1Gi, the smallest size many block and cloud drivers provision.
inline constexpr const char* kRolloutSmokeSize = "1Gi";
inline constexpr const char* kControllerKind = "Deployment";
// spec.controller.placement: the sidecars run in a controller workload of their own, in the
// node plugin's pods beside its driver process, or in the one pod of a node plugin that runs on
// one node only (a StatefulSet of one replica instead of a DaemonSet).
inline constexpr const char* kPlacementWorkload = "Workload";
inline constexpr const char* kPlacementNodePlugin = "NodePlugin";
inline constexpr const char* kPlacementSinglePod = "SinglePod";
inline constexpr std::int32_t kRegistrarPort = 9809;
inline constexpr std::int32_t kLivenessPort = 9808;
inline constexpr std::int32_t kProvisionerPort = 8080;
inline constexpr std::int32_t kAttacherPort = 8081;
inline constexpr std::int32_t kResizerPort = 8082;
inline constexpr std::int32_t kSnapshotterPort = 8083;
inline constexpr std::int32_t kHealthMonitorPort = 8084;

// Requests given to a sidecar when neither it nor its pod names resources.
Json sidecarResources();
// The securityContext of every kubernetes-csi sidecar that names none: no privilege, no
// capability, a read-only root filesystem (as the vendors' own manifests run them; the
// sidecars write only to their mounted sockets).
Json sidecarSecurityContext();
// Node plugins run on every node unless told otherwise.
Json nodeTolerations();

} // namespace csiop::api::defaults

namespace csiop::api {

// A sidecar's HTTP endpoint (its --http-endpoint): none, or host:port.
struct HttpEndpoint {
  bool enabled = false;
  std::string host; // "": every interface
  std::int32_t port = 0;

  // The --http-endpoint value, e.g. ":9809" or "localhost:29653".
  [[nodiscard]] std::string flag() const;
  // Bound to the loopback interface: reachable from outside the pod only with hostNetwork.
  [[nodiscard]] bool loopback() const;
};

// `--http-endpoint` as written ("", ":8080", "localhost:8080", "[::1]:8080"); nullopt if it
// is neither empty nor HOST:PORT with a port from 1 to 65535.
std::optional<HttpEndpoint> parseHttpEndpoint(const std::string& text);

struct EffectiveContainer {
  std::string image;
  std::string imagePullPolicy;
  std::optional<std::vector<std::string>> command;
  std::vector<std::string> extraArgs;
  Json env = Json::array();
  Json resources;       // null: none
  Json securityContext; // the sidecar default unless the user gave one
  Json lifecycle;       // null: none
};

// The livenessProbe of a sidecar on its own endpoint.
struct EffectiveSidecarProbe {
  bool enabled = true;
  std::int32_t initialDelaySeconds = 0;
  std::int32_t timeoutSeconds = 0;
  std::int32_t periodSeconds = 0;
  std::int32_t failureThreshold = 0;
};

namespace defaults {
// The registrar's livenessProbe on /healthz: after 5 s, every 10 s, 5 s timeout, 3 failures.
EffectiveSidecarProbe registrarProbe();
} // namespace defaults

// Pod-level settings of the node plugin or the controller pod.
struct EffectivePod {
  bool hostNetwork = false;
  bool hostPID = false;
  std::string dnsPolicy; // "": the server's default (ClusterFirst)
  Json securityContext;  // null: none
  std::optional<std::int64_t> terminationGracePeriodSeconds;
  std::string priorityClassName; // "": none
  Json initContainers = Json::array();
  Json extraContainers = Json::array();
  StringMap labels;      // added to the pod template's
  StringMap annotations; // added to the pod template's
};

struct EffectiveDriver {
  std::string name; // of the container
  std::string image;
  std::string imagePullPolicy;
  std::optional<std::vector<std::string>> command;
  std::vector<std::string> args;
  Json env = Json::array();
  Json resources; // null: none
  Json ports = Json::array();
  Json volumes = Json::array();
  Json volumeMounts = Json::array();
  Json securityContext; // null: privileged only
  Json readinessProbe;  // null: none
  Json startupProbe;    // null: none
  Json lifecycle;       // null: none
};

struct EffectiveLeaderElection {
  bool enabled = false;
  std::optional<std::string> leaseDuration;
  std::optional<std::string> renewDeadline;
  std::optional<std::string> retryPeriod;
};

struct EffectiveSidecar {
  Component component = Component::Provisioner;
  const char* name = ""; // container name, e.g. "csi-provisioner"
  bool enabled = false;
  EffectiveContainer container;
  EffectiveLeaderElection leaderElection;
  HttpEndpoint http;
  EffectiveSidecarProbe probe; // on /healthz/leader-election, with leader election
};

struct EffectiveProbe {
  bool enabled = true;
  EffectiveContainer container;
  HttpEndpoint http;
  // The driver container's livenessProbe on that endpoint.
  std::int32_t initialDelaySeconds = 10;
  std::int32_t timeoutSeconds = 3;
  std::int32_t periodSeconds = 10;
  std::int32_t failureThreshold = 5;
};

struct EffectiveNodeProvisioner {
  EffectiveContainer container;
  HttpEndpoint http; // off unless asked for
  bool immediateBinding = true;
  std::optional<std::string> baseDelay;
  std::optional<std::string> maxDelay;
};

// What every node plugin has, on Linux and Windows nodes alike.
struct EffectiveNodePlugin {
  std::string kubeletDir; // without a trailing separator
  Json updateStrategy;    // null: server default
  StringMap nodeSelector;
  Json tolerations;
  Json affinity; // null: none
  EffectivePod pod;
  EffectiveContainer registrar;
  HttpEndpoint registrarHttp;
  EffectiveSidecarProbe registrarProbe;
  EffectiveProbe livenessProbe;
  EffectiveDriver driver;
  Json podTemplatePatch; // null: none
};

// The node plugin of Linux nodes (spec.node).
struct EffectiveNode : EffectiveNodePlugin {
  std::optional<EffectiveNodeProvisioner> provisioner; // enabled only
  Json rbacRules = Json::array();                      // a ClusterRole
  Json namespacedRbacRules = Json::array();            // a Role in the driver's namespace
  ServiceAccountSettings serviceAccount;
};

// The Windows node plugin (spec.windowsNode, enabled).
struct EffectiveWindowsNode : EffectiveNodePlugin {
  bool hostProcess = false;
  std::vector<std::string> csiProxyPipes;
};

struct EffectiveController {
  std::string placement; // Workload | NodePlugin | SinglePod
  std::string kind;      // of the workload, with placement Workload
  std::int32_t replicas = 1;
  StringMap nodeSelector;
  Json tolerations = Json::array();
  Json affinity;                  // null: the default anti-affinity when replicas > 1
  Json topologySpreadConstraints; // null: none
  EffectivePod pod;
  Json strategy; // null: Recreate without leader election, else the server's default
  std::vector<EffectiveSidecar>
      sidecars; // provisioner, attacher, resizer, snapshotter, healthMonitor
  EffectiveProbe livenessProbe;
  EffectiveDriver driver;
  Json rbacRules = Json::array();
  Json namespacedRbacRules = Json::array();
  ServiceAccountSettings serviceAccount;
  Json podTemplatePatch;

  [[nodiscard]] const EffectiveSidecar* sidecar(Component c) const;
  // The sidecars run in the node plugin's pods, on its driver's socket: there is no
  // controller workload, ServiceAccount or driver container of their own (NodePlugin, SinglePod).
  [[nodiscard]] bool inNodePlugin() const {
    return placement == defaults::kPlacementNodePlugin || singlePod();
  }
  // The node plugin is one pod on one node, with the sidecars: no DaemonSet.
  [[nodiscard]] bool singlePod() const { return placement == defaults::kPlacementSinglePod; }
};

struct EffectiveCSIDriver {
  bool attachRequired = true;
  bool podInfoOnMount = false;
  std::vector<std::string> volumeLifecycleModes;
  bool storageCapacity = false;
  std::string fsGroupPolicy;
  bool requiresRepublish = false;
  std::optional<std::vector<TokenRequest>> tokenRequests;
  std::optional<bool> seLinuxMount;
  std::optional<std::int64_t> nodeAllocatableUpdatePeriodSeconds;
  std::optional<bool> serviceAccountTokenInSecrets;
  std::optional<bool> preventPodSchedulingIfMissing;
};

// spec.rollout, resolved.
struct EffectiveRollout {
  bool verified = false;
  std::int32_t canaryNodes = defaults::kRolloutCanaryNodes;
  StringMap canarySelector; // empty: any node
  Json batchSize;           // an integer or a percentage, resolved against the nodes
  std::int64_t soakSeconds = defaults::kRolloutSoakSeconds;
  std::int64_t gateTimeoutSeconds = defaults::kRolloutGateTimeoutSeconds;
  std::int64_t progressDeadlineSeconds = defaults::kRolloutProgressDeadlineSeconds;
  bool rollBack = true; // onFailure Rollback (false: Hold)
  bool paused = false;
  // spec.rollout.smokeVolume: a claim of storageClassName (size), or an ephemeral inline volume.
  struct SmokeVolume {
    std::string storageClassName; // empty: ephemeral
    std::string size = defaults::kRolloutSmokeSize;
    StringMap volumeAttributes;
    std::string fsType;
  };
  std::optional<SmokeVolume> smokeVolume;
  bool prePullImages = true;
};

struct Effective {
  std::string name; // metadata.name
  std::string uid;  // metadata.uid, empty outside a cluster
  std::string driverName;
  std::string namespace_;
  bool createNamespace = true;
  EffectiveCSIDriver csiDriver;
  EffectiveNode node;
  std::optional<EffectiveWindowsNode> windowsNode;
  std::optional<EffectiveController> controller;
  std::vector<StorageClassSpec> storageClasses;
  // Companion objects, as written (render fills in what they leave out).
  std::vector<ConfigMapSpec> configMaps;
  std::vector<ServiceSpec> services;
  std::vector<VolumeSnapshotClassSpec> volumeSnapshotClasses;
  std::optional<PodDisruptionBudgetSpec> podDisruptionBudget; // of the controller workload
  std::vector<SecretAccess> secretAccess;
  std::vector<AdditionalNamespace> additionalNamespaces;
  std::vector<AggregatedClusterRole> aggregatedClusterRoles;
  Json objects = Json::array();
  std::vector<std::string> requiredAPIs;
  Json imagePullSecrets = Json::array();
  std::string imageRegistry; // empty: default
  std::string deletionPolicy;
  bool paused = false;
  EffectiveRollout rollout;
  bool operatorUpdatesAutomatic = false; // spec.operatorUpdates: Manual by default
  std::string startupTaint;              // spec.startupTaint.key ("": none)

  // A controller Deployment or StatefulSet is rendered (spec.controller with placement Workload).
  [[nodiscard]] bool hasControllerWorkload() const {
    return controller && !controller->inNodePlugin();
  }
  // spec.controller.placement SinglePod: the node plugin <name>-node is a StatefulSet of one
  // replica, not a DaemonSet.
  [[nodiscard]] bool singlePod() const { return controller && controller->singlePod(); }
  // The kind of the node plugin's workload <name>-node.
  [[nodiscard]] const char* nodeWorkloadKind() const {
    return singlePod() ? "StatefulSet" : "DaemonSet";
  }
};

// The kubelet's root directory the node plugin mounts from: spec.node.kubeletDir or the
// default, without trailing slashes ("/" stays "/").
std::string kubeletDirOf(const DriverDeploymentSpec& spec);

// Whether `tolerations` ([]core/v1.Toleration) tolerate every taint of `key` (any value, any
// effect): a toleration of operator Exists with no effect, and no key or that key.
bool toleratesEveryTaintOf(const Json& tolerations, const std::string& key);

// The namespace of the DriverDeployment `name`'s workloads: spec.namespace, else "csi-<name>".
std::string driverNamespaceOf(const std::string& name, const std::string& specNamespace);

// What the Windows node plugin's driver container takes from spec.driver: all but the fields of
// the Linux pod (securityContext, command, volumes, volumeMounts), which name Linux paths,
// privileges and binaries; spec.windowsNode.driver gives its own.
DriverContainer windowsDriverBase(const DriverContainer& driver);

// Pure: fills every default. Assumes nothing about validity beyond types; call
// validate() first to reject bad input with good messages.
Effective resolve(const DriverDeployment& object);

} // namespace csiop::api
