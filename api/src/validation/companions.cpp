// The companion objects of a driver: ConfigMaps, Services, VolumeSnapshotClasses, the
// controller's PodDisruptionBudget, secret access, further objects and required APIs.
#include "sections.hpp"

#include <csiop/api/formats.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/api/object_kinds.hpp>
#include <csiop/api/secrets.hpp>

namespace csiop::api::validation {
namespace {

constexpr std::size_t kMaxConfigMapBytes = 1024 * 1024; // the API server's limit
// Kinds that are cluster-scoped (or the operator's own singletons): never in spec.objects.
const std::set<std::string> kClusterScoped = {"Namespace",
                                              "Node",
                                              "PersistentVolume",
                                              "ClusterRole",
                                              "ClusterRoleBinding",
                                              "CSIDriver",
                                              "CSINode",
                                              "StorageClass",
                                              "PriorityClass",
                                              "VolumeAttachment",
                                              "VolumeSnapshotClass",
                                              "VolumeSnapshotContent",
                                              "CustomResourceDefinition",
                                              "APIService",
                                              "MutatingWebhookConfiguration",
                                              "ValidatingWebhookConfiguration",
                                              "ValidatingAdmissionPolicy",
                                              "ValidatingAdmissionPolicyBinding",
                                              "DriverDeployment"};

bool configKey(const std::string& key) {
  return !key.empty() && key.size() <= 253 && key != "." && key != ".." &&
         key.find_first_not_of(
             "-._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") ==
             std::string::npos;
}

bool base64(const std::string& s) {
  if (s.size() % 4 != 0) {
    return false;
  }
  const auto pad = s.find('=');
  if (pad != std::string::npos &&
      (pad < s.size() - 2 || s.find_first_not_of('=', pad) != std::string::npos)) {
    return false;
  }
  return s.substr(0, pad).find_first_not_of(
             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") ==
         std::string::npos;
}

// A name unique among its list.
void name(Validator& v, const std::string& path, const std::string& value,
          std::set<std::string>& seen, bool label) {
  if (value.empty()) {
    v.add(required(path));
    return;
  }
  v.format(path, value, label ? formats::dns1123Label(value) : formats::dns1123Subdomain(value));
  if (!seen.insert(value).second) {
    v.add(duplicate(path, value));
  }
}

void configMaps(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.configMaps) {
    return;
  }
  const std::string p = "spec.configMaps";
  if (spec.configMaps->size() > kMaxCompanions) {
    v.add(tooMany(p, spec.configMaps->size(), kMaxCompanions));
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < spec.configMaps->size(); ++i) {
    const ConfigMapSpec& cm = (*spec.configMaps)[i];
    const std::string ip = idx(p, i);
    name(v, ip + ".name", cm.name, names, false);
    userMetadata(v, ip, cm.labels, cm.annotations);
    std::size_t bytes = 0;
    for (const auto& [key, value] : cm.data.value_or(StringMap{})) {
      if (!configKey(key)) {
        v.add(invalid(ip + ".data", key,
                      "a key must consist of alphanumeric characters, '-', '_' or '.'"));
      }
      bytes += key.size() + value.size();
    }
    for (const auto& [key, value] : cm.binaryData.value_or(StringMap{})) {
      const std::string kp = ip + ".binaryData[" + key + "]";
      if (!configKey(key)) {
        v.add(invalid(ip + ".binaryData", key,
                      "a key must consist of alphanumeric characters, '-', '_' or '.'"));
      }
      if (cm.data && cm.data->contains(key)) {
        v.add(duplicate(kp, key));
      }
      if (!base64(value)) {
        v.add(invalid(kp, value, "must be base64-encoded"));
      }
      bytes += key.size() + value.size() / 4 * 3;
    }
    if (bytes > kMaxConfigMapBytes) {
      v.add(tooLong(ip + ".data", std::to_string(bytes) + " bytes", kMaxConfigMapBytes));
    }
  }
}

void servicePorts(Validator& v, const std::string& path, const std::optional<Json>& ports,
                  const std::string& type) {
  if (!ports || (ports->is_array() && ports->empty())) {
    v.add(required(path, "a Service needs at least one port"));
    return;
  }
  if (!ports->is_array()) {
    v.add(invalid(path, *ports, "must be a list of ServicePort"));
    return;
  }
  std::set<std::string> names;
  for (std::size_t j = 0; j < ports->size(); ++j) {
    const Json& port = (*ports)[j];
    const std::string jp = idx(path, j);
    if (!port.is_object()) {
      v.add(invalid(jp, port, "must be a ServicePort object"));
      continue;
    }
    const Json& number = member(port, "port");
    if (!number.is_number_integer()) {
      v.add(required(jp + ".port"));
    } else {
      v.port(jp + ".port", number.get<std::int64_t>());
    }
    const std::string portName = stringField(port, "name");
    if (portName.empty() && ports->size() > 1) {
      v.add(required(jp + ".name", "every port of a Service with several ports needs a name"));
    } else if (!portName.empty()) {
      v.format(jp + ".name", portName, formats::dns1123Label(portName));
      if (!names.insert(portName).second) {
        v.add(duplicate(jp + ".name", portName));
      }
    }
    if (const Json& protocol = member(port, "protocol"); !protocol.is_null()) {
      v.oneOf(jp + ".protocol", protocol.is_string() ? protocol.get<std::string>() : "",
              {"TCP", "UDP", "SCTP"});
    }
    if (const Json& target = member(port, "targetPort"); target.is_number_integer()) {
      v.port(jp + ".targetPort", target.get<std::int64_t>());
    } else if (target.is_string()) {
      v.format(jp + ".targetPort", target.get<std::string>(),
               formats::portName(target.get<std::string>()));
    } else if (!target.is_null()) {
      v.add(invalid(jp + ".targetPort", target, "must be a port number or a port name"));
    }
    if (const Json& nodePort = member(port, "nodePort"); !nodePort.is_null()) {
      if (type == "ClusterIP") {
        v.add(forbidden(jp + ".nodePort", "may only be set with type NodePort or LoadBalancer"));
      } else if (!nodePort.is_number_integer()) {
        v.add(invalid(jp + ".nodePort", nodePort, "must be a port number"));
      } else {
        v.port(jp + ".nodePort", nodePort.get<std::int64_t>());
      }
    }
  }
}

void services(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.services) {
    return;
  }
  const std::string p = "spec.services";
  if (spec.services->size() > kMaxCompanions) {
    v.add(tooMany(p, spec.services->size(), kMaxCompanions));
  }
  const bool controllerPods =
      spec.controller && spec.controller->placement.value_or(defaults::kPlacementWorkload) ==
                             defaults::kPlacementWorkload;
  std::set<std::string> names;
  for (std::size_t i = 0; i < spec.services->size(); ++i) {
    const ServiceSpec& s = (*spec.services)[i];
    const std::string ip = idx(p, i);
    name(v, ip + ".name", s.name, names, true);
    if (s.component.empty()) {
      v.add(required(ip + ".component", "Node or Controller: the pods the Service selects"));
    } else {
      v.oneOf(ip + ".component", s.component, {"Node", "Controller"});
      if (s.component == "Controller" && !controllerPods) {
        v.add(forbidden(ip + ".component",
                        "Controller needs spec.controller with placement Workload (the "
                        "controller sidecars have no pods of their own otherwise)"));
      }
    }
    const std::string type = s.type.value_or("ClusterIP");
    v.oneOf(ip + ".type", type, {"ClusterIP", "NodePort", "LoadBalancer"});
    if (s.clusterIP && *s.clusterIP != "None") {
      v.add(unsupported(ip + ".clusterIP", *s.clusterIP, {"None"}));
    } else if (s.clusterIP && type != "ClusterIP") {
      v.add(forbidden(ip + ".clusterIP", "a headless Service must be of type ClusterIP"));
    }
    servicePorts(v, ip + ".ports", s.ports, type);
    userMetadata(v, ip, s.labels, s.annotations);
  }
}

void volumeSnapshotClasses(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.volumeSnapshotClasses) {
    return;
  }
  const std::string p = "spec.volumeSnapshotClasses";
  const auto& list = *spec.volumeSnapshotClasses;
  if (list.size() > kMaxStorageClasses) {
    v.add(tooMany(p, list.size(), kMaxStorageClasses));
  }
  const bool snapshotter = spec.controller && spec.controller->snapshotter.has_value()
                               ? spec.controller->snapshotter->enabled.value_or(true)
                               : spec.controller.has_value();
  std::set<std::string> names;
  std::size_t defaults = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const VolumeSnapshotClassSpec& c = list[i];
    const std::string ip = idx(p, i);
    name(v, ip + ".name", c.name, names, false);
    if (c.deletionPolicy) {
      v.oneOf(ip + ".deletionPolicy", *c.deletionPolicy, {"Delete", "Retain"});
    }
    if (c.isDefault.value_or(false) && ++defaults > 1) {
      v.add(forbidden(ip + ".isDefault", "at most one VolumeSnapshotClass may be the default"));
    }
    userMetadata(v, ip, c.labels, c.annotations);
    secretParameters(v, ip + ".parameters",
                     snapshotSecretReferences(c.parameters.value_or(StringMap{})));
  }
  if (!list.empty() && !snapshotter) {
    v.warn("spec.volumeSnapshotClasses: the driver has no snapshotter (spec.controller."
           "snapshotter), so snapshots of these classes are never taken");
  }
}

