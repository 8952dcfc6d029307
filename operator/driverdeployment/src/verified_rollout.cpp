#include <csiop/driverdeployment/verified_rollout.hpp>

#include <algorithm>
#include <array>
#include <utility>

namespace csiop::driverdeployment {
namespace {

using std::chrono::seconds;

constexpr std::array<std::pair<RolloutPhase, std::string_view>, 8> kPhases = {{
    {RolloutPhase::None, "None"},
    {RolloutPhase::Canary, "Canary"},
    {RolloutPhase::Soak, "Soak"},
    {RolloutPhase::Batch, "Batch"},
    {RolloutPhase::Complete, "Complete"},
    {RolloutPhase::RollingBack, "RollingBack"},
    {RolloutPhase::RolledBack, "RolledBack"},
    {RolloutPhase::Held, "Held"},
}};

// A listing older than the new pod counts once the pod has been Ready this long: the kubelet
// drops a driver within a second of its registration socket going away, so a listing that
// outlives the new pod's start by this much is the new registration, or one the kubelet kept
// because the old registrar could not remove its socket.
constexpr seconds kRegistrationSettle{15};

std::string secondsText(seconds s) {
  return std::to_string(s.count()) + " s";
}

std::string nodeList(const std::vector<std::string>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size() && i < 5; ++i) {
    out += (i == 0 ? "" : ", ") + nodes[i];
  }
  return nodes.size() > 5 ? out + ", ... (" + std::to_string(nodes.size()) + " nodes)" : out;
}

class Planner {
public:
  explicit Planner(const VerifiedRolloutInput& in) : in_(in) { out_.record = in.previous; }

  VerifiedRolloutPlan plan() {
    if (!in_.currentRevision.empty()) {
      step();
    }
    count();
    std::sort(out_.waiting.begin(), out_.waiting.end(),
              [](const NodeWait& a, const NodeWait& b) { return a.node < b.node; });
    return std::move(out_);
  }

private:
  RolloutRecord& rec() { return out_.record; }

  void step() {
    switch (rec().phase) {
    case RolloutPhase::RollingBack:
      rollBack();
      return;
    case RolloutPhase::RolledBack:
    case RolloutPhase::Held:
      if (in_.templateDigest == rec().failedTemplate) {
        if (rec().phase == RolloutPhase::RolledBack) {
          out_.revertTo = rec().from;
        }
        return; // the failed template waits for a change or a retry
      }
      break;
    case RolloutPhase::Canary:
    case RolloutPhase::Soak:
    case RolloutPhase::Batch:
      if (in_.currentRevision == rec().revision) {
        proceed();
        return;
      }
      break; // a newer revision replaces the one in progress
    case RolloutPhase::None:
    case RolloutPhase::Complete:
      break;
    }
    if (outdated(in_.currentRevision).empty()) {
      // A failure stays shown until another template runs everywhere: one the DaemonSet has
      // taken (an admin who put the previous value back in the spec needs no new revision).
      if ((rec().phase != RolloutPhase::RolledBack && rec().phase != RolloutPhase::Held) ||
          in_.revisionSettled) {
        rec().phase = RolloutPhase::Complete;
        rec().revision = in_.currentRevision;
        rec().template_ = in_.templateDigest;
        rec().batch.clear();
      }
      return;
    }
    start();
  }

  void proceed() {
    switch (rec().phase) {
    case RolloutPhase::Canary:
      canary();
      return;
    case RolloutPhase::Soak:
      if (in_.now >= rec().since + in_.policy.soak) {
        rec().phase = RolloutPhase::Batch;
        rec().since = in_.now;
        rec().batch.clear();
        batch();
      }
      return;
    case RolloutPhase::Batch:
      batch();
      return;
    default:
      return;
    }
  }

