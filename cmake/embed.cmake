# Writes OUTPUT, a C++ file defining `std::string_view csiop::embedded::SYMBOL()`
# that returns the bytes of INPUT exactly.
file(READ "${INPUT}" content HEX)
string(LENGTH "${content}" hexlen)
math(EXPR size "${hexlen} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${content}")
string(REGEX REPLACE "(([^,]*,){16})" "\\1\n    " bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT}; do not edit.
#include <string_view>

namespace csiop::embedded {
namespace {
constexpr char kData[] = {
    ${bytes}'\\0'};
} // namespace

std::string_view ${SYMBOL}() { return {kData, ${size}}; }
} // namespace csiop::embedded
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
