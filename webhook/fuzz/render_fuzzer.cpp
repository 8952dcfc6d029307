// libFuzzer target: the bytes are a manifest for `csi-operator render` (YAML or JSON, one or more
// documents), held to the invariants of render_harness.hpp. A broken one aborts with what broke,
// so libFuzzer saves the input. Build and run: scripts/fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "render_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (const std::string broken = csiop::render::fuzz::check(input); !broken.empty()) {
    std::fprintf(stderr, "\n==render_fuzzer== invariant broken: %s\n", broken.c_str());
    std::abort();
  }
  return 0;
}
