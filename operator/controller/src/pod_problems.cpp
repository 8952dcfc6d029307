#include <csiop/controller/pod_problems.hpp>

#include <algorithm>
#include <array>
#include <string_view>

#include <csiop/api/json_access.hpp>
#include <csiop/render/render.hpp>

namespace csiop::controller {
namespace {

using api::Json;
using api::stringField;

// Waiting reasons that do not cure themselves by waiting (the kubelet's and the runtime's).
constexpr std::array<std::string_view, 8> kStuckReasons = {
    "ErrImagePull",     "ImagePullBackOff",           "InvalidImageName",     "ErrImageNeverPull",
    "CrashLoopBackOff", "CreateContainerConfigError", "CreateContainerError", "RunContainerError"};

constexpr std::size_t kMaxDetail = 240; // characters of a kubelet message kept per problem

std::string clipped(std::string s) {
  if (s.size() > kMaxDetail) {
    s.resize(kMaxDetail);
    s += "...";
  }
  return s;
}

void containerProblems(const std::string& pod, const Json& status, const char* key,
                       std::vector<std::string>& out) {
  const auto list = status.find(key);
  if (list == status.end() || !list->is_array()) {
    return;
  }
  for (const Json& c : *list) {
    if (!c.is_object() || !c.contains("state") || !c["state"].is_object()) {
      continue;
    }
    const Json& waiting = c["state"].value("waiting", Json::object());
    const std::string reason = stringField(waiting, "reason");
    if (std::find(kStuckReasons.begin(), kStuckReasons.end(), reason) == kStuckReasons.end()) {
      continue;
    }
    std::string line = pod + ": container " + stringField(c, "name") + ": " + reason;
    if (const std::string message = stringField(waiting, "message"); !message.empty()) {
      line += ": " + clipped(message);
    }
    out.push_back(std::move(line));
  }
}

void schedulingProblem(const std::string& pod, const Json& status, std::vector<std::string>& out) {
  for (const Json& c : status.value("conditions", Json::array())) {
    if (c.is_object() && stringField(c, "type") == "PodScheduled" &&
        stringField(c, "status") == "False" && stringField(c, "reason") == "Unschedulable") {
      out.push_back(pod + ": unschedulable: " + clipped(stringField(c, "message")));
    }
  }
}

} // namespace

std::vector<std::string> podProblems(const std::vector<const Json*>& pods) {
  std::vector<std::string> out;
  for (const Json* p : pods) {
    if (p == nullptr || !p->is_object()) {
      continue;
    }
    const Json& meta = p->value("metadata", Json::object());
    if (meta.contains("deletionTimestamp")) {
      continue;
    }
    const Json& status = p->value("status", Json::object());
    if (!status.is_object()) {
      continue;
    }
    const std::string name =
        "pod " + stringField(meta, "namespace") + "/" + stringField(meta, "name");
    schedulingProblem(name, status, out);
    containerProblems(name, status, "initContainerStatuses", out);
    containerProblems(name, status, "containerStatuses", out);
  }
  return out;
}

std::string summarizeProblems(const std::vector<std::string>& problems, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < problems.size() && i < limit; ++i) {
    out += (out.empty() ? "" : "; ") + problems[i];
  }
  if (problems.size() > limit) {
    out += "; and " + std::to_string(problems.size() - limit) + " more";
  }
  return out;
}

namespace {

Json copied(const Json& from, std::initializer_list<const char*> keys) {
  Json out = Json::object();
  for (const char* key : keys) {
    if (const Json& v = api::member(from, key); !v.is_null()) {
      out[key] = v;
    }
  }
  return out;
}

// Only the containers that wait, with why: what podProblems reads. A running pod keeps none.
Json waitingContainers(const Json& statuses) {
  Json out = Json::array();
  for (const Json& c : statuses.is_array() ? statuses : Json::array()) {
    if (const Json& waiting = api::member(api::member(c, "state"), "waiting");
        waiting.is_object() && !api::stringField(waiting, "reason").empty()) {
      Json slim = copied(c, {"name"});
      slim["state"] = {{"waiting", copied(waiting, {"reason", "message"})}};
      out.push_back(std::move(slim));
    }
  }
  return out;
}

// The conditions that are read: Ready (the node plugin rollout) and a failed PodScheduled
// (podProblems); the rest are the same on every healthy pod.
Json readConditions(const Json& conditions) {
  Json out = Json::array();
  for (const Json& c : conditions.is_array() ? conditions : Json::array()) {
    const std::string type = api::stringField(c, "type");
    if (type == "Ready") {
      out.push_back(copied(c, {"type", "status"}));
    } else if (type == "PodScheduled" && api::stringField(c, "status") == "False") {
      out.push_back(copied(c, {"type", "status", "reason", "message"}));
    }
  }
  return out;
}

} // namespace

bool keepWorkloadPod(Json& pod) {
  const Json& meta = api::member(pod, "metadata");
  Json slimMeta =
      copied(meta, {"name", "namespace", "uid", "resourceVersion", "deletionTimestamp"});
  // The owner label (the cache's index) and the DaemonSet's revision (the node rollout).
  const Json& labels = api::member(meta, "labels");
  Json slimLabels = copied(labels, {api::kOwnerLabel, "controller-revision-hash"});
  if (!slimLabels.empty()) {
    slimMeta["labels"] = std::move(slimLabels);
  }
  if (const Json& owners = api::member(meta, "ownerReferences"); owners.is_array()) {
    slimMeta["ownerReferences"] = Json::array();
    for (const Json& o : owners) {
      if (o.value("controller", false) == true) {
        slimMeta["ownerReferences"].push_back(copied(o, {"kind", "name", "uid"}));
      }
    }
  }
  const Json& status = api::member(pod, "status");
  Json slimStatus = copied(status, {"phase"});
  if (Json conditions = readConditions(api::member(status, "conditions")); !conditions.empty()) {
    slimStatus["conditions"] = std::move(conditions);
  }
  for (const char* key : {"initContainerStatuses", "containerStatuses"}) {
    if (Json waiting = waitingContainers(api::member(status, key)); !waiting.empty()) {
      slimStatus[key] = std::move(waiting);
    }
  }
  Json slim = copied(pod, {"apiVersion", "kind"});
  slim["metadata"] = std::move(slimMeta);
  slim["spec"] = copied(api::member(pod, "spec"), {"nodeName"});
  slim["status"] = std::move(slimStatus);
  pod = std::move(slim);
  return true;
}

} // namespace csiop::controller
