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
  const ObjectKind object{apiVersion, kind, ""};
  const std::string group = object.group().empty() ? "core" : object.group();
  return "io.k8s.api." + group.substr(0, group.find('.')) + "." + object.version() + "." + kind;
}

// The embedded fields as a tree of the DriverDeployment's fields that lead to them, so a
// document is walked once: a node is a field, a list of structs (`list`), or an embedded field
// (`definition`).
struct FieldNode {
  std::string key;
  bool list = false;
  std::string definition;
  std::vector<FieldNode> children;
};

std::vector<FieldNode> collect(const Json& tree, const std::string& parent) {
  std::vector<FieldNode> out;
  for (const auto& [key, sub] : tree.items()) {
    FieldNode node{key, false, {}, {}};
    if (sub.is_object() && sub.contains("[]")) {
      node.list = true;
      node.children = collect(sub["[]"], parent + (parent.empty() ? "" : ".") + key + "[]");
    } else if (sub.is_object()) {
      node.children = collect(sub, parent + (parent.empty() ? "" : ".") + key);
    } else if (sub == "json") {
      node.definition = embeddedDefinition(parent, key);
    }
    if (!node.definition.empty() || !node.children.empty()) {
      out.push_back(std::move(node));
    }
  }
  return out;
}

const std::vector<FieldNode>& fieldNodes() {
  static const std::vector<FieldNode> all = collect(fieldTree(), "");
  return all;
}

void definitionsUnder(const std::vector<FieldNode>& nodes, std::set<std::string>& out) {
  for (const auto& node : nodes) {
    if (node.definition == kControllerStrategy) {
      out.insert("io.k8s.api.apps.v1.DeploymentStrategy");
      out.insert("io.k8s.api.apps.v1.StatefulSetUpdateStrategy");
    } else if (!node.definition.empty() && node.definition != kObjects) {
      out.insert(node.definition.substr(0, node.definition.find('/')));
    }
    definitionsUnder(node.children, out);
  }
}

// The walk of one document: the path and the pointer's tokens of where it is.
struct DocumentWalk {
  const Json& document;
  const KubeSchema& schema;
  SchemaFindings& out;
  std::string path;
  std::vector<std::string> tokens;

  [[nodiscard]] Json::json_pointer pointer() const {
    Json::json_pointer p;
    for (const auto& token : tokens) {
      p /= token;
    }
    return p;
  }

  void enter(const std::string& text, std::string token) {
    path += text;
    tokens.push_back(std::move(token));
  }
  void leave(std::size_t length) {
    path.resize(length);
    tokens.pop_back();
  }

  void fields(const Json& value, const std::vector<FieldNode>& nodes) {
    for (const auto& node : nodes) {
      const Json& next = member(value, node.key);
      if (next.is_null()) {
        continue;
      }
      const std::size_t length = path.size();
      enter(path.empty() ? node.key : "." + node.key, node.key);
      if (!node.definition.empty()) {
        embedded(next, node);
      } else if (!node.list) {
        fields(next, node.children);
      } else if (next.is_array()) { // else the codec reports it
        for (std::size_t i = 0; i < next.size(); ++i) {
          const std::size_t itemLength = path.size();
          enter("[" + std::to_string(i) + "]", std::to_string(i));
          fields(next[i], node.children);
          leave(itemLength);
        }
      }
      leave(length);
    }
  }

  void embedded(const Json& value, const FieldNode& node) {
    if (node.definition == kObjects) {
      objects(value);
      return;
    }
    std::string definition = node.definition;
    if (definition == kControllerStrategy) {
      definition =
          stringField(member(member(document, "spec"), "controller"), "kind") == "StatefulSet"
              ? "io.k8s.api.apps.v1.StatefulSetUpdateStrategy"
              : "io.k8s.api.apps.v1.DeploymentStrategy";
    }
    schema.check(value, definition, path, pointer(), node.key == "podTemplatePatch", out);
  }

  void objects(const Json& list) {
    if (!list.is_array()) {
      return; // the CRD's schema says it is a list
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string definition =
          definitionOfKind(stringField(list[i], "apiVersion"), stringField(list[i], "kind"));
      // Kinds an admin added (a custom resource) have no schema here; the API server checks them.
      if (list[i].is_object() && schema.has(definition)) {
        schema.check(list[i], definition, path + "[" + std::to_string(i) + "]", pointer() / i,
                     false, out);
      }
    }
  }
};

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
  if (leaf == "rbacRules" || leaf == "namespacedRbacRules" || leaf == "rules" ||
      leaf == "controllerRbacRules" || leaf == "nodeRbacRules") {
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
  definitionsUnder(fieldNodes(), roots);
  for (const auto& kind : builtinObjectKinds()) {
    roots.insert(definitionOfKind(kind.apiVersion, kind.kind));
  }
  return {roots.begin(), roots.end()};
}

SchemaFindings checkEmbeddedFields(const Json& document, const KubeSchema& schema) {
  SchemaFindings out;
  if (document.is_object()) {
    DocumentWalk{document, schema, out, {}, {}}.fields(document, fieldNodes());
  }
  return out;
}

} // namespace csiop::api
