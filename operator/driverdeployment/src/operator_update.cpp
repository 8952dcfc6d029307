#include <csiop/driverdeployment/operator_update.hpp>

#include <array>
#include <map>

#include <csiop/api/annotations.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/compare.hpp>
#include <csiop/driverdeployment/config_hash.hpp>

namespace csiop::driverdeployment {
namespace {

using api::member;

// Fields of the spec that only objects other than the workloads are rendered from.
constexpr std::array kNotRenderedIntoWorkloads = {
    "storageClasses", "volumeSnapshotClasses",  "services", "objects",         "requiredAPIs",
    "deletionPolicy", "aggregatedClusterRoles", "paused",   "operatorUpdates",
};

const Json& templateSpec(const Json& workload) {
  return member(member(member(workload, "spec"), "template"), "spec");
}

// The containers of a pod template by name (init containers first), with their images.
std::map<std::string, std::string> imagesOf(const Json& workload) {
  std::map<std::string, std::string> out;
  for (const char* list : {"initContainers", "containers"}) {
    const Json& containers = member(templateSpec(workload), list);
    if (!containers.is_array()) {
      continue;
    }
    for (const Json& c : containers) {
      out[api::stringField(c, "name")] = api::stringField(c, "image");
    }
  }
  return out;
}

// `desired` with every container's image and the list of containers as in `live`, so that
// what differs besides them shows.
Json withLiveContainers(const Json& live, Json desired) {
  for (const char* list : {"initContainers", "containers"}) {
    Json& spec = desired["spec"]["template"]["spec"];
    const Json& liveList = member(templateSpec(live), list);
    if (!spec.contains(list) || !spec[list].is_array()) {
      continue;
    }
    Json kept = Json::array();
    for (Json& c : spec[list]) {
      for (const Json& had : liveList.is_array() ? liveList : Json::array()) {
        if (member(had, "name") == member(c, "name")) {
          c["image"] = member(had, "image");
          kept.push_back(std::move(c));
          break;
        }
      }
    }
    spec[list] = std::move(kept);
  }
  return desired;
}

} // namespace

RenderStamp stampOf(const Json& workload) {
  return {api::annotationValue(workload, api::kSpecGenerationAnnotation),
          api::annotationValue(workload, api::kSpecDigestAnnotation),
          api::annotationValue(workload, api::kRenderedByAnnotation)};
}

void setStamp(Json& workload, const RenderStamp& stamp) {
  Json& annotations = workload["metadata"]["annotations"];
  if (!annotations.is_object()) {
    annotations = Json::object();
  }
  const auto set = [&](const char* key, const std::string& value) {
    if (value.empty()) {
      annotations.erase(key);
    } else {
      annotations[key] = value;
    }
  };
  set(api::kSpecGenerationAnnotation, stamp.specGeneration);
  set(api::kSpecDigestAnnotation, stamp.specDigest);
  set(api::kRenderedByAnnotation, stamp.renderedBy);
  if (annotations.empty()) {
    workload["metadata"].erase("annotations");
  }
}

std::string workloadSpecDigest(const Json& spec, WorkloadPart part) {
  Json rendered = spec.is_object() ? spec : Json::object();
  for (const char* field : kNotRenderedIntoWorkloads) {
    rendered.erase(field);
  }
  if (part == WorkloadPart::Controller) {
    rendered.erase("node");
    rendered.erase("windowsNode");
  } else if (const Json& placement = member(member(rendered, "controller"), "placement");
             placement != "NodePlugin" && placement != "SinglePod") {
    rendered.erase("controller");
  }
  if (const auto rollout = rendered.find("rollout"); rollout != rendered.end()) {
    // Its type decides the DaemonSets' update strategy; its other settings, how the operator
    // rolls, not what.
    Json type = member(*rollout, "type");
    *rollout = type.is_null() ? Json::object() : Json{{"type", std::move(type)}};
  }
  return contentDigest(rendered.dump());
}

ChangeOrigin changeOrigin(const ChangeFacts& facts) {
  if (facts.liveConfigHash != facts.desiredConfigHash) {
    return ChangeOrigin::Spec; // the content of the configuration the pods read
  }
  if (facts.live.specDigest.empty() || facts.live.renderedBy.empty()) {
    return facts.generationObserved ? ChangeOrigin::Operator : ChangeOrigin::Spec;
  }
  if (facts.live.specDigest != facts.desired.specDigest) {
    return ChangeOrigin::Spec;
  }
  return facts.live.renderedBy == facts.desired.renderedBy ? ChangeOrigin::Drift
                                                           : ChangeOrigin::Operator;
}

std::vector<std::string> describeChange(const Json& live, const Json& desired, std::size_t max) {
  std::vector<std::string> out;
  const auto had = imagesOf(live);
  const auto wants = imagesOf(desired);
  for (const auto& [name, image] : wants) {
    const auto it = had.find(name);
    if (it == had.end()) {
      out.push_back("container " + name + " added (" + image + ")");
    } else if (it->second != image) {
      out.push_back("container " + name + ": image " + it->second + " -> " + image);
    }
  }
  for (const auto& [name, image] : had) {
    if (!wants.contains(name)) {
      out.push_back("container " + name + " removed");
    }
  }
  if (out.size() > max) {
    out.resize(max);
  }
  for (std::string& path :
       differences(live, withLiveContainers(live, desired), max - std::min(max, out.size()))) {
    out.push_back(std::move(path));
  }
  return out;
}

} // namespace csiop::driverdeployment
