#include "storage.hpp"

#include <set>

#include <csiop/render/render.hpp>

namespace csiop::render {
namespace {

bool isSystemNamespace(const std::string& ns) {
  static const std::set<std::string> system = {"default", "kube-system", "kube-public",
                                               "kube-node-lease"};
  return system.contains(ns);
}

} // namespace

std::vector<Json> renderNamespace(const Effective& effective) {
  std::vector<Json> out;
  if (!effective.createNamespace) {
    return out;
  }
  // Created if missing, never owned: a namespace may hold things that are not
  // ours, so it gets no owner reference and is never deleted by the operator.
  const auto add = [&](const std::string& name) {
    if (isSystemNamespace(name)) {
      return;
    }
    out.push_back(
        Json{{"apiVersion", "v1"},
             {"kind", "Namespace"},
             {"metadata", {{"name", name}, {"labels", labels(effective, component::kNamespace)}}}});
  };
  add(effective.namespace_);
  if (!out.empty()) {
    // Node plugins are privileged pods; Pod Security Admission must allow them.
    out.back()["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] = "privileged";
  }
  // A driver's further namespaces hold its own objects (OpenEBS LVM LocalPV's LVMVolumes, whose
  // deletion destroys the volumes' data), no pods: never deleted either, whatever deletionPolicy.
  for (const auto& n : effective.additionalNamespaces) {
    add(n.name);
  }
  return out;
}

Json renderCSIDriver(const Effective& effective, bool v1) {
  const auto& d = effective.csiDriver;
  Json obj = object(effective, v1 ? "storage.k8s.io/v1" : "csi.storage.k8s.io/v1alpha1",
                    "CSIDriver", effective.driverName, "", component::kCSIDriver);
  if (!effective.uid.empty()) {
    obj["metadata"]["annotations"] = Json{{api::kOwnerUidAnnotation, effective.uid}};
  }
  Json spec = Json::object();
  spec["attachRequired"] = d.attachRequired;
  if (!v1) {
    // The 1.12/1.13 CRD knows only these two fields.
    if (d.podInfoOnMount) {
      spec["podInfoOnMountVersion"] = "v1";
    }
    obj["spec"] = std::move(spec);
    return obj;
  }
  spec["podInfoOnMount"] = d.podInfoOnMount;
  spec["volumeLifecycleModes"] = d.volumeLifecycleModes;
  spec["storageCapacity"] = d.storageCapacity;
  spec["fsGroupPolicy"] = d.fsGroupPolicy;
  if (d.tokenRequests) {
    Json trs = Json::array();
    for (const auto& tr : *d.tokenRequests) {
      Json t = Json{{"audience", tr.audience}};
      if (tr.expirationSeconds) {
        t["expirationSeconds"] = *tr.expirationSeconds;
      }
      trs.push_back(std::move(t));
    }
    spec["tokenRequests"] = std::move(trs);
  }
  spec["requiresRepublish"] = d.requiresRepublish;
  if (d.seLinuxMount) {
    spec["seLinuxMount"] = *d.seLinuxMount;
  }
  if (d.nodeAllocatableUpdatePeriodSeconds) {
    spec["nodeAllocatableUpdatePeriodSeconds"] = *d.nodeAllocatableUpdatePeriodSeconds;
  }
  if (d.serviceAccountTokenInSecrets) {
    spec["serviceAccountTokenInSecrets"] = *d.serviceAccountTokenInSecrets;
  }
  if (d.preventPodSchedulingIfMissing) {
    spec["preventPodSchedulingIfMissing"] = *d.preventPodSchedulingIfMissing;
  }
  obj["spec"] = std::move(spec);
  return obj;
}

std::vector<Json> renderStorageClasses(const Effective& effective) {
  std::vector<Json> out;
  for (const auto& sc : effective.storageClasses) {
    Json obj = object(effective, "storage.k8s.io/v1", "StorageClass", sc.name, "",
                      component::kStorageClass);
    Json annotations = Json::object();
    if (sc.isDefault) {
      annotations["storageclass.kubernetes.io/is-default-class"] = *sc.isDefault ? "true" : "false";
    }
    addUserMetadata(obj, sc.labels, sc.annotations, annotations);
    obj["provisioner"] = effective.driverName;
    if (sc.parameters && !sc.parameters->empty()) {
      Json params = Json::object();
      for (const auto& [k, v] : *sc.parameters) {
        params[k] = v;
      }
      obj["parameters"] = std::move(params);
    }
    if (sc.reclaimPolicy) {
      obj["reclaimPolicy"] = *sc.reclaimPolicy;
    }
    if (sc.volumeBindingMode) {
      obj["volumeBindingMode"] = *sc.volumeBindingMode;
    }
    if (sc.allowVolumeExpansion) {
      obj["allowVolumeExpansion"] = *sc.allowVolumeExpansion;
    }
    if (sc.mountOptions) {
      obj["mountOptions"] = *sc.mountOptions;
    }
    if (sc.allowedTopologies) {
      obj["allowedTopologies"] = *sc.allowedTopologies;
    }
    out.push_back(std::move(obj));
  }
  return out;
}

} // namespace csiop::render
