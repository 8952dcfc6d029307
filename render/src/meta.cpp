#include "meta.hpp"

#include <csiop/render/render.hpp>

namespace csiop::render {

Json labels(const Effective& e, const char* componentName) {
  return Json{
      {"app.kubernetes.io/name", e.driverName},
      {"app.kubernetes.io/instance", e.name},
      {"app.kubernetes.io/component", componentName},
      {"app.kubernetes.io/part-of", api::kManagedBy},
      {"app.kubernetes.io/managed-by", api::kManagedBy},
      {api::kOwnerLabel, e.name},
  };
}

Json selectorLabels(const Effective& e, const char* componentName) {
  return Json{{"app.kubernetes.io/instance", e.name},
              {"app.kubernetes.io/component", componentName}};
}

Json object(const Effective& e, const char* apiVersion, const char* kind, const std::string& name,
            const std::string& ns, const char* componentName) {
  Json meta = Json::object();
  meta["name"] = name;
  if (!ns.empty()) {
    meta["namespace"] = ns;
  }
  meta["labels"] = labels(e, componentName);
  if (!e.uid.empty()) {
    meta["ownerReferences"] = Json::array({Json{
        {"apiVersion", api::kApiVersion},
        {"kind", api::kKind},
        {"name", e.name},
        {"uid", e.uid},
        {"controller", true},
        {"blockOwnerDeletion", true},
    }});
  }
  return Json{{"apiVersion", apiVersion}, {"kind", kind}, {"metadata", std::move(meta)}};
}

void addUserMetadata(Json& obj, const std::optional<api::StringMap>& userLabels,
                     const std::optional<api::StringMap>& userAnnotations, const Json& ours) {
  Json& meta = obj["metadata"];
  for (const auto& [k, v] : userLabels.value_or(api::StringMap{})) {
    if (!meta["labels"].contains(k)) {
      meta["labels"][k] = v;
    }
  }
  Json annotations = Json::object();
  for (const auto& [k, v] : userAnnotations.value_or(api::StringMap{})) {
    annotations[k] = v;
  }
  for (const auto& [k, v] : ours.items()) {
    annotations[k] = v;
  }
  if (annotations.empty()) {
    return;
  }
  // Keep metadata's key order stable: annotations right after labels.
  Json ordered = Json::object();
  for (const auto& [k, v] : meta.items()) {
    ordered[k] = v;
    if (k == "labels") {
      ordered["annotations"] = annotations;
    }
  }
  meta = std::move(ordered);
}

std::string nodeName(const Effective& e) {
  return e.name + "-node";
}

std::string windowsNodeName(const Effective& e) {
  return e.name + "-node-windows";
}

std::string controllerName(const Effective& e) {
  return e.name + "-controller";
}

std::string controllerServiceAccount(const Effective& e) {
  return e.hasControllerWorkload() ? controllerName(e) : nodeName(e);
}

std::string rbacName(const Effective& e, const std::string& what) {
  return "csiop:" + e.name + ":" + what;
}

std::string ownerSelector(const std::string& driverDeploymentName) {
  return std::string(api::kOwnerLabel) + "=" + driverDeploymentName;
}

} // namespace csiop::render
