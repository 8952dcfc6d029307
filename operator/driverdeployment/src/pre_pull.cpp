#include <csiop/driverdeployment/pre_pull.hpp>

#include <algorithm>
#include <set>

#include <csiop/api/json_access.hpp>
#include <csiop/api/rfc3339.hpp>
#include <csiop/driverdeployment/config_hash.hpp>
#include <csiop/driverdeployment/node_pinned_pod.hpp>

namespace csiop::driverdeployment {

using api::Json;
using api::member;
using api::stringField;

namespace {

// Not in any image: the kubelet pulls the image, then cannot start the container.
constexpr const char* kNoSuchCommand = "/csi-operator-pre-pull-only";

// The kubelet's reasons for an image it cannot get (kubelet/images/types.go): the first two it
// tries again (with back-off) until the pod's deadline; the others it never will.
bool pullFailure(const std::string& reason) {
  return reason == "ErrImagePull" || reason == "ImagePullBackOff" ||
         reason == "RegistryUnavailable";
}
bool finalPullFailure(const std::string& reason) {
  return reason == "InvalidImageName" || reason == "ErrImageNeverPull" ||
         reason == "SignatureValidationFailed";
}

} // namespace

std::string prePullName(const std::string& owner, const std::string& node,
                        const std::string& revision) {
  return owner.substr(0, 47) + "-pull-" + sha256Hex(node + "/" + revision).substr(0, 10);
}

std::vector<PrePullImage> prePullImages(const Json& podTemplate) {
  std::vector<PrePullImage> out;
  const Json& spec = member(podTemplate, "spec");
  for (const char* list : {"initContainers", "containers"}) {
    const Json& containers = member(spec, list);
    if (!containers.is_array()) {
      continue;
    }
    for (const Json& c : containers) {
      const std::string image = stringField(c, "image");
      if (image.empty() || std::any_of(out.begin(), out.end(),
                                       [&](const PrePullImage& p) { return p.image == image; })) {
        continue;
      }
      std::string policy = stringField(c, "imagePullPolicy");
      if (policy.empty() || policy == "Always") {
        policy = "IfNotPresent";
      }
      out.push_back({image, policy});
    }
  }
  return out;
}

Json prePullPod(const PrePullTarget& t) {
  Json containers = Json::array();
  const std::vector<PrePullImage> images = prePullImages(t.podTemplate);
  for (std::size_t i = 0; i < images.size(); ++i) {
    containers.push_back({{"name", "image-" + std::to_string(i)},
                          {"image", images[i].image},
                          {"imagePullPolicy", images[i].pullPolicy},
                          {"command", Json::array({kNoSuchCommand})},
                          {"securityContext",
                           {{"allowPrivilegeEscalation", false},
                            {"readOnlyRootFilesystem", true},
                            {"runAsNonRoot", true},
                            {"runAsUser", 65534},
                            {"capabilities", {{"drop", Json::array({"ALL"})}}}}},
                          {"resources",
                           {{"requests", {{"cpu", "1m"}, {"memory", "4Mi"}}},
                            {"limits", {{"cpu", "10m"}, {"memory", "16Mi"}}}}}});
  }
  // Wherever the plugin runs (a tainted node included), as the plugin does.
  Json spec = nodePinnedPodSpec(t.node, t.deadlineSeconds, 0);
  spec["containers"] = std::move(containers);
  const Json& secrets = member(member(t.podTemplate, "spec"), "imagePullSecrets");
  if (secrets.is_array() && !secrets.empty()) {
    spec["imagePullSecrets"] = secrets;
  }
  const Json& os =
      member(member(member(t.podTemplate, "spec"), "nodeSelector"), "kubernetes.io/os");
  if (os.is_string()) {
    spec["nodeSelector"] = {{"kubernetes.io/os", os}};
  }
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", nodePinnedMetadata({t.owner, t.ownerUid, kPrePullLabel, "pre-pull"},
                                      prePullName(t.owner, t.node, t.revision), t.namespace_,
                                      {{kPrePullNodeAnnotation, t.node},
                                       {kPrePullRevisionAnnotation, t.revision}})},
      {"spec", std::move(spec)}};
}