void aggregatedClusterRoles(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.aggregatedClusterRoles) {
    return;
  }
  const std::string p = "spec.aggregatedClusterRoles";
  const auto& list = *spec.aggregatedClusterRoles;
  if (list.size() > kMaxCompanions) {
    v.add(tooMany(p, list.size(), kMaxCompanions));
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const AggregatedClusterRole& r = list[i];
    const std::string ip = idx(p, i);
    name(v, ip + ".name", r.name, names, false);
    if (r.aggregateTo.empty()) {
      v.add(required(ip + ".aggregateTo", "name at least one of admin, edit, view"));
    }
    std::set<std::string> to;
    for (std::size_t j = 0; j < r.aggregateTo.size(); ++j) {
      v.oneOf(idx(ip + ".aggregateTo", j), r.aggregateTo[j], {"admin", "edit", "view"});
      if (!to.insert(r.aggregateTo[j]).second) {
        v.add(duplicate(idx(ip + ".aggregateTo", j), r.aggregateTo[j]));
      }
    }
    if (!r.rules || !r.rules->is_array() || r.rules->empty()) {
      v.add(required(ip + ".rules", "a role without rules grants nothing"));
    } else {
      v.rbacRules(ip + ".rules", r.rules);
    }
    userMetadata(v, ip, r.labels, r.annotations);
  }
}

