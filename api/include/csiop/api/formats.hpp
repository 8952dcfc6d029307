// Kubernetes string formats (names, labels, quantities, durations) with the
// API server's own wording for errors.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace csiop::api::formats {

// Each returns the problems found; empty means valid.
std::vector<std::string> dns1123Label(std::string_view s);
std::vector<std::string> dns1123Subdomain(std::string_view s);
std::vector<std::string> qualifiedName(std::string_view s); // label and annotation keys
std::vector<std::string> labelValue(std::string_view s);
std::vector<std::string> portName(std::string_view s); // IANA_SVC_NAME

bool isQuantity(std::string_view s);

// A Go time.Duration string ("1m30s", "500ms") in seconds; nullopt if malformed.
std::optional<double> goDuration(std::string_view s);

} // namespace csiop::api::formats
