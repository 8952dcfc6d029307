#include "document_path.hpp"

namespace csiop::api::detail {
namespace {

constexpr std::size_t kMaxPointerBytes = 200;

// The longest prefix of `s` of at most `bytes` bytes that does not end inside a UTF-8 sequence.
std::string_view cut(std::string_view s, std::size_t bytes) {
  if (s.size() <= bytes) {
    return s;
  }
  while (bytes > 0 && (static_cast<unsigned char>(s[bytes]) & 0xC0) == 0x80) {
    --bytes; // s[bytes] continues a sequence: cut before the sequence's first byte
  }
  return s.substr(0, bytes);
}

} // namespace

std::string describe(const char* what, const std::vector<PathSegment>& path) {
  std::string out = std::string(what) + " at ";
  if (path.empty()) {
    return out + "the top level";
  }
  std::string pointer;
  for (const PathSegment& s : path) {
    pointer += '/';
    if (!s.isKey) {
      pointer += std::to_string(s.index);
      continue;
    }
    for (const char c : s.key) {
      if (c == '~') {
        pointer += "~0";
      } else if (c == '/') {
        pointer += "~1";
      } else {
        pointer += c;
      }
    }
    if (pointer.size() > kMaxPointerBytes) {
      break;
    }
  }
  if (pointer.size() > kMaxPointerBytes) {
    return out + std::string(cut(pointer, kMaxPointerBytes)) + "...";
  }
  return out + pointer;
}

} // namespace csiop::api::detail
