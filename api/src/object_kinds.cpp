#include <csiop/api/object_kinds.hpp>

#include <algorithm>
#include <cctype>

#include <csiop/api/formats.hpp>
#include <csiop/api/json_access.hpp>

namespace csiop::api {

std::string ObjectKind::group() const {
  const auto slash = apiVersion.find('/');
  return slash == std::string::npos ? std::string() : apiVersion.substr(0, slash);
}

std::string ObjectKind::version() const {
  const auto slash = apiVersion.find('/');
  return slash == std::string::npos ? apiVersion : apiVersion.substr(slash + 1);
}

std::optional<GroupVersionResource> parseGroupVersionResource(std::string_view text) {
  const auto first = text.find('/');
  const auto last = text.rfind('/');
  if (first == std::string_view::npos || last + 1 >= text.size()) {
    return std::nullopt;
  }
  GroupVersionResource out;
  out.resource = text.substr(last + 1);
  if (first == last) {
    out.version = text.substr(0, first);
  } else {
    out.group = text.substr(0, first);
    out.version = text.substr(first + 1, last - first - 1);
  }
  return out;
}

const std::vector<ObjectKind>& builtinObjectKinds() {
  static const std::vector<ObjectKind> kinds = {
      {"v1", "ConfigMap", "configmaps"},
      {"v1", "Service", "services"},
      {"v1", "ServiceAccount", "serviceaccounts"},
      {"apps/v1", "DaemonSet", "daemonsets"},
      {"apps/v1", "Deployment", "deployments"},
      {"apps/v1", "StatefulSet", "statefulsets"},
      {"rbac.authorization.k8s.io/v1", "Role", "roles"},
      {"rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings"},
      {"policy/v1", "PodDisruptionBudget", "poddisruptionbudgets"},
  };
  return kinds;
}

std::optional<ObjectKind> parseObjectKind(std::string_view text, std::string& error) {
  std::vector<std::string> parts;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    parts.emplace_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(comma + 1);
  }
  const auto fail = [&](const std::string& why) -> std::optional<ObjectKind> {
    error = "object kind \"" + std::string(text) + "\": " + why +
            " (expected apiVersion,Kind,resource, e.g. "
            "monitoring.coreos.com/v1,ServiceMonitor,servicemonitors)";
    return std::nullopt;
  };
  if (parts.size() != 3) {
    return fail("three comma-separated parts are needed");
  }
  ObjectKind k{parts[0], parts[1], parts[2]};
  if (k.apiVersion.empty() || k.apiVersion.find(' ') != std::string::npos ||
      std::count(k.apiVersion.begin(), k.apiVersion.end(), '/') > 1 || k.version().empty() ||
      (!k.group().empty() && !formats::dns1123Subdomain(k.group()).empty()) ||
      !formats::dns1123Label(k.version()).empty()) {
    return fail("the apiVersion must be VERSION or GROUP/VERSION");
  }
  if (k.kind.empty() || !std::isupper(static_cast<unsigned char>(k.kind[0])) ||
      k.kind.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") !=
          std::string::npos) {
    return fail("the kind must be a CamelCase name");
  }
  if (!formats::dns1123Label(k.resource).empty()) {
    return fail("the resource must be a lower-case plural name");
  }
  return k;
}

std::optional<std::vector<ObjectKind>> objectKindsWith(const std::vector<std::string>& texts,
                                                       std::string& error) {
  std::vector<ObjectKind> out = builtinObjectKinds();
  // The operator's other children, cluster-scoped ones among them, are cached by kind too.
  const std::vector<std::string> taken = {"ClusterRole",  "ClusterRoleBinding",
                                          "StorageClass", "VolumeSnapshotClass",
                                          "CSIDriver",    "Namespace"};
  for (const std::string& text : texts) {
    std::optional<ObjectKind> k = parseObjectKind(text, error);
    if (!k) {
      return std::nullopt;
    }
    if (std::find(out.begin(), out.end(), *k) != out.end()) {
      continue;
    }
    const bool clash =
        std::find(taken.begin(), taken.end(), k->kind) != taken.end() ||
        std::any_of(out.begin(), out.end(), [&](const ObjectKind& o) { return o.kind == k->kind; });
    if (clash) {
      error = "object kind \"" + text + "\": the kind " + k->kind +
              " is already one the operator creates under another apiVersion or resource";
      return std::nullopt;
    }
    out.push_back(std::move(*k));
  }
  return out;
}

const ObjectKind* findObjectKind(const std::vector<ObjectKind>& allowed, const Json& object) {
  const std::string apiVersion = stringField(object, "apiVersion");
  const std::string kind = stringField(object, "kind");
  for (const auto& k : allowed) {
    if (k.apiVersion == apiVersion && k.kind == kind) {
      return &k;
    }
  }
  return nullptr;
}

ErrorList checkObjectKinds(const DriverDeployment& object, const std::vector<ObjectKind>& allowed) {
  ErrorList errors;
  if (!object.spec.objects || !object.spec.objects->is_array()) {
    return errors;
  }
  const Json& list = *object.spec.objects;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_object() || findObjectKind(allowed, list[i]) != nullptr) {
      continue;
    }
    std::string names;
    for (const auto& k : allowed) {
      names += (names.empty() ? "" : ", ") + k.apiVersion + " " + k.kind;
    }
    errors.push_back(forbidden("spec.objects[" + std::to_string(i) + "]",
                               stringField(list[i], "apiVersion") + " " +
                                   stringField(list[i], "kind") +
                                   " is not a kind this operator may create (" + names +
                                   "; an admin adds kinds with the chart's objectKinds value)"));
  }
  return errors;
}

} // namespace csiop::api
