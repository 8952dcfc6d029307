// The patchMergeKey of the Kubernetes list fields in the objects the operator
// renders (containers merge by name, volumeMounts by mountPath, ...). Lists not
// named here are atomic: replaced whole.
#pragma once

#include <string_view>

namespace csiop::render {

// The key, or nullptr for an atomic list.
const char* listMergeKey(std::string_view field);

} // namespace csiop::render
