// The pods as rendered, checked: what validation of the fields cannot see, because a
// podTemplatePatch (applied last) may change anything in them.
#pragma once

#include <optional>
#include <vector>

#include <csiop/api/field_error.hpp>
#include <csiop/api/load.hpp>
#include <csiop/api/object_kinds.hpp>
#include <csiop/api/types.hpp>

namespace csiop::render {

// For a DriverDeployment whose fields are valid (api::validate): renders each pod template a
// podTemplatePatch changes (the others are the validated fields' own) and reports, at the
// patch, whatever would break the driver or make the API server or the kubelet refuse the pod:
//  - template labels that no longer carry the selector's;
//  - the driver container gone, or no longer mounting its socket directory at /csi; in the
//    node plugin, the registrar gone or without the registration directory;
//  - a container that mounts a volume the pod lacks, two containers or volumes of one name,
//    a container without an image;
//  - a mount with Bidirectional propagation in a container that is not privileged;
//  - in every pod, patched or not: a kubernetes-csi sidecar flag that the release its image
//    names does not accept (the container would exit at start).
// Empty when the pods are sound (only the sidecars are rendered when nothing is patched). The CLI,
// the webhook and the reconciler run it after api::validate (api::loadDriverDeployments takes it as
// its check).
// Also: spec.objects that would take the place of an object the operator renders.
api::ErrorList checkRendered(const api::DriverDeployment& object);

// What the CLI, the webhook and the reconciler check beyond api::validate: checkRendered, that
// spec.objects holds only kinds among `objectKinds` (the operator's --object-kind flags with
// api::builtinObjectKinds()), and that the API server of minor version `serverMinor` knows every
// field set (api::checkServerVersion; the CLI knows no server). The check refers to
// `objectKinds`, which must outlive it.
api::Check admissionCheck(const std::vector<api::ObjectKind>& objectKinds,
                          std::optional<int> serverMinor = std::nullopt);

} // namespace csiop::render