void podDisruptionBudget(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.controller || !spec.controller->podDisruptionBudget) {
    return;
  }
  const std::string p = "spec.controller.podDisruptionBudget";
  const PodDisruptionBudgetSpec& pdb = *spec.controller->podDisruptionBudget;
  if (spec.controller->placement.value_or(defaults::kPlacementWorkload) !=
      defaults::kPlacementWorkload) {
    v.add(forbidden(p, "needs placement Workload (in the node plugin's pods the controller "
                       "has no pods of its own)"));
  }
  if (pdb.minAvailable && pdb.maxUnavailable) {
    v.add(forbidden(p, "minAvailable and maxUnavailable cannot both be set"));
  } else if (!pdb.minAvailable && !pdb.maxUnavailable) {
    v.add(required(p + ".maxUnavailable", "one of minAvailable and maxUnavailable is needed"));
  }
  if (pdb.minAvailable) {
    v.intOrPercent(p + ".minAvailable", *pdb.minAvailable);
  }
  if (pdb.maxUnavailable) {
    v.intOrPercent(p + ".maxUnavailable", *pdb.maxUnavailable);
  }
  if (pdb.unhealthyPodEvictionPolicy) {
    v.oneOf(p + ".unhealthyPodEvictionPolicy", *pdb.unhealthyPodEvictionPolicy,
            {"IfHealthyBudget", "AlwaysAllow"});
  }
}

