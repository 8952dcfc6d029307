// The API reference in Markdown, generated from the CRD's schema (descriptions,
// types, enums, defaults, bounds) for every field the operator's types know.
// docs/reference/api.md carries it between markers; a test keeps the two identical.
#pragma once

#include <string>

namespace csiop::docs {

std::string apiReference();

inline constexpr const char* kBeginMarker = "<!-- api-reference:begin (generated) -->";
inline constexpr const char* kEndMarker = "<!-- api-reference:end -->";

} // namespace csiop::docs
