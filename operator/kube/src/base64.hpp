// Base64 (RFC 4648, standard alphabet) for the kubeconfig *-data fields.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace csiop::kube::detail {

// Whitespace is ignored, padding is optional; std::nullopt for anything else.
std::optional<std::string> base64Decode(std::string_view text);

} // namespace csiop::kube::detail