  // Pods at another revision than `revision`, not being deleted, sorted by node.
  std::vector<const PluginPod*> outdated(const std::string& revision) const {
    std::vector<const PluginPod*> out;
    for (const PluginPod& pod : in_.pods) {
      if (!pod.deleting && pod.revision != revision) {
        out.push_back(&pod);
      }
    }
    std::sort(out.begin(), out.end(),
              [](const PluginPod* a, const PluginPod* b) { return a->node < b->node; });
    return out;
  }

  // The node's plugin pod that is not being deleted, preferring one at `revision`.
  const PluginPod* podOn(const std::string& node, const std::string& revision) const {
    const PluginPod* found = nullptr;
    for (const PluginPod& pod : in_.pods) {
      if (pod.node == node && !pod.deleting) {
        if (pod.revision == revision) {
          return &pod;
        }
        found = &pod;
      }
    }
    return found;
  }

  const std::string* unsafe(const std::string& node) const {
    const auto it = in_.unsafe.find(node);
    return it == in_.unsafe.end() ? nullptr : &it->second;
  }

  void start() {
    const std::vector<const PluginPod*> old = outdated(in_.currentRevision);
    std::map<std::string, int> revisions;
    for (const PluginPod* pod : old) {
      ++revisions[pod->revision];
    }
    std::string from;
    int most = 0;
    for (const auto& [revision, n] : revisions) {
      if (n > most) {
        from = revision;
        most = n;
      }
    }
    RolloutRecord fresh;
    fresh.revision = in_.currentRevision;
    fresh.from = from;
    fresh.template_ = in_.templateDigest;
    fresh.phase = RolloutPhase::Canary;
    fresh.since = in_.now;
    rec() = std::move(fresh);
    chooseCanaries();
    out_.removeSmoke = true; // a smoke test of an earlier revision has nothing left to prove
    out_.events.push_back(
        {false, "RolloutStarted",
         "rolling out node plugin revision " + rec().revision +
             (from.empty() ? "" : " (from " + from + ")") + " to " + std::to_string(old.size()) +
             " node(s)" +
             (rec().canaries.empty() ? "" : "; canary first: " + nodeList(rec().canaries))});
    canary();
  }

  void chooseCanaries() {
    for (const PluginPod* pod : outdated(in_.currentRevision)) {
      if (static_cast<std::int32_t>(rec().canaries.size()) >= in_.policy.canaryNodes) {
        break;
      }
      const bool inPool = in_.canaryPool.empty() || in_.canaryPool.contains(pod->node);
      if (inPool && unsafe(pod->node) == nullptr) {
        rec().canaries.push_back(pod->node);
      }
    }
  }

  void wait(const std::string& node, std::string reason, std::string message) {
    out_.waiting.push_back({node, std::move(reason), std::move(message)});
  }

  // Replaces `pod` now, or once the new images are on its node (policy.prePull): whether it
  // was, or what the pull says (Pending: waiting on it; Failed: why the images are not there).
  PrePullResult replace(const PluginPod& pod, const std::string& why) {
    if (in_.policy.prePull) {
      const auto it = in_.images.find(pod.node);
      const PrePullResult images = it == in_.images.end() ? PrePullResult{} : it->second;
      if (images.state != PrePullResult::State::Pulled) {
        if (images.state == PrePullResult::State::Pending) {
          out_.prePullOn.push_back(pod.node);
          wait(pod.node, "PullingImages",
               "pulling the new images on the node before its plugin is replaced" +
                   (images.message.empty() ? std::string() : ": " + images.message));
        }
        return images;
      }
    }
    replaceNow(pod, why);
    return {PrePullResult::State::Pulled, ""};
  }
  void replaceNow(const PluginPod& pod, const std::string& why) {
    out_.replace.push_back({pod.name, pod.uid, pod.node, why});
  }

  // Every outdated node waits, with why: for the canaries to be chosen.
  void waitForCanaryNodes() {
    for (const PluginPod* pod : outdated(in_.currentRevision)) {
      if (const std::string* why = unsafe(pod->node)) {
        wait(pod->node, "VolumesInUse", *why);
      } else if (!in_.canaryPool.empty() && !in_.canaryPool.contains(pod->node)) {
        wait(pod->node, "NotACanaryNode",
             "waiting for a canary node (none of the canary selector's nodes can be updated now)");
      }
    }
  }

