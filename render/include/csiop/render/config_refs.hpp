// The ConfigMaps and Secrets a rendered workload depends on, and the pod
// template annotation that makes it roll when their content changes. Pure: the
// reconciler reads the objects and computes the hash.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/defaults.hpp>
#include <csiop/api/types.hpp>

namespace csiop::render {

using api::Json;

// On a workload's pod template: a hash of the content of every ConfigMap and
// Secret it references, so that a change of one rolls the pods.
inline constexpr const char* kConfigHashAnnotation = "csiop.dev/config-hash";

struct ConfigReference {
  std::string kind; // ConfigMap | Secret
  std::string namespace_;
  std::string name;
  bool optional = false; // the pod starts without it (optional: true)

  auto operator<=>(const ConfigReference&) const = default;
  [[nodiscard]] std::string str() const; // "ConfigMap ns/name"
};

// What the pod template of a DaemonSet, Deployment or StatefulSet references in
// its own namespace (containers' and init containers' env valueFrom and
// envFrom, volumes' configMap, secret and projected sources), sorted and
// without duplicates; empty for other kinds.
std::vector<ConfigReference> configReferences(const Json& workload);

// The secrets the StorageClasses name with a fixed name and namespace (no
// ${pvc.name}-style template): those read by the controller's sidecars
// (provisioner, controller-publish, controller-expand) when `controller`,
// else those the kubelet passes to the node plugin (node-stage, -publish,
// -expand).
std::vector<ConfigReference> storageClassSecrets(const api::Effective& effective, bool controller);

// The StorageClass secrets the pods of a rendered workload of `effective` read, known by the
// workload's component label: the kubelet's (storageClassSecrets(false)) on the node plugins',
// the controller sidecars' (storageClassSecrets(true)) wherever they run: their own workload,
// or the Linux node plugin with controller placement NodePlugin. Sorted, without duplicates;
// empty for anything else.
std::vector<ConfigReference> storageClassSecretsOf(const api::Effective& effective,
                                                   const Json& workload);

// Sets kConfigHashAnnotation on the workload's pod template.
void setConfigHash(Json& workload, const std::string& hash);
// The workload's current kConfigHashAnnotation, "" if none.
std::string configHash(const Json& workload);

} // namespace csiop::render
