#include <csiop/api/kubelet_mounts.hpp>

namespace csiop::api {
namespace {

using Json = nlohmann::ordered_json;

std::string withoutTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') {
    path.pop_back();
  }
  return path;
}

std::string stringAt(const Json& object, const char* key) {
  const auto it = object.is_object() ? object.find(key) : object.end();
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The host path of the hostPath volume `name` ("" when it is not one).
std::string hostPathOf(const Json& volumes, const std::string& name) {
  if (!volumes.is_array()) {
    return "";
  }
  for (const Json& v : volumes) {
    if (stringAt(v, "name") == name) {
      const auto source = v.find("hostPath");
      return source != v.end() ? withoutTrailingSlashes(stringAt(*source, "path")) : "";
    }
  }
  return "";
}

} // namespace

KubeletMount kubeletMountOf(const Json& mount, const Json& volumes, const std::string& kubeletDir) {
  const std::string path = withoutTrailingSlashes(stringAt(mount, "mountPath"));
  if (path.empty() || path.front() != '/') {
    return KubeletMount::Beside;
  }
  const bool atOrAbove = path == kubeletDir || path == "/" || kubeletDir.starts_with(path + "/");
  if (!atOrAbove) {
    return KubeletMount::Beside;
  }
  const bool same = hostPathOf(volumes, stringAt(mount, "name")) == path &&
                    stringAt(mount, "mountPropagation") == "Bidirectional" &&
                    stringAt(mount, "subPath").empty() && stringAt(mount, "subPathExpr").empty();
  return same ? KubeletMount::Covers : KubeletMount::Overlays;
}

} // namespace csiop::api
