// libFuzzer target: the bytes are the body of a POST /validate-driverdeployment,
// handed to webhook::review against the fixed cluster of review_harness.hpp.
// Any exception out of review() or any broken invariant (see checkAnswer) aborts
// with what broke, so libFuzzer saves the input. Build and run: scripts/fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "review_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (const std::string broken = csiop::webhook::fuzz::check(input); !broken.empty()) {
    std::fprintf(stderr, "\n==review_fuzzer== invariant broken: %s\n", broken.c_str());
    std::abort();
  }
  return 0;
}
