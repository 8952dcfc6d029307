// Times as the API server writes them: RFC 3339 in UTC, "2026-11-28T12:42:18Z" (metav1.Time),
// or with a fraction and an offset (metav1.MicroTime, "2026-11-28T13:42:18.123456+01:00").
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace csiop::api {

using WallTime = std::chrono::system_clock::time_point;

// nullopt when `text` is not a full RFC 3339 date-time.
std::optional<WallTime> parseRfc3339(std::string_view text);
// As parseRfc3339, the epoch for what is not a date-time (a field left out: "never").
WallTime parseRfc3339OrEpoch(std::string_view text);
// Whole seconds, UTC, "Z".
std::string formatRfc3339(WallTime time);

} // namespace csiop::api
