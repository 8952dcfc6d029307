// A strategic-merge-style patch for pod templates (the podTemplatePatch escape
// hatch): objects merge recursively, `null` deletes a field, and lists that
// Kubernetes merges by key (containers by name, volumeMounts by mountPath, ...)
// merge item by item, where an item with `$patch: delete` removes its match.
// Other lists are replaced whole, as the API server does.
#pragma once

#include <csiop/api/types.hpp>

namespace csiop::render {

api::Json strategicMerge(api::Json base, const api::Json& patch);

} // namespace csiop::render
