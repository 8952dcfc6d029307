#include <csiop/api/kubelet_mounts.hpp>

#include <csiop/api/json_access.hpp>

namespace csiop::api {
namespace {

std::string withoutTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') {
    path.pop_back();
  }
  return path;
}

// The host path of the hostPath volume `name` ("" when it is not one).
std::string hostPathOf(const Json& volumes, const std::string& name) {
  if (!volumes.is_array()) {
    return "";
  }
  for (const Json& v : volumes) {
    if (stringField(v, "name") == name) {
      return withoutTrailingSlashes(stringField(member(v, "hostPath"), "path"));
    }
  }
  return "";
}

} // namespace

KubeletMount kubeletMountOf(const Json& mount, const Json& volumes, const std::string& kubeletDir) {
  const std::string path = withoutTrailingSlashes(stringField(mount, "mountPath"));
  if (path.empty() || path.front() != '/') {
    return KubeletMount::Beside;
  }
  const bool atOrAbove = path == kubeletDir || path == "/" || kubeletDir.starts_with(path + "/");
  if (!atOrAbove) {
    return KubeletMount::Beside;
  }
  const bool same = hostPathOf(volumes, stringField(mount, "name")) == path &&
                    stringField(mount, "mountPropagation") == "Bidirectional" &&
                    stringField(mount, "subPath").empty() &&
                    stringField(mount, "subPathExpr").empty();
  return same ? KubeletMount::Covers : KubeletMount::Overlays;
}

} // namespace csiop::api
