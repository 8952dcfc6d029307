// The Kubernetes objects a DriverDeployment embeds (volumes, securityContext, probes, lifecycle,
// affinity, init and extra containers, update strategies, RBAC rules, companion objects, ...),
// each checked against Kubernetes' own schema of its type, at the field path the user wrote.
#pragma once

#include <string>
#include <vector>

#include <csiop/api/kube_schema.hpp>
#include <csiop/api/types.hpp>

namespace csiop::api {

// The Kubernetes definition of the DriverDeployment field `leaf` of `parent` (fieldTree paths,
// "[]" for an item of a list, e.g. parent "spec.storageClasses[]", leaf "allowedTopologies"):
// "io.k8s.api.core.v1.Probe", a definition's property for a list ("io.k8s.api.core.v1.PodSpec/
// volumes": its items' type and the list's keys), or one of
//   "" (not a Kubernetes type as such: the metadata, which the API server checks, and the node
//      plugins' updateStrategy, the operator's extension of one, which the CRD's schema checks),
//   "<controller strategy>" (the Deployment's or the StatefulSet's, by spec.controller.kind),
//   "<objects>" (each item by its apiVersion and kind).
std::string embeddedDefinition(const std::string& parent, const std::string& leaf);

// Every definition embeddedDefinition names, and those of the companion object kinds the
// operator creates: what the embedded schema must hold.
std::vector<std::string> embeddedDefinitionRoots();

// Checks each embedded field of a DriverDeployment document (as the user wrote it, before
// decoding) against `schema`.
SchemaFindings checkEmbeddedFields(const Json& document, const KubeSchema& schema);

} // namespace csiop::api
