// Object headers shared by every rendered kind: names, labels, owner references.
#pragma once

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
inline constexpr const char* kController = "controller-plugin";
inline constexpr const char* kRbac = "rbac";
inline constexpr const char* kStorageClass = "storage-class";
} // namespace component

Json labels(const Effective& e, const char* componentName);
Json selectorLabels(const Effective& e, const char* componentName);

// {apiVersion, kind, metadata{name, [namespace], labels, [ownerReferences]}}.
// Owner references are set only when the DriverDeployment's uid is known.
Json object(const Effective& e, const char* apiVersion, const char* kind, const std::string& name,
            const std::string& ns, const char* componentName);

std::string nodeName(const Effective& e);       // DaemonSet, ServiceAccount
std::string controllerName(const Effective& e); // Deployment/StatefulSet, ServiceAccount
// The ServiceAccount the controller sidecars run as: the controller workload's, or the
// node plugin's when they run in its pods.
std::string controllerServiceAccount(const Effective& e);
std::string rbacName(const Effective& e, const std::string& what);

} // namespace csiop::render
