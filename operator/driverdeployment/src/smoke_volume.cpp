#include <csiop/driverdeployment/smoke_volume.hpp>

#include <algorithm>
#include <sstream>
#include <string_view>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/config_hash.hpp>
#include <csiop/driverdeployment/node_pinned_pod.hpp>

namespace csiop::driverdeployment {

using api::Json;
using api::member;
using api::stringField;

namespace {

constexpr const char* kContainer = "smoke";
constexpr const char* kVolume = "smoke";

// Smoke object names: "<owner>-smoke-<10 hex>" (a canary's test) and "<owner>-provision-<10 hex>"
// (the controller's), the owner's name cut so that the whole fits a label value's 63 characters.
constexpr std::string_view kSmokeInfix = "-smoke-";
constexpr std::string_view kProvisionInfix = "-provision-";
constexpr std::size_t kNameDigest = 10;

std::string namePrefix(const std::string& owner, std::string_view infix) {
  std::string prefix = owner.substr(0, 63 - infix.size() - kNameDigest);
  while (!prefix.empty() && (prefix.back() == '-' || prefix.back() == '.')) {
    prefix.pop_back();
  }
  return prefix + std::string(infix);
}

Json metadata(const SmokeTarget& t) {
  return nodePinnedMetadata(
      {t.owner, t.ownerUid, kSmokeLabel, "smoke-volume"}, smokeName(t.owner, t.node, t.revision),
      t.namespace_, {{kSmokeNodeAnnotation, t.node}, {kSmokeRevisionAnnotation, t.revision}});
}

// The newest event (by lastTimestamp, then eventTime) whose reason is one of `reasons`; its
// message, or "".
std::string latestEvent(const std::vector<Json>& events, const std::string& kind,
                        const std::vector<std::string>& reasons) {
  const Json* best = nullptr;
  std::string bestTime;
  for (const Json& e : events) {
    if (stringField(member(e, "involvedObject"), "kind") != kind ||
        std::find(reasons.begin(), reasons.end(), stringField(e, "reason")) == reasons.end()) {
      continue;
    }
    std::string time = stringField(e, "lastTimestamp");
    if (time.empty()) {
      time = stringField(e, "eventTime");
    }
    if (best == nullptr || time >= bestTime) {
      best = &e;
      bestTime = time;
    }
  }
  return best == nullptr ? std::string() : stringField(*best, "message");
}

// The smoke container's status, or null.
const Json& containerStatus(const Json& pod) {
  static const Json kNone;
  const Json& statuses = member(member(pod, "status"), "containerStatuses");
  if (statuses.is_array()) {
    for (const Json& s : statuses) {
      if (stringField(s, "name") == kContainer) {
        return s;
      }
    }
  }
  return kNone;
}

const Json* condition(const Json& pod, const std::string& type) {
  const Json& conditions = member(member(pod, "status"), "conditions");
  if (conditions.is_array()) {
    for (const Json& c : conditions) {
      if (stringField(c, "type") == type) {
        return &c;
      }
    }
  }
  return nullptr;
}

bool attached(const Json& attachment) {
  const Json& value = member(member(attachment, "status"), "attached");
  return value.is_boolean() && value.get<bool>();
}

SmokeResult running(std::string stage, std::string message) {
  return {SmokeResult::State::Running, std::move(stage), std::move(message)};
}

SmokeResult failed(std::string stage, std::string message) {
  return {SmokeResult::State::Failed, std::move(stage), std::move(message)};
}

// What a passed test went through: the stages the objects show, then the container's own
// reports ("Write: ok (...)" and so on, one per line), joined with "; ".
std::string passedStages(const SmokeObserved& o) {
  std::string out;
  if (o.claim) {
    out += "Provision: ok (" + stringField(member(*o.claim, "spec"), "volumeName") + "); ";
  }
  if (o.attachment) {
    out += "Attach: ok; ";
  }
  out += "Mount: ok";
  std::istringstream report(
      stringField(member(member(containerStatus(*o.pod), "state"), "terminated"), "message"));
  for (std::string line; std::getline(report, line);) {
    if (!line.empty() && line != "ok") {
      out += "; " + line;
    }
  }
  return out;
}

// A Failed pod: the container's own report ("<Stage>: why"), else the pod's reason.
SmokeResult podFailed(const Json& pod, const std::string& stageReached) {
  const Json& terminated = member(member(containerStatus(pod), "state"), "terminated");
  const std::string report = stringField(terminated, "message");
  if (const auto colon = report.find(": "); colon != std::string::npos) {
    const std::string stage = report.substr(0, colon);
    if (stage == "Write" || stage == "Read" || stage == "Cleanup") {
      return failed(stage, report.substr(colon + 2));
    }
  }
  const Json& status = member(pod, "status");
  std::string why = stringField(status, "reason");
  if (const std::string message = stringField(status, "message"); !message.empty()) {
    why += (why.empty() ? "" : ": ") + message;
  }
  if (why.empty()) {
    why = report.empty()
              ? "the smoke pod failed (exit code " + member(terminated, "exitCode").dump() + ")"
              : report;
  }
  return failed(stageReached, why);
}

} // namespace

std::string smokeName(const std::string& owner, const std::string& node,
                      const std::string& revision) {
  return namePrefix(owner, kSmokeInfix) +
         contentDigest(owner + "\n" + node + "\n" + revision).substr(0, kNameDigest);
}

std::optional<Json> smokeClaim(const SmokeTarget& t) {
  if (t.volume.storageClassName.empty()) {
    return std::nullopt;
  }
  return Json{{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata", metadata(t)},
              {"spec",
               {{"accessModes", Json::array({"ReadWriteOnce"})},
                {"volumeMode", "Filesystem"},
                {"storageClassName", t.volume.storageClassName},
                {"resources", {{"requests", {{"storage", t.volume.size}}}}}}}};
}

Json smokePod(const SmokeTarget& t) {
  Json volume{{"name", kVolume}};
  if (t.volume.storageClassName.empty()) {
    Json csi{{"driver", t.driverName}};
    if (!t.volume.volumeAttributes.empty()) {
      csi["volumeAttributes"] = t.volume.volumeAttributes;
    }
    if (!t.volume.fsType.empty()) {
      csi["fsType"] = t.volume.fsType;
    }
    volume["csi"] = std::move(csi);
  } else {
    volume["persistentVolumeClaim"] = {{"claimName", smokeName(t.owner, t.node, t.revision)}};
  }
  // Root, to write to a fresh filesystem's root directory (root's, mode 0755, unless the driver
  // applies an fsGroup), but with no capability: it writes only what root owns, and nothing of
  // the node is mounted but the volume under test.
  const Json securityContext{{"runAsUser", 0},
                             {"runAsNonRoot", false},
                             {"allowPrivilegeEscalation", false},
                             {"readOnlyRootFilesystem", true},
                             {"privileged", false},
                             {"capabilities", {{"drop", Json::array({"ALL"})}}}};
  Json container{
      {"name", kContainer},
      {"image", t.image},
      {"imagePullPolicy", t.pullPolicy},
      {"args", Json::array({"smoke-volume", kSmokeMountPath, "--nonce", t.nonce})},
      {"securityContext", securityContext},
      {"resources",
       {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}, {"limits", {{"memory", "64Mi"}}}}},
      {"terminationMessagePolicy", "File"},
      {"volumeMounts", Json::array({Json{{"name", kVolume}, {"mountPath", kSmokeMountPath}}})}};
  // The canary may be tainted (a driver's start-up taint among them): the test runs there all
  // the same, as the node plugin does.
  Json spec = nodePinnedPodSpec(t.node, t.deadlineSeconds, 5);
  spec["containers"] = Json::array({std::move(container)});
  spec["volumes"] = Json::array({std::move(volume)});
  return Json{
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata(t)}, {"spec", std::move(spec)}};
}

