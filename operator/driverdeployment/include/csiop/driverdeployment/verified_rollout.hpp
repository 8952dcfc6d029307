// The verified rollout of the node plugin: a new revision of the DaemonSet's pod template goes to
// canary nodes first, and each canary must pass the gates that prove the driver serves volumes
// there before any other node changes:
//   PodReady     the new plugin pod is Ready;
//   Registered   the kubelet registered the driver again on that node (its CSINode lists the
//                driver, seen appearing after the new pod was created);
//   SmokeVolume  where one is configured, a volume of the driver provisioned, attached, mounted,
//                written and read back on that node (the smoke test reports its own stages).
// Then the other nodes go in batches with a soak between them; a batch must be Ready and
// registered within the progress deadline. A failed gate either rolls the updated nodes back to
// the previous revision (the canaries only, when a canary failed: no other node has changed) or
// holds, as the policy says; the failed template is not tried again until it changes.
//
// The DaemonSet updates OnDelete: the plan names the pods to delete, and the DaemonSet controller
// creates each again from its current template. A node the caller marks unsafe (volumes in use,
// for updateStrategy WhenVolumesUnused) is never replaced; it waits, named.
//
// Pure, with time injected: the caller passes what its caches hold and what it recorded last
// time (status.rollout), and carries out the plan.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <csiop/driverdeployment/node_rollout.hpp>
#include <csiop/driverdeployment/pre_pull.hpp>

namespace csiop::driverdeployment {

using WallTime = std::chrono::system_clock::time_point;

enum class RolloutPhase {
  None,        // nothing rolled out yet
  Canary,      // the canaries run the new revision and are being verified
  Soak,        // the canaries (or the last batch) passed; waiting the soak time
  Batch,       // a batch of nodes runs the new revision; waiting for it to be Ready and registered
  Complete,    // every node runs the revision
  RollingBack, // a gate failed: the updated nodes go back to the previous revision
  RolledBack,  // they have; the failed template waits for a change (or a retry)
  Held,        // a gate failed and the policy says hold: nothing more changes until the spec does
};
std::string_view phaseName(RolloutPhase phase);
std::optional<RolloutPhase> parsePhase(std::string_view name);

struct RolloutPolicy {
  std::int32_t canaryNodes = 1;               // >= 1
  std::int32_t batchSize = 1;                 // nodes per batch, resolved, >= 1
  std::chrono::seconds soak{60};              // after the canaries and after each batch
  std::chrono::seconds gateTimeout{300};      // each gate of a canary
  std::chrono::seconds progressDeadline{600}; // a batch, to Ready and registered
  bool rollBack = true;                       // on a failed gate (false: hold)
  bool smokeVolume = false;                   // the SmokeVolume gate applies
  bool prePull = false; // a node's plugin is replaced once the new images are on it
};

// What the rollout remembers between passes (status.rollout).
struct RolloutRecord {
  std::string revision;  // the DaemonSet revision being rolled out (controller-revision-hash)
  std::string from;      // the revision it replaces
  std::string template_; // the operator's digest of the pod template being rolled out
  RolloutPhase phase = RolloutPhase::None;
  WallTime since{}; // when the phase began
  std::vector<std::string> canaries;
  std::vector<std::string> batch; // the nodes of the current batch
  std::int32_t updated = 0;       // plugin pods at `revision`
  std::int32_t total = 0;         // plugin pods
  // The failure that rolled back or held, kept until the template changes.
  std::string failedTemplate;
  std::string failedGate; // ImagesPulled, PodReady, Registered, SmokeVolume, Batch
  std::string failedNode;
  std::string message;
  // Not the plan's: the csiop.dev/retry-rollout value the caller last honoured.
  std::string retry;
  bool operator==(const RolloutRecord&) const = default;
};

// A node plugin pod as the rollout reads it.
struct PluginPod {
  std::string name;
  std::string uid;
  std::string node;
  std::string revision; // controller-revision-hash
  bool deleting = false;
  bool ready = false;
  WallTime created{};
  WallTime readySince{}; // the Ready condition's lastTransitionTime, when ready
  std::string crashLoop; // a container waits in CrashLoopBackOff: "<container>: <message>"
};

// Whether a node's CSINode lists the driver, and since when the operator saw it there (the
// epoch when it was already listed as the operator's watch began).
struct NodeRegistration {
  bool listed = false;
  WallTime since{};
};

struct SmokeResult {
  enum class State { NotStarted, Running, Passed, Failed };
  State state = State::NotStarted;
  std::string stage;   // the stage that failed (Provision, Attach, Mount, Write, Read, Cleanup)
  std::string message; // why, from the objects' events; Passed: the stages it went through
};

struct VerifiedRolloutInput {
  WallTime now;
  RolloutPolicy policy;
  RolloutRecord previous;
  std::string currentRevision; // the DaemonSet's newest controller-revision-hash ("": none yet)
  std::string templateDigest;  // the operator's digest of the template it wants applied
  // The DaemonSet controller has seen the DaemonSet's latest spec (its observedGeneration, and
  // the operator's cache shows its last apply): currentRevision is the desired template's.
  bool revisionSettled = false;
  std::vector<PluginPod> pods;
  std::set<std::string> canaryPool;          // the nodes an admin allows as canaries; empty: any
  std::map<std::string, std::string> unsafe; // node -> why it may not be replaced now
  std::map<std::string, NodeRegistration> registration; // by node
  std::map<std::string, SmokeResult> smoke;             // by canary node
  // policy.prePull: whether the new revision's images are on each node (pre_pull.hpp); a node
  // absent has had none pulled yet.
  std::map<std::string, PrePullResult> images;
};

struct RolloutEvent {
  bool warning = false;
  std::string reason; // RolloutStarted, CanaryPassed, BatchStarted, RolloutComplete,
                      // RolloutFailed, RolledBack
  std::string message;
};

struct VerifiedRolloutPlan {
  RolloutRecord record;
  std::vector<Replacement> replace; // plugin pods to delete now
  std::vector<std::string> smokeOn; // canary nodes whose smoke test must run (start if absent)
  // policy.prePull: nodes whose plugin is to be replaced once the new images are pulled there
  // (start a pre-pull if there is none).
  std::vector<std::string> prePullOn;
  bool removeSmoke = false; // delete every smoke object of the DriverDeployment
  // Apply the template of this revision to the DaemonSet instead of the desired one (a rollback).
  std::optional<std::string> revertTo;
  std::vector<NodeWait> waiting; // sorted by node
  std::vector<RolloutEvent> events;
};

VerifiedRolloutPlan planVerifiedRollout(const VerifiedRolloutInput& input);

// Whether the DaemonSet should carry the previous revision's template rather than the desired
// one: the desired template is the one that failed, and it has been rolled back (or is being).
bool keepPreviousTemplate(const RolloutRecord& record, const std::string& templateDigest);

} // namespace csiop::driverdeployment
