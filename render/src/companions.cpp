#include "companions.hpp"

namespace csiop::render {

std::vector<Json> renderConfigMaps(const Effective& e) {
  std::vector<Json> out;
  for (const auto& cm : e.configMaps) {
    Json obj = object(e, "v1", "ConfigMap", cm.name, e.namespace_, component::kConfig);
    addUserMetadata(obj, cm.labels, cm.annotations);
    if (cm.data) {
      obj["data"] = Json(*cm.data);
    }
    if (cm.binaryData) {
      obj["binaryData"] = Json(*cm.binaryData);
    }
    out.push_back(std::move(obj));
  }
  return out;
}

std::vector<Json> renderServices(const Effective& e) {
  std::vector<Json> out;
  for (const auto& s : e.services) {
    Json obj = object(e, "v1", "Service", s.name, e.namespace_, component::kService);
    addUserMetadata(obj, s.labels, s.annotations);
    Json spec = Json::object();
    spec["type"] = s.type.value_or("ClusterIP");
    if (s.clusterIP) {
      spec["clusterIP"] = *s.clusterIP;
    }
    spec["selector"] =
        selectorLabels(e, s.component == "Controller" ? component::kController : component::kNode);
    spec["ports"] = s.ports.value_or(Json::array());
    obj["spec"] = std::move(spec);
    out.push_back(std::move(obj));
  }
  return out;
}

std::optional<Json> renderPodDisruptionBudget(const Effective& e) {
  if (!e.podDisruptionBudget || !e.hasControllerWorkload()) {
    return std::nullopt;
  }
  const api::PodDisruptionBudgetSpec& pdb = *e.podDisruptionBudget;
  Json obj = object(e, "policy/v1", "PodDisruptionBudget", controllerName(e), e.namespace_,
                    component::kController);
  Json spec = Json::object();
  if (pdb.minAvailable) {
    spec["minAvailable"] = *pdb.minAvailable;
  }
  if (pdb.maxUnavailable) {
    spec["maxUnavailable"] = *pdb.maxUnavailable;
  }
  spec["selector"] = {{"matchLabels", selectorLabels(e, component::kController)}};
  if (pdb.unhealthyPodEvictionPolicy) {
    spec["unhealthyPodEvictionPolicy"] = *pdb.unhealthyPodEvictionPolicy;
  }
  obj["spec"] = std::move(spec);
  return obj;
}

std::vector<Json> renderAggregatedClusterRoles(const Effective& e) {
  std::vector<Json> out;
  for (const auto& r : e.aggregatedClusterRoles) {
    Json obj =
        object(e, "rbac.authorization.k8s.io/v1", "ClusterRole", r.name, "", component::kRbac);
    // The aggregation labels go with the operator's, before the user's.
    for (const auto& to : r.aggregateTo) {
      obj["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-" + to] = "true";
    }
    addUserMetadata(obj, r.labels, r.annotations);
    obj["rules"] = r.rules.value_or(Json::array());
    out.push_back(std::move(obj));
  }
  return out;
}

std::vector<Json> renderVolumeSnapshotClasses(const Effective& e) {
  std::vector<Json> out;
  for (const auto& c : e.volumeSnapshotClasses) {
    Json obj = object(e, "snapshot.storage.k8s.io/v1", "VolumeSnapshotClass", c.name, "",
                      component::kSnapshotClass);
    Json annotations = Json::object();
    if (c.isDefault) {
      annotations["snapshot.storage.kubernetes.io/is-default-class"] =
          *c.isDefault ? "true" : "false";
    }
    addUserMetadata(obj, c.labels, c.annotations, annotations);
    obj["driver"] = e.driverName;
    obj["deletionPolicy"] = c.deletionPolicy.value_or("Delete");
    if (c.parameters && !c.parameters->empty()) {
      obj["parameters"] = Json(*c.parameters);
    }
    out.push_back(std::move(obj));
  }
  return out;
}

std::vector<Json> renderObjects(const Effective& e) {
  std::vector<Json> out;
  for (const Json& given : e.objects) {
    if (!given.is_object()) {
      continue; // validation reports it
    }
    const Json meta = given.value("metadata", Json::object());
    Json obj = object(e, given.value("apiVersion", "").c_str(), given.value("kind", "").c_str(),
                      meta.value("name", ""), e.namespace_, component::kObject);
    const auto strings = [&](const char* field) {
      std::optional<api::StringMap> map;
      if (const auto it = meta.find(field); it != meta.end() && it->is_object()) {
        map.emplace();
        for (const auto& [k, v] : it->items()) {
          if (v.is_string()) {
            (*map)[k] = v.get<std::string>();
          }
        }
      }
      return map;
    };
    addUserMetadata(obj, strings("labels"), strings("annotations"));
    for (const auto& [key, value] : given.items()) {
      if (key != "apiVersion" && key != "kind" && key != "metadata") {
        obj[key] = value;
      }
    }
    out.push_back(std::move(obj));
  }
  return out;
}

} // namespace csiop::render
