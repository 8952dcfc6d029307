#include <csiop/controller/pod_problems.hpp>

#include <algorithm>
#include <array>
#include <string_view>

#include <csiop/api/json_access.hpp>

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

} // namespace csiop::controller
