#include "companions.hpp"

namespace csiop::render {

std::vector<Json> renderConfigMaps(const Effective& effective) {
  std::vector<Json> out;
  for (const auto& cm : effective.configMaps) {
    Json obj =
        object(effective, "v1", "ConfigMap", cm.name, effective.namespace_, component::kConfig);
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

std::vector<Json> renderServices(const Effective& effective) {
  std::vector<Json> out;
  for (const auto& s : effective.services) {
    Json obj =
        object(effective, "v1", "Service", s.name, effective.namespace_, component::kService);
    addUserMetadata(obj, s.labels, s.annotations);
    Json spec = Json::object();
    spec["type"] = s.type.value_or("ClusterIP");
    if (s.clusterIP) {
      spec["clusterIP"] = *s.clusterIP;
    }
    spec["selector"] = selectorLabels(
        effective, s.component == "Controller" ? component::kController : component::kNode);
    spec["ports"] = s.ports.value_or(Json::array());
    obj["spec"] = std::move(spec);
    out.push_back(std::move(obj));
  }
  return out;
}

std::optional<Json> renderPodDisruptionBudget(const Effective& effective) {
  if (!effective.podDisruptionBudget || !effective.hasControllerWorkload()) {
    return std::nullopt;
  }
  const api::PodDisruptionBudgetSpec& pdb = *effective.podDisruptionBudget;
  Json obj = object(effective, "policy/v1", "PodDisruptionBudget", controllerName(effective),
                    effective.namespace_, component::kController);
  Json spec = Json::object();
  if (pdb.minAvailable) {
    spec["minAvailable"] = *pdb.minAvailable;
  }
  if (pdb.maxUnavailable) {
    spec["maxUnavailable"] = *pdb.maxUnavailable;
  }
  spec["selector"] = {{"matchLabels", selectorLabels(effective, component::kController)}};
  if (pdb.unhealthyPodEvictionPolicy) {
    spec["unhealthyPodEvictionPolicy"] = *pdb.unhealthyPodEvictionPolicy;
  }
  obj["spec"] = std::move(spec);
  return obj;
}

std::vector<Json> renderAggregatedClusterRoles(const Effective& effective) {
  std::vector<Json> out;
  for (const auto& r : effective.aggregatedClusterRoles) {
    Json obj = object(effective, "rbac.authorization.k8s.io/v1", "ClusterRole", r.name, "",
                      component::kRbac);
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

std::vector<Json> renderVolumeSnapshotClasses(const Effective& effective) {
  std::vector<Json> out;
  for (const auto& c : effective.volumeSnapshotClasses) {
    Json obj = object(effective, "snapshot.storage.k8s.io/v1", "VolumeSnapshotClass", c.name, "",
                      component::kSnapshotClass);
    Json annotations = Json::object();
    if (c.isDefault) {
      annotations["snapshot.storage.kubernetes.io/is-default-class"] =
          *c.isDefault ? "true" : "false";
    }
    addUserMetadata(obj, c.labels, c.annotations, annotations);
    obj["driver"] = effective.driverName;
    obj["deletionPolicy"] = c.deletionPolicy.value_or("Delete");
    if (c.parameters && !c.parameters->empty()) {
      obj["parameters"] = Json(*c.parameters);
    }
    out.push_back(std::move(obj));
  }
  return out;
}

std::vector<Json> renderObjects(const Effective& effective) {
  std::vector<Json> out;
  for (const Json& given : effective.objects) {
    if (!given.is_object()) {
      continue; // validation reports it
    }
    const Json meta = given.value("metadata", Json::object());
    Json obj =
        object(effective, given.value("apiVersion", "").c_str(), given.value("kind", "").c_str(),
               meta.value("name", ""), effective.namespace_, component::kObject);
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
