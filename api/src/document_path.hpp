// Where in a document a parser is, for its error messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace csiop::api::detail {

// An object member's key, or an array item's index.
struct PathSegment {
  std::string_view key;
  std::size_t index = 0;
  bool isKey = true;
};

// "object at /spec/objects/0/data", "array at the top level": the JSON pointer (RFC 6901) of
// the place, cut short (on a character boundary, with "...") when long keys would make a long
// message.
std::string describe(const char* what, const std::vector<PathSegment>& path);

} // namespace csiop::api::detail