void secretAccess(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.secretAccess) {
    return;
  }
  const std::string p = "spec.secretAccess";
  if (spec.secretAccess->size() > kMaxCompanions) {
    v.add(tooMany(p, spec.secretAccess->size(), kMaxCompanions));
  }
  for (std::size_t i = 0; i < spec.secretAccess->size(); ++i) {
    const SecretAccess& a = (*spec.secretAccess)[i];
    const std::string ip = idx(p, i);
    if (a.namespace_) {
      v.format(ip + ".namespace", *a.namespace_, formats::dns1123Label(*a.namespace_));
    }
    if (a.names) {
      if (a.names->empty()) {
        v.add(required(ip + ".names", "leave it out for any Secret of the namespace"));
      }
      std::set<std::string> seen;
      for (std::size_t j = 0; j < a.names->size(); ++j) {
        name(v, idx(ip + ".names", j), (*a.names)[j], seen, false);
      }
    }
    if (a.serviceAccounts) {
      if (a.serviceAccounts->empty()) {
        v.add(required(ip + ".serviceAccounts", "Controller, Node or both"));
      }
      for (std::size_t j = 0; j < a.serviceAccounts->size(); ++j) {
        const std::string& who = (*a.serviceAccounts)[j];
        v.oneOf(idx(ip + ".serviceAccounts", j), who, {"Controller", "Node"});
        if (who == "Controller" && !spec.controller) {
          v.add(forbidden(idx(ip + ".serviceAccounts", j), "Controller needs spec.controller"));
        }
      }
    } else if (!spec.controller) {
      v.add(required(ip + ".serviceAccounts",
                     "the default is Controller, and the driver has no spec.controller"));
    }
  }
}

void objects(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.objects) {
    return;
  }
  const std::string p = "spec.objects";
  const Json& list = *spec.objects;
  if (!list.is_array()) {
    v.add(invalid(p, list, "must be a list of Kubernetes objects"));
    return;
  }
  if (list.size() > kMaxCompanions) {
    v.add(tooMany(p, list.size(), kMaxCompanions));
  }
  const std::string ns = spec.namespace_.value_or("");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& o = list[i];
    const std::string ip = idx(p, i);
    if (!o.is_object()) {
      v.add(invalid(ip, o, "must be a Kubernetes object"));
      continue;
    }
    const std::string apiVersion = stringField(o, "apiVersion");
    const std::string kind = stringField(o, "kind");
    if (apiVersion.empty()) {
      v.add(required(ip + ".apiVersion"));
    }
    if (kind.empty()) {
      v.add(required(ip + ".kind"));
    } else if (kClusterScoped.contains(kind)) {
      v.add(forbidden(ip + ".kind", kind + " is cluster-scoped; spec.objects holds objects of "
                                           "the driver's namespace only"));
    }
    const Json& meta = member(o, "metadata");
    const std::string objectName = stringField(meta, "name");
    if (objectName.empty()) {
      v.add(required(ip + ".metadata.name"));
    } else {
      v.format(ip + ".metadata.name", objectName, formats::dns1123Subdomain(objectName));
      if (!seen.insert(apiVersion + "/" + kind + "/" + objectName).second) {
        v.add(duplicate(ip + ".metadata.name", objectName));
      }
    }
    if (const Json& objectNs = member(meta, "namespace"); !objectNs.is_null()) {
      if (!objectNs.is_string() || objectNs.get<std::string>() != ns) {
        v.add(invalid(ip + ".metadata.namespace", objectNs,
                      "must be left out: the object goes into the driver's namespace"));
      }
    }
    for (const char* field : {"generateName", "ownerReferences", "finalizers", "uid",
                              "resourceVersion", "creationTimestamp", "managedFields"}) {
      if (!member(meta, field).is_null()) {
        v.add(forbidden(ip + ".metadata." + field, "is set by the operator or the API server"));
      }
    }
    if (!member(o, "status").is_null()) {
      v.add(forbidden(ip + ".status", "is written by the object's own controller"));
    }
    for (const char* field : {"labels", "annotations"}) {
      const Json& map = member(meta, field);
      if (map.is_null()) {
        continue;
      }
      if (!map.is_object()) {
        v.add(invalid(ip + ".metadata." + field, map, "must be a map of strings"));
        continue;
      }
      StringMap strings;
      for (const auto& [key, value] : map.items()) {
        if (!value.is_string()) {
          v.add(invalid(ip + ".metadata." + field + "[" + key + "]", value, "must be a string"));
        } else {
          strings[key] = value.get<std::string>();
        }
      }
      v.labels(ip + ".metadata." + field, strings, std::string(field) == "labels");
    }
  }
}

