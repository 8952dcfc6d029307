#include <csiop/api/embedded_fields.hpp>

#include <set>

#include <csiop/api/codec.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/api/object_kinds.hpp>

namespace csiop::api {
namespace {

constexpr const char* kCore = "io.k8s.api.core.v1.";
constexpr const char* kControllerStrategy = "<controller strategy>";
constexpr const char* kObjects = "<objects>";

std::string core(const char* type) {
  return std::string(kCore) + type;
}

// "io.k8s.api.apps.v1.Deployment" for apps/v1 Deployment: how the API server names the
// definitions of its built-in kinds.
std::string definitionOfKind(const std::string& apiVersion, const std::string& kind) {
  const auto slash = apiVersion.find('/');
  const std::string group = slash == std::string::npos ? "core" : apiVersion.substr(0, slash);
  const std::string version =
      slash == std::string::npos ? apiVersion : apiVersion.substr(slash + 1);
  return "io.k8s.api." + group.substr(0, group.find('.')) + "." + version + "." + kind;
}

// One embedded field as the check walks to it: its path, "[]" after a list of structs.
struct Field {
  std::vector<std::string> segments; // "spec", "storageClasses[]", "allowedTopologies"
  std::string definition;
};

void collect(const Json& tree, const std::string& parent, std::vector<std::string>& segments,
             std::vector<Field>& out) {
  for (const auto& [key, sub] : tree.items()) {
    if (sub.is_object() && sub.contains("[]")) {
      segments.push_back(key + "[]");
      collect(sub["[]"], parent + (parent.empty() ? "" : ".") + key + "[]", segments, out);
      segments.pop_back();
    } else if (sub.is_object()) {
      segments.push_back(key);
      collect(sub, parent + (parent.empty() ? "" : ".") + key, segments, out);
      segments.pop_back();
    } else if (sub == "json") {
      if (std::string definition = embeddedDefinition(parent, key); !definition.empty()) {
        segments.push_back(key);
        out.push_back(Field{segments, std::move(definition)});
        segments.pop_back();
      }
    }
  }
}

const std::vector<Field>& fields() {
  static const std::vector<Field> all = [] {
    std::vector<Field> out;
    std::vector<std::string> segments;
    collect(fieldTree(), "", segments, out);
    return out;
  }();
  return all;
}

void checkObjects(const Json& objects, const std::string& path, const Json::json_pointer& pointer,
                  const KubeSchema& schema, SchemaFindings& out) {
  if (!objects.is_array()) {
    return; // the CRD's schema says it is a list
  }
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const std::string definition =
        definitionOfKind(stringField(objects[i], "apiVersion"), stringField(objects[i], "kind"));
    // Kinds an admin added (a custom resource) have no schema here; the API server checks them.
    if (objects[i].is_object() && schema.has(definition)) {
      schema.check(objects[i], definition, path + "[" + std::to_string(i) + "]", pointer / i, false,
                   out);
    }
  }
}

void checkAt(const Json& value, const Field& field, std::size_t segment, const std::string& path,
             const Json::json_pointer& pointer, const Json& document, const KubeSchema& schema,
             SchemaFindings& out) {
  const std::string& name = field.segments[segment];
  const bool list = name.ends_with("[]");
  const std::string key = list ? name.substr(0, name.size() - 2) : name;
  const Json& next = member(value, key);
  if (next.is_null()) {
    return;
  }
  const std::string nextPath = path.empty() ? key : path + "." + key;
  if (segment + 1 == field.segments.size()) {
    if (field.definition == kObjects) {
      checkObjects(next, nextPath, pointer / key, schema, out);
      return;
    }
    std::string definition = field.definition;
    if (definition == kControllerStrategy) {
      definition =
          stringField(member(member(document, "spec"), "controller"), "kind") == "StatefulSet"
              ? "io.k8s.api.apps.v1.StatefulSetUpdateStrategy"
              : "io.k8s.api.apps.v1.DeploymentStrategy";
    }
    schema.check(next, definition, nextPath, pointer / key, key == "podTemplatePatch", out);
    return;
  }
  if (!list) {
    checkAt(next, field, segment + 1, nextPath, pointer / key, document, schema, out);
    return;
  }
  if (!next.is_array()) {
    return; // the codec reports it
  }
  for (std::size_t i = 0; i < next.size(); ++i) {
    checkAt(next[i], field, segment + 1, nextPath + "[" + std::to_string(i) + "]",
            pointer / key / i, document, schema, out);
  }
}

} // namespace