  enum class Verdict { Pending, Passed, Failed };

  // Whether the kubelet has registered the driver on the node of `pod` since it started.
  bool registered(const PluginPod& pod) const {
    const auto it = in_.registration.find(pod.node);
    if (it == in_.registration.end() || !it->second.listed) {
      return false;
    }
    return it->second.since >= pod.created || in_.now >= pod.readySince + kRegistrationSettle;
  }

  WallTime registeredSince(const PluginPod& pod) const {
    const auto it = in_.registration.find(pod.node);
    const WallTime since = it == in_.registration.end() ? WallTime{} : it->second.since;
    return std::max(since, pod.readySince);
  }

  Verdict canaryGates(const std::string& node) {
    const PluginPod* pod = podOn(node, rec().revision);
    const seconds timeout = in_.policy.gateTimeout;
    if (pod == nullptr || pod->revision != rec().revision) {
      if (pod != nullptr) {
        if (const std::string* why = unsafe(node)) {
          wait(node, "VolumesInUse", *why);
          return Verdict::Pending; // no deadline while the node may not be touched
        }
        const PrePullResult images =
            replace(*pod, "canary of node plugin revision " + rec().revision);
        if (images.state == PrePullResult::State::Failed) {
          return fail("ImagesPulled", node, images.message);
        }
        if (images.state == PrePullResult::State::Pending) {
          // The pre-pull pod's deadline (the same timeout from its creation) ends it too; this
          // keeps the last pull error, which the kubelet drops when the pod ends.
          if (images.started != WallTime{} && in_.now >= images.started + timeout) {
            return fail("ImagesPulled", node,
                        "the new images were not pulled within " + secondsText(timeout) +
                            (images.message.empty() ? std::string() : ": " + images.message));
          }
          return Verdict::Pending;
        }
      }
      if (in_.now >= rec().since + timeout && pod == nullptr) {
        return fail("PodReady", node,
                    "no node plugin pod of revision " + rec().revision + " on the node within " +
                        secondsText(timeout));
      }
      wait(node, "CanaryPodReady", "waiting for the new node plugin pod");
      return Verdict::Pending;
    }
    if (!pod->ready) {
      if (!pod->crashLoop.empty()) {
        return fail("PodReady", node, "the new node plugin pod crash-loops: " + pod->crashLoop);
      }
      if (in_.now >= pod->created + timeout) {
        return fail("PodReady", node,
                    "the new node plugin pod " + pod->name + " was not Ready within " +
                        secondsText(timeout));
      }
      wait(node, "CanaryPodReady", "waiting for the new node plugin pod " + pod->name);
      return Verdict::Pending;
    }
    if (!registered(*pod)) {
      if (in_.now >= pod->readySince + timeout) {
        return fail("Registered", node,
                    "the kubelet did not register the driver on the node within " +
                        secondsText(timeout) + " of the new node plugin pod " + pod->name +
                        " being Ready (its CSINode does not list it)");
      }
      wait(node, "CanaryRegistered", "waiting for the kubelet to register the driver again");
      return Verdict::Pending;
    }
    if (!in_.policy.smokeVolume) {
      return Verdict::Passed;
    }
    const auto smoke = in_.smoke.find(node);
    const SmokeResult none;
    const SmokeResult& result = smoke == in_.smoke.end() ? none : smoke->second;
    switch (result.state) {
    case SmokeResult::State::Passed:
      return Verdict::Passed;
    case SmokeResult::State::Failed:
      return fail("SmokeVolume", node,
                  result.stage + (result.stage.empty() ? "" : ": ") + result.message);
    case SmokeResult::State::NotStarted:
    case SmokeResult::State::Running:
      break;
    }
    if (in_.now >= registeredSince(*pod) + timeout) {
      return fail("SmokeVolume", node,
                  (result.stage.empty() ? std::string() : result.stage + ": ") +
                      "the smoke volume did not pass within " + secondsText(timeout) +
                      (result.message.empty() ? std::string() : ": " + result.message));
    }
    out_.smokeOn.push_back(node);
    wait(node, "CanarySmokeVolume",
         "waiting for the smoke volume on the node" +
             (result.stage.empty() ? std::string() : " (" + result.stage + ")") +
             (result.message.empty() ? std::string() : ": " + result.message));
    return Verdict::Pending;
  }

