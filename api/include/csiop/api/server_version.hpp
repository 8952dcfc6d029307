// Fields of a DriverDeployment that an older API server does not know: each needs the Kubernetes
// minor version that added it to the object the operator writes it into. Sent to an older server,
// such a field is an unknown one (server-side apply refuses the object's every later update), so
// the webhook and the reconciler refuse it with the version it needs, where the server's version
// is known. The CLI's render, which knows no server, checks nothing here.
#pragma once

#include <optional>

#include <csiop/api/field_error.hpp>
#include <csiop/api/types.hpp>

namespace csiop::api {

// The fields that need a newer server than minor version `serverMinor` (Kubernetes 1.x), at
// their paths; nothing when `serverMinor` is unknown.
ErrorList checkServerVersion(const DriverDeployment& object, std::optional<int> serverMinor);

} // namespace csiop::api
