// Text that JSON can carry: UTF-8. YAML input is bytes, and a string that is not UTF-8 makes every
// later JSON dump of it throw (nlohmann's type_error 316); the loader refuses it up front.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <csiop/api/field_error.hpp>

namespace csiop::api {

// Well-formed UTF-8 as nlohmann's dump() requires it (Unicode's table 3-7: no overlong forms,
// surrogates or code points beyond U+10FFFF).
bool validUtf8(std::string_view s);

// `s` with every ill-formed sequence replaced by U+FFFD, for a message.
std::string printableUtf8(std::string_view s);

// "spec.driverName: Invalid value: \"a\uFFFD\": must be valid UTF-8" for every string (and
// "...: keys must be valid UTF-8" for every key) of `doc` that is not, the first `max` of them.
ErrorList utf8Errors(const Json& doc, std::size_t max);

} // namespace csiop::api