  void canary() {
    if (rec().canaries.empty()) {
      chooseCanaries();
      if (rec().canaries.empty()) {
        waitForCanaryNodes();
        return;
      }
    }
    bool pending = false;
    for (const std::string& node : rec().canaries) {
      const Verdict verdict = canaryGates(node);
      if (verdict == Verdict::Failed) {
        return;
      }
      pending |= verdict == Verdict::Pending;
    }
    if (pending) {
      return;
    }
    out_.removeSmoke = true;
    out_.smokeOn.clear();
    std::string smoke;
    for (const std::string& node : rec().canaries) {
      const auto it = in_.smoke.find(node);
      if (in_.policy.smokeVolume && it != in_.smoke.end() && !it->second.message.empty()) {
        smoke += "; the smoke volume on " + node + ": " + it->second.message;
      }
    }
    out_.events.push_back({false, "CanaryPassed",
                           "node plugin revision " + rec().revision + " passed every gate on " +
                               nodeList(rec().canaries) + smoke});
    afterStep();
  }

  // After the canaries or a batch passed: the rest soaks, or the rollout is complete.
  void afterStep() {
    rec().batch.clear();
    rec().since = in_.now;
    if (outdated(rec().revision).empty()) {
      rec().phase = RolloutPhase::Complete;
      out_.events.push_back(
          {false, "RolloutComplete", "every node runs node plugin revision " + rec().revision});
      return;
    }
    rec().phase = RolloutPhase::Soak;
  }

  void batch() {
    if (rec().batch.empty()) {
      for (const PluginPod* pod : outdated(rec().revision)) {
        if (static_cast<std::int32_t>(rec().batch.size()) >= in_.policy.batchSize) {
          break;
        }
        if (const std::string* why = unsafe(pod->node)) {
          wait(pod->node, "VolumesInUse", *why);
        } else {
          rec().batch.push_back(pod->node);
        }
      }
      if (rec().batch.empty()) {
        if (outdated(rec().revision).empty()) {
          afterStep();
        }
        return;
      }
      rec().since = in_.now;
      out_.events.push_back(
          {false, "BatchStarted", "updating the node plugin on " + nodeList(rec().batch)});
    }
    std::string late;
    for (const std::string& node : rec().batch) {
      const PluginPod* pod = podOn(node, rec().revision);
      if (pod != nullptr && pod->revision != rec().revision) {
        if (const std::string* why = unsafe(node)) {
          wait(node, "VolumesInUse", *why);
          continue;
        }
        const PrePullResult images =
            replace(*pod, "batch of node plugin revision " + rec().revision);
        if (images.state == PrePullResult::State::Failed) {
          fail("Batch", node, "the new images are not on the node: " + images.message);
          return;
        }
        if (images.state == PrePullResult::State::Pending) {
          late = late.empty() ? node : late;
          continue;
        }
      }
      if (pod != nullptr && pod->revision == rec().revision && !pod->crashLoop.empty()) {
        fail("Batch", node, "the new node plugin pod crash-loops: " + pod->crashLoop);
        return;
      }
      if (pod == nullptr || pod->revision != rec().revision || !pod->ready || !registered(*pod)) {
        late = late.empty() ? node : late;
        wait(node, "BatchProgress",
             "waiting for the new node plugin pod to be Ready and registered");
      }
    }
    if (late.empty()) {
      afterStep();
    } else if (in_.now >= rec().since + in_.policy.progressDeadline) {
      fail("Batch", late,
           "the new node plugin pod was not Ready and registered within " +
               secondsText(in_.policy.progressDeadline));
    }
  }

