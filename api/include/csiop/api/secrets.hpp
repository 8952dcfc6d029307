// Secrets that StorageClass and VolumeSnapshotClass parameters make a sidecar read
// (csi.storage.k8s.io/<kind>-secret-name / -secret-namespace).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <csiop/api/images.hpp>
#include <csiop/api/types.hpp>

namespace csiop::api {

struct SecretReference {
  std::string kind;                      // e.g. "provisioner", "node-stage"
  std::optional<Component> reader;       // the sidecar that GETs it; nullopt: the kubelet
  std::optional<std::string> name;       // may hold ${pvc.name}-style templates
  std::optional<std::string> namespace_; // may hold ${pvc.namespace}
};

// Every secret kind the parameters of a StorageClass mention, in a fixed order.
std::vector<SecretReference> secretReferences(const StringMap& parameters);

// The same for a VolumeSnapshotClass (csi.storage.k8s.io/snapshotter-secret-* and
// snapshotter-list-secret-*, read by the snapshotter).
std::vector<SecretReference> snapshotSecretReferences(const StringMap& parameters);

// Every secret parameter kind, for validation messages and docs.
std::vector<std::string> secretKinds();

bool isTemplated(const std::string& value);

} // namespace csiop::api
