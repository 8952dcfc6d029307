#include "meta.hpp"

#include <csiop/render/render.hpp>

namespace csiop::render {

Json labels(const Effective& effective, const char* componentName) {
  return Json{
      {"app.kubernetes.io/name", effective.driverName},
      {"app.kubernetes.io/instance", effective.name},
      {"app.kubernetes.io/component", componentName},
      {"app.kubernetes.io/part-of", api::kManagedBy},
      {"app.kubernetes.io/managed-by", api::kManagedBy},
      {api::kOwnerLabel, effective.name},
  };
}

Json selectorLabels(const Effective& effective, const char* componentName) {
  return Json{{"app.kubernetes.io/instance", effective.name},
              {"app.kubernetes.io/component", componentName}};
}

Json object(const Effective& effective, const char* apiVersion, const char* kind,
            const std::string& name, const std::string& ns, const char* componentName) {
  Json meta = Json::object();
  meta["name"] = name;
  if (!ns.empty()) {
    meta["namespace"] = ns;
  }
  meta["labels"] = labels(effective, componentName);
  if (!effective.uid.empty()) {
    meta["ownerReferences"] = Json::array({Json{
        {"apiVersion", api::kApiVersion},
        {"kind", api::kKind},
        {"name", effective.name},
        {"uid", effective.uid},
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

std::string nodeName(const Effective& effective) {
  return effective.name + "-node";
}

std::string windowsNodeName(const Effective& effective) {
  return effective.name + "-node-windows";
}

std::string controllerName(const Effective& effective) {
  return effective.name + "-controller";
}

std::string controllerServiceAccount(const Effective& effective) {
  return effective.hasControllerWorkload() ? controllerName(effective) : nodeName(effective);
}

std::string rbacName(const Effective& effective, const std::string& what) {
  return "csiop:" + effective.name + ":" + what;
}

std::string ownerSelector(const std::string& driverDeploymentName) {
  return std::string(api::kOwnerLabel) + "=" + driverDeploymentName;
}

} // namespace csiop::render