void requiredAPIs(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.requiredAPIs) {
    return;
  }
  const std::string p = "spec.requiredAPIs";
  for (std::size_t i = 0; i < spec.requiredAPIs->size(); ++i) {
    const std::string& api = (*spec.requiredAPIs)[i];
    const auto gvr = parseGroupVersionResource(api);
    const bool ok = gvr && formats::dns1123Label(gvr->resource).empty() &&
                    formats::dns1123Label(gvr->version).empty() &&
                    (gvr->group.empty() || formats::dns1123Subdomain(gvr->group).empty());
    if (!ok) {
      v.add(invalid(idx(p, i), api,
                    "must be GROUP/VERSION/RESOURCE (VERSION/RESOURCE for the core group), e.g. "
                    "snapshot.storage.k8s.io/v1/volumesnapshotclasses"));
    }
  }
}

// spec.additionalNamespaces: each a namespace of its own, with the rules of the pods that use it.
void additionalNamespaces(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.additionalNamespaces) {
    return;
  }
  const std::string p = "spec.additionalNamespaces";
  constexpr std::size_t kMaxNamespaces = 8;
  if (spec.additionalNamespaces->size() > kMaxNamespaces) {
    v.add(tooMany(p, spec.additionalNamespaces->size(), kMaxNamespaces));
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < spec.additionalNamespaces->size(); ++i) {
    const AdditionalNamespace& n = (*spec.additionalNamespaces)[i];
    const std::string ip = idx(p, i);
    if (n.name.empty()) {
      v.add(required(ip + ".name"));
    } else {
      v.format(ip + ".name", n.name, formats::dns1123Label(n.name));
      if (!seen.insert(n.name).second) {
        v.add(duplicate(ip + ".name", n.name));
      }
    }
    v.rbacRules(ip + ".controllerRbacRules", n.controllerRbacRules);
    v.rbacRules(ip + ".nodeRbacRules", n.nodeRbacRules);
    if (n.controllerRbacRules && !spec.controller) {
      v.add(forbidden(ip + ".controllerRbacRules",
                      "there is no spec.controller: the node plugin's rules are nodeRbacRules"));
    }
  }
}

} // namespace

void companions(Validator& v, const DriverDeploymentSpec& spec) {
  configMaps(v, spec);
  services(v, spec);
  volumeSnapshotClasses(v, spec);
  podDisruptionBudget(v, spec);
  secretAccess(v, spec);
  additionalNamespaces(v, spec);
  aggregatedClusterRoles(v, spec);
  objects(v, spec);
  requiredAPIs(v, spec);
}

} // namespace csiop::api::validation
