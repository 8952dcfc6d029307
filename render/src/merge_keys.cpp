#include <csiop/render/merge_keys.hpp>

#include <array>
#include <utility>

namespace csiop::render {

const char* listMergeKey(std::string_view field) {
  static constexpr std::array<std::pair<std::string_view, const char*>, 14> keys = {{
      {"containers", "name"},
      {"initContainers", "name"},
      {"ephemeralContainers", "name"},
      {"volumes", "name"},
      {"env", "name"},
      {"volumeMounts", "mountPath"},
      {"volumeDevices", "devicePath"},
      {"ports", "containerPort"},
      {"imagePullSecrets", "name"},
      {"hostAliases", "ip"},
      {"topologySpreadConstraints", "topologyKey"},
      {"resourceClaims", "name"},
      {"ownerReferences", "uid"},
      {"tokenRequests", "audience"},
  }};
  for (const auto& [name, key] : keys) {
    if (name == field) {
      return key;
    }
  }
  return nullptr;
}

} // namespace csiop::render
