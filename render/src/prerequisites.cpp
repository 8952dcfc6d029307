#include <csiop/render/prerequisites.hpp>

#include <algorithm>

#include <csiop/api/object_kinds.hpp>

namespace csiop::render {
namespace {

void add(std::vector<RequiredApi>& out, RequiredApi api) {
  const bool known = std::any_of(out.begin(), out.end(), [&](const RequiredApi& a) {
    return a.group == api.group && a.version == api.version && a.resource == api.resource;
  });
  if (!known) {
    out.push_back(std::move(api));
  }
}

} // namespace

std::string RequiredApi::apiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string RequiredApi::str() const {
  return apiVersion() + "/" + resource;
}

std::vector<RequiredApi> requiredApis(const api::Effective& effective) {
  std::vector<RequiredApi> out;
  constexpr const char* kSnapshots = "snapshot.storage.k8s.io";
  if (effective.controller) {
    if (const auto* s = effective.controller->sidecar(api::Component::Snapshotter);
        s && s->enabled) {
      add(out, {kSnapshots, "v1", "volumesnapshotclasses", "the snapshotter"});
      add(out, {kSnapshots, "v1", "volumesnapshotcontents", "the snapshotter"});
    }
  }
  if (!effective.volumeSnapshotClasses.empty()) {
    add(out, {kSnapshots, "v1", "volumesnapshotclasses", "spec.volumeSnapshotClasses"});
  }
  for (const std::string& text : effective.requiredAPIs) {
    if (const auto gvr = api::parseGroupVersionResource(text)) { // validation reports the rest
      add(out, {gvr->group, gvr->version, gvr->resource, "spec.requiredAPIs"});
    }
  }
  return out;
}

std::vector<RequiredPriorityClass> requiredPriorityClasses(const api::Effective& effective) {
  std::vector<RequiredPriorityClass> out;
  const auto builtIn = [](const std::string& name) {
    return name.empty() || name == "system-node-critical" || name == "system-cluster-critical";
  };
  if (!builtIn(effective.node.pod.priorityClassName)) {
    out.push_back({effective.node.pod.priorityClassName, "the node plugin"});
  }
  if (effective.hasControllerWorkload() && !builtIn(effective.controller->pod.priorityClassName)) {
    out.push_back({effective.controller->pod.priorityClassName, "the controller"});
  }
  return out;
}

} // namespace csiop::render
