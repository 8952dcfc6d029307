// Every kubernetes-csi sidecar's rendered arguments against the flags its image's release
// accepts (api/sidecar_releases.hpp): a flag the release does not know makes the container exit
// at start ("flag provided but not defined"), so it is refused at admission instead, at the
// field that set it. Images the table does not know (a vendor's build, a newer minor release)
// are not checked.
#pragma once

#include <csiop/api/field_error.hpp>
#include <csiop/api/types.hpp>

#include "container_parts.hpp"

namespace csiop::render {

api::ErrorList checkSidecarFlags(const Effective& effective);

// Whether checkSidecarFlags can find anything: the spec names some sidecar's image or args.
bool sidecarFlagsToCheck(const api::DriverDeploymentSpec& spec);

} // namespace csiop::render