  Verdict fail(const std::string& gate, const std::string& node, const std::string& message) {
    rec().failedTemplate = rec().template_;
    rec().failedGate = gate;
    rec().failedNode = node;
    rec().message = message;
    rec().since = in_.now;
    out_.removeSmoke = true;
    out_.smokeOn.clear();
    const bool back = in_.policy.rollBack && !rec().from.empty();
    out_.events.push_back({true, "RolloutFailed",
                           "node plugin revision " + rec().revision + " failed gate " + gate +
                               " on node " + node + ": " + message +
                               (back ? "; rolling back to revision " + rec().from
                                     : "; holding: no other node changes")});
    if (back) {
      rec().phase = RolloutPhase::RollingBack;
      rollBack();
    } else {
      rec().phase = RolloutPhase::Held;
    }
    return Verdict::Failed;
  }

  void rollBack() {
    out_.revertTo = rec().from;
    if (in_.currentRevision != rec().from) {
      return; // the DaemonSet does not carry the previous template yet
    }
    std::int32_t busy = 0;
    std::vector<const PluginPod*> back;
    for (const PluginPod& pod : in_.pods) {
      // Unavailable already: a pod going, or one back at the previous revision and not Ready
      // yet. A pod of the failed revision that is not Ready is what goes back first.
      if (pod.deleting || (!pod.ready && pod.revision == rec().from)) {
        ++busy;
      }
      if (!pod.deleting && pod.revision != rec().from) {
        back.push_back(&pod);
      }
    }
    if (back.empty()) {
      rec().phase = RolloutPhase::RolledBack;
      rec().since = in_.now;
      out_.events.push_back({true, "RolledBack",
                             "the node plugin is back at revision " + rec().from + "; revision " +
                                 rec().revision +
                                 " is not tried again until the DriverDeployment changes"});
      return;
    }
    std::sort(back.begin(), back.end(), [](const PluginPod* a, const PluginPod* b) {
      return std::pair(a->ready, a->node) < std::pair(b->ready, b->node); // the broken first
    });
    std::int32_t budget = std::max(in_.policy.batchSize, in_.policy.canaryNodes) - busy;
    for (const PluginPod* pod : back) {
      if (const std::string* why = unsafe(pod->node)) {
        wait(pod->node, "VolumesInUse", *why);
      } else if (budget-- > 0) {
        // The previous images ran on the node a moment ago: no pre-pull holds a rollback.
        replaceNow(*pod, "rolling back to node plugin revision " + rec().from);
      } else {
        wait(pod->node, "RollingBack", "waiting to be rolled back");
      }
    }
  }

  void count() {
    rec().total = 0;
    rec().updated = 0;
    for (const PluginPod& pod : in_.pods) {
      if (!pod.deleting) {
        ++rec().total;
        rec().updated += pod.revision == rec().revision ? 1 : 0;
      }
    }
  }

  const VerifiedRolloutInput& in_;
  VerifiedRolloutPlan out_;
};

} // namespace

std::string_view phaseName(RolloutPhase phase) {
  for (const auto& [p, name] : kPhases) {
    if (p == phase) {
      return name;
    }
  }
  return "None";
}

std::optional<RolloutPhase> parsePhase(std::string_view name) {
  for (const auto& [p, n] : kPhases) {
    if (n == name) {
      return p;
    }
  }
  return std::nullopt;
}

VerifiedRolloutPlan planVerifiedRollout(const VerifiedRolloutInput& input) {
  return Planner(input).plan();
}

bool keepPreviousTemplate(const RolloutRecord& record, const std::string& templateDigest) {
  return (record.phase == RolloutPhase::RollingBack || record.phase == RolloutPhase::RolledBack) &&
         !record.from.empty() && record.failedTemplate == templateDigest;
}

} // namespace csiop::driverdeployment