SmokeResult readSmoke(const SmokeObserved& o) {
  if (!o.pod) {
    return {};
  }
  const Json& pod = *o.pod;
  const Json& status = member(pod, "status");
  const std::string phase = stringField(status, "phase");
  if (phase == "Succeeded") {
    return {SmokeResult::State::Passed, "", passedStages(o)};
  }

  // Where the test is: the first stage not done yet.
  std::string stage = "Mount";
  std::string message;
  const Json& state = member(containerStatus(pod), "state");
  const Json& waiting = member(state, "waiting");
  const std::string waitingReason = stringField(waiting, "reason");
  if (o.claim && stringField(member(*o.claim, "status"), "phase") != "Bound") {
    stage = "Provision";
    message = latestEvent(o.events, "PersistentVolumeClaim", {"ProvisioningFailed"});
    if (message.empty()) {
      message = latestEvent(o.events, "PersistentVolumeClaim",
                            {"ExternalProvisioning", "Provisioning", "WaitForPodScheduled"});
    }
  } else if (const Json* scheduled = condition(pod, "PodScheduled");
             scheduled != nullptr && stringField(*scheduled, "status") == "False") {
    stage = "Start";
    message = stringField(*scheduled, "reason") + ": " + stringField(*scheduled, "message");
  } else if (o.attachment && !attached(*o.attachment)) {
    stage = "Attach";
    message = stringField(member(member(*o.attachment, "status"), "attachError"), "message");
    if (message.empty()) {
      message = latestEvent(o.events, "Pod", {"FailedAttachVolume"});
    }
  } else if (waitingReason == "ErrImagePull" || waitingReason == "ImagePullBackOff" ||
             waitingReason == "InvalidImageName" || waitingReason == "CreateContainerConfigError" ||
             waitingReason == "CreateContainerError") {
    stage = "Start";
    message = waitingReason + ": " + stringField(waiting, "message");
  } else if (member(state, "running").is_object() || member(state, "terminated").is_object()) {
    stage = "Write"; // mounted: the container reports its own stages when it ends
  } else {
    message = latestEvent(o.events, "Pod", {"FailedMount", "FailedAttachVolume"});
    if (message.rfind("AttachVolume", 0) == 0) {
      stage = "Attach";
    }
  }
  if (phase == "Failed") {
    return podFailed(pod, stage);
  }
  return running(std::move(stage), std::move(message));
}

