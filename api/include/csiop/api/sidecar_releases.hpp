// What the operator knows of each kubernetes-csi sidecar release: which image a container runs
// (its name and version, from the tag), and the flags that release accepts, so that a flag it
// does not know ("flag provided but not defined": the container exits at start) is reported at
// admission with the field that set it, before any pod runs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <csiop/api/images.hpp>

namespace csiop::api {

struct Version {
  int major = 0;
  int minor = 0;
  int patch = 0;

  auto operator<=>(const Version&) const = default;
  [[nodiscard]] std::string str() const; // "v8.2.1"
};

struct SidecarRelease {
  Component component = Component::Provisioner;
  std::string_view name; // the image name, e.g. "csi-snapshotter"
  Version version;
};

// The kubernetes-csi sidecar an image reference names, from its last path component (so a
// mirror that keeps the name counts) and a release tag vX.Y.Z (a digest after it is ignored);
// nullopt for any other image or tag (a vendor's own build, "latest", "v8.2.1-custom").
std::optional<SidecarRelease> sidecarRelease(std::string_view image);

// A flag the release does not accept, and what the operator knows of it.
struct UnknownFlag {
  std::size_t index = 0; // into the arguments
  std::string flag;      // without dashes
  std::string reason;    // e.g. "csi-snapshotter v8.2.1 has no flag --x (it was removed in v8.2.0)"
};

// The flags in `args` (api/command_line.hpp) that the release does not accept; nullopt when
// the release is not one the operator's table holds (then nothing is known either way).
std::optional<std::vector<UnknownFlag>> unknownFlags(const SidecarRelease& release,
                                                     const std::vector<std::string>& args);

// The oldest and newest releases of the component that the table holds.
std::optional<std::pair<Version, Version>> knownReleases(Component component);

} // namespace csiop::api
