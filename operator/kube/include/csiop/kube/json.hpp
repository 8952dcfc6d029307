// The JSON type of the client: objects keep the order of their keys, as the API server wrote
// them (a server-side apply body then reads like its manifest).
#pragma once

#include <nlohmann/json.hpp>

namespace csiop::kube {

using Json = nlohmann::ordered_json;

} // namespace csiop::kube