namespace {

PrePullResult readPrePullState(const Json& pod) {
  const Json& status = member(pod, "status");
  const Json& containers = member(pod, "spec").value("containers", Json::array());
  const Json& statuses = member(status, "containerStatuses");
  const std::string phase = stringField(status, "phase");
  const bool ended = phase == "Failed" || phase == "Succeeded";
  std::size_t pulled = 0;
  std::string failing; // the last pull failure seen
  for (const Json& s : statuses.is_array() ? statuses : Json::array()) {
    const Json& state = member(s, "state");
    const Json& waiting = member(state, "waiting");
    const std::string reason = stringField(waiting, "reason");
    if (pullFailure(reason) || finalPullFailure(reason)) {
      failing = "image " + stringField(s, "image") + ": " + reason +
                (stringField(waiting, "message").empty() ? std::string()
                                                         : ": " + stringField(waiting, "message"));
      if (finalPullFailure(reason) || ended) {
        return {PrePullResult::State::Failed, failing};
      }
      continue;
    }
    // Started, or failed to start after the pull (the command that does not exist), or an
    // image ID reported: the image is on the node. Not a container the kubelet marks terminated
    // because the pod ended while it still waited (its deadline during a pull): it never ran.
    const bool neverRan =
        stringField(member(state, "terminated"), "reason") == "ContainerStatusUnknown";
    if (!stringField(s, "imageID").empty() || state.contains("running") ||
        (state.contains("terminated") && !neverRan) || reason == "RunContainerError" ||
        reason == "CreateContainerError" || reason == "StartError") {
      ++pulled;
    }
  }
  if (!containers.empty() && pulled == containers.size()) {
    return {PrePullResult::State::Pulled, ""};
  }
  if (ended) {
    // Ended (activeDeadlineSeconds, an eviction) before every image was there.
    const std::string why = stringField(status, "message");
    return {PrePullResult::State::Failed,
            "the images were not all pulled" +
                (why.empty() ? std::string(" before the pod ended") : ": " + why)};
  }
  const Json& conditions = member(status, "conditions");
  for (const Json& c : conditions.is_array() ? conditions : Json::array()) {
    if (stringField(c, "type") == "PodScheduled" && stringField(c, "status") == "False" &&
        stringField(c, "reason") == "Unschedulable") {
      return {PrePullResult::State::Pending, "unschedulable: " + stringField(c, "message")};
    }
  }
  return {PrePullResult::State::Pending, failing};
}

} // namespace

PrePullResult readPrePull(const Json& pod) {
  PrePullResult result = readPrePullState(pod);
  result.started =
      api::parseRfc3339OrEpoch(stringField(member(pod, "metadata"), "creationTimestamp"));
  return result;
}

PrePullGate gateOnPrePulls(const std::vector<Replacement>& planned, const PrePulls& prePulls) {
  PrePullGate gate;
  for (const Replacement& r : planned) {
    const auto it = prePulls.results.find(r.node);
    const PrePullResult images = it == prePulls.results.end() ? PrePullResult{} : it->second;
    if (images.state == PrePullResult::State::Pulled) {
      gate.now.push_back(r);
      continue;
    }
    gate.pull.insert(r.node);
    if (images.state == PrePullResult::State::Failed) {
      gate.waiting.push_back(
          {r.node, "ImagePullFailed",
           "the new images are not on the node, so its plugin stays: " + images.message});
    } else {
      gate.waiting.push_back(
          {r.node, "PullingImages",
           "pulling the new images on the node before its plugin is replaced" +
               (images.message.empty() ? std::string() : ": " + images.message)});
    }
  }
  return gate;
}

} // namespace csiop::driverdeployment
