// Object headers shared by every rendered kind: names, labels, owner references.
#pragma once

#include <optional>
#include <string>

#include <csiop/api/defaults.hpp>

namespace csiop::render {

using api::Effective;
using api::Json;

// Component label values.
namespace component {
inline constexpr const char* kNamespace = "namespace";
inline constexpr const char* kCSIDriver = "csi-driver";
inline constexpr const char* kNode = "node-plugin";
inline constexpr const char* kWindowsNode = "windows-node-plugin";
inline constexpr const char* kController = "controller-plugin";
inline constexpr const char* kRbac = "rbac";
inline constexpr const char* kStorageClass = "storage-class";
inline constexpr const char* kConfig = "config";
inline constexpr const char* kService = "service";
inline constexpr const char* kSnapshotClass = "snapshot-class";
inline constexpr const char* kObject = "object";
} // namespace component

Json labels(const Effective& effective, const char* componentName);
Json selectorLabels(const Effective& effective, const char* componentName);

// {apiVersion, kind, metadata{name, [namespace], labels, [ownerReferences]}}.
// Owner references are set only when the DriverDeployment's uid is known.
Json object(const Effective& effective, const char* apiVersion, const char* kind,
            const std::string& name, const std::string& ns, const char* componentName);

// A user's labels (added where the operator's own have no such key) and annotations (with
// `ours` over them), the annotations placed right after the labels.
void addUserMetadata(Json& obj, const std::optional<api::StringMap>& userLabels,
                     const std::optional<api::StringMap>& userAnnotations,
                     const Json& ours = Json::object());

std::string nodeName(const Effective& effective);        // DaemonSet, ServiceAccount
std::string windowsNodeName(const Effective& effective); // the Windows node plugin's DaemonSet
std::string controllerName(const Effective& effective);  // Deployment/StatefulSet, ServiceAccount
// The ServiceAccount the controller sidecars run as: the controller workload's, or the
// node plugin's when they run in its pods.
std::string controllerServiceAccount(const Effective& effective);
std::string rbacName(const Effective& effective, const std::string& what);

} // namespace csiop::render
