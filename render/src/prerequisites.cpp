#include <csiop/render/prerequisites.hpp>

#include <algorithm>

#include <csiop/api/command_line.hpp>
#include <csiop/api/object_kinds.hpp>
#include <csiop/api/sidecar_releases.hpp>

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

bool goTrue(const std::optional<std::string>& value) {
  // A boolean flag given alone is true; Go's strconv.ParseBool for the rest.
  return !value || *value == "1" || *value == "t" || *value == "T" || *value == "true" ||
         *value == "TRUE" || *value == "True";
}

// Whether the snapshotter's arguments turn volume group snapshots on: --enable-volume-group-
// snapshots up to v8.1, the CSIVolumeGroupSnapshot feature gate from v8.2.
bool groupSnapshotsOn(const std::vector<std::string>& args) {
  bool on = false;
  for (const api::FlagArgument& flag : api::flagArguments(args)) {
    if (flag.name == "enable-volume-group-snapshots") {
      on = goTrue(flag.value);
    } else if (flag.name == "feature-gates" && flag.value) {
      // "A=true,B=false": the last setting of the gate counts.
      std::string_view gates = *flag.value;
      while (!gates.empty()) {
        const std::size_t comma = gates.find(',');
        std::string_view gate = gates.substr(0, comma);
        gates = comma == std::string_view::npos ? std::string_view() : gates.substr(comma + 1);
        const std::size_t eq = gate.find('=');
        if (gate.substr(0, eq) == "CSIVolumeGroupSnapshot") {
          on = eq != std::string_view::npos && goTrue(std::string(gate.substr(eq + 1)));
        }
      }
    }
  }
  return on;
}

// The groupsnapshot.storage.k8s.io version a snapshotter release watches (cmd/csi-snapshotter
// at each tag): v1alpha1 up to v8.1, v1beta1 in v8.2 and v8.3, v1beta2 in v8.4 and v8.5, v1
// from v8.6. The snapshotter waits for that API's informers before it handles any snapshot,
// so where only another version is served, no VolumeSnapshot of the driver is ever taken
// (kubernetes-csi/external-snapshotter#1385).
const char* groupSnapshotVersion(const api::Version& v) {
  if (v < api::Version{8, 2, 0}) {
    return "v1alpha1";
  }
  if (v < api::Version{8, 4, 0}) {
    return "v1beta1";
  }
  if (v < api::Version{8, 6, 0}) {
    return "v1beta2";
  }
  return "v1";
}

void groupSnapshotApis(std::vector<RequiredApi>& out, const api::EffectiveContainer& snapshotter) {
  const auto release = api::sidecarRelease(snapshotter.image);
  if (!release || release->component != api::Component::Snapshotter || snapshotter.command ||
      !groupSnapshotsOn(snapshotter.extraArgs)) {
    return;
  }
  const char* version = groupSnapshotVersion(release->version);
  const std::string neededBy = "the snapshotter: " + std::string(release->name) + " " +
                               release->version.str() +
                               " with volume group snapshots on watches this version and takes "
                               "no VolumeSnapshot until it is served";
  add(out, {"groupsnapshot.storage.k8s.io", version, "volumegroupsnapshotclasses", neededBy});
  add(out, {"groupsnapshot.storage.k8s.io", version, "volumegroupsnapshotcontents", neededBy});
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
      groupSnapshotApis(out, s->container);
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

std::vector<std::string> lowPriorityNodePlugins(const api::Effective& effective,
                                                const PriorityClasses& classes) {
  std::vector<std::string> out;
  const auto check = [&](const std::string& path, const std::string& className) {
    std::int32_t priority = classes.defaultPriority;
    if (!className.empty()) {
      const auto it = classes.values.find(className);
      if (it == classes.values.end()) {
        return;
      }
      priority = it->second;
    }
    if (priority > classes.defaultPriority) {
      return;
    }
    const std::string what = className.empty() ? "no PriorityClass" : "PriorityClass " + className;
    out.push_back(path + ": the node plugin's pods run at priority " + std::to_string(priority) +
                  " (" + what + "), no higher than pods that name no PriorityClass (" +
                  std::to_string(classes.defaultPriority) +
                  "): on a full node they cannot preempt one and the driver is never "
                  "registered there; name a higher class (system-node-critical by default)");
  };
  check("spec.node.priorityClassName", effective.node.pod.priorityClassName);
  if (effective.windowsNode) {
    check("spec.windowsNode.priorityClassName", effective.windowsNode->pod.priorityClassName);
  }
  return out;
}

} // namespace csiop::render