std::string provisionName(const std::string& owner, const std::string& templateDigest) {
  return namePrefix(owner, kProvisionInfix) +
         contentDigest(owner + "\n" + templateDigest).substr(0, kNameDigest);
}

bool smokeTestObject(const std::string& owner, const std::string& ownerNamespace,
                     const std::string& ns, const std::string& name) {
  if (ns != ownerNamespace) {
    return false;
  }
  for (const std::string_view infix : {kSmokeInfix, kProvisionInfix}) {
    const std::string prefix = namePrefix(owner, infix);
    if (name.size() == prefix.size() + kNameDigest && name.starts_with(prefix) &&
        std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                    [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); })) {
      return true;
    }
  }
  return false;
}

Json provisionClaim(const ProvisionTarget& t) {
  Json annotations = Json::object();
  if (!t.node.empty()) {
    annotations["volume.kubernetes.io/selected-node"] = t.node;
  }
  return Json{
      {"apiVersion", "v1"},
      {"kind", "PersistentVolumeClaim"},
      {"metadata", nodePinnedMetadata({t.owner, t.ownerUid, kProvisionLabel, "smoke-volume"},
                                      provisionName(t.owner, t.templateDigest), t.namespace_,
                                      std::move(annotations))},
      {"spec",
       {{"accessModes", Json::array({"ReadWriteOnce"})},
        {"volumeMode", "Filesystem"},
        {"storageClassName", t.volume.storageClassName},
        {"resources", {{"requests", {{"storage", t.volume.size}}}}}}}};
}

SmokeResult readProvision(const std::optional<Json>& claim, const std::vector<Json>& events) {
  if (!claim) {
    return {};
  }
  if (stringField(member(*claim, "status"), "phase") == "Bound") {
    return {SmokeResult::State::Passed, "",
            "Provision: ok (" + stringField(member(*claim, "spec"), "volumeName") + ")"};
  }
  std::string message = latestEvent(events, "PersistentVolumeClaim", {"ProvisioningFailed"});
  if (message.empty()) {
    message = latestEvent(events, "PersistentVolumeClaim",
                          {"ExternalProvisioning", "Provisioning", "WaitForFirstConsumer"});
  }
  return running("Provision", std::move(message));
}

std::string volumeAttachmentName(const std::string& volumeHandle, const std::string& driver,
                                 const std::string& node) {
  return "csi-" + sha256Hex(volumeHandle + driver + node);
}

} // namespace csiop::driverdeployment