std::string embeddedDefinition(const std::string& parent, const std::string& leaf) {
  if (leaf == "env") {
    return core("Container/env");
  }
  if (leaf == "resources") {
    return core("ResourceRequirements");
  }
  if (leaf == "ports") {
    return parent == "spec.services[]" ? core("ServiceSpec/ports") : core("Container/ports");
  }
  if (leaf == "volumes") {
    return core("PodSpec/volumes");
  }
  if (leaf == "volumeMounts") {
    return core("Container/volumeMounts");
  }
  if (leaf == "securityContext") {
    // Pod-level on the workloads, container-level on the containers.
    const bool pod =
        parent == "spec.node" || parent == "spec.windowsNode" || parent == "spec.controller";
    return pod ? core("PodSecurityContext") : core("SecurityContext");
  }
  if (leaf == "readinessProbe" || leaf == "startupProbe") {
    return core("Probe");
  }
  if (leaf == "lifecycle") {
    return core("Lifecycle");
  }
  if (leaf == "tolerations") {
    return core("PodSpec/tolerations");
  }
  if (leaf == "affinity") {
    return core("Affinity");
  }
  if (leaf == "topologySpreadConstraints") {
    return core("PodSpec/topologySpreadConstraints");
  }
  if (leaf == "initContainers") {
    return core("PodSpec/initContainers");
  }
  if (leaf == "extraContainers") {
    return core("PodSpec/containers");
  }
  if (leaf == "podTemplatePatch") {
    return core("PodTemplateSpec");
  }
  if (leaf == "allowedTopologies") {
    return "io.k8s.api.storage.v1.StorageClass/allowedTopologies";
  }
  if (leaf == "imagePullSecrets") {
    return core("PodSpec/imagePullSecrets");
  }
  if (leaf == "strategy") {
    return kControllerStrategy;
  }
  if (leaf == "rbacRules" || leaf == "namespacedRbacRules" || leaf == "rules") {
    return "io.k8s.api.rbac.v1.Role/rules";
  }
  if (leaf == "minAvailable" || leaf == "maxUnavailable" || leaf == "batchSize") {
    return "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
  }
  if (leaf == "objects") {
    return kObjects;
  }
  // metadata: the API server's own; the node plugins' updateStrategy: apps/v1's
  // DaemonSetUpdateStrategy with the operator's WhenVolumesUnused, checked by the CRD's schema.
  return "";
}

std::vector<std::string> embeddedDefinitionRoots() {
  std::set<std::string> roots;
  for (const auto& field : fields()) {
    if (field.definition == kControllerStrategy) {
      roots.insert("io.k8s.api.apps.v1.DeploymentStrategy");
      roots.insert("io.k8s.api.apps.v1.StatefulSetUpdateStrategy");
    } else if (field.definition != kObjects) {
      roots.insert(field.definition.substr(0, field.definition.find('/')));
    }
  }
  for (const auto& kind : builtinObjectKinds()) {
    roots.insert(definitionOfKind(kind.apiVersion, kind.kind));
  }
  return {roots.begin(), roots.end()};
}

SchemaFindings checkEmbeddedFields(const Json& document, const KubeSchema& schema) {
  SchemaFindings out;
  if (!document.is_object()) {
    return out;
  }
  for (const auto& field : fields()) {
    checkAt(document, field, 0, "", Json::json_pointer(), document, schema, out);
  }
  return out;
}

} // namespace csiop::api
