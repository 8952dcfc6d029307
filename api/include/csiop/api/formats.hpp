// Kubernetes string formats (names, labels, quantities, durations) with the
// API server's own wording for errors.
//
// Each is checked by a scanner of its own, in one pass with constant stack: the regular
// expressions the messages quote are what they match, but a backtracking matcher took seconds
// to forever, or the whole stack, on long inputs (std::regex did).
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

// A Go time.Duration string ("1m30s", "500ms") in seconds; nullopt if malformed or beyond what
// Go's time.ParseDuration takes (about 292 years: its int64 of nanoseconds).
std::optional<double> goDuration(std::string_view s);

// An absolute Windows path on a drive: C:\dir\..., without '..' components.
bool windowsAbsolutePath(std::string_view s);

// A csi-proxy API group and version, such as "filesystem-v1" or "volume-v2beta1".
bool csiProxyApi(std::string_view s);

} // namespace csiop::api::formats
