// The kubernetes-csi sidecar images the operator deploys by default: the one
// table of names and versions. Bump a version here and every rendered manifest,
// golden file and the docs follow.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace csiop::api {

enum class Component {
  NodeDriverRegistrar,
  LivenessProbe,
  Provisioner,
  Attacher,
  Resizer,
  Snapshotter,
  HealthMonitor,
};

struct ImageDefault {
  Component component;
  std::string_view name; // image name below the registry
  std::string_view tag;
  std::string_view project; // kubernetes-csi repository, for docs
  std::string_view field;   // the spec's field of its settings: spec.controller.<field>, ...
};

inline constexpr std::string_view kDefaultRegistry = "registry.k8s.io/sig-storage";

std::span<const ImageDefault> imageDefaults();
const ImageDefault& imageDefault(Component component);

// "<registry>/<name>:<tag>", with `registry` empty meaning kDefaultRegistry.
std::string defaultImage(Component component, std::string_view registry);

} // namespace csiop::api
