// Command lines as Go's flag package reads them, the way every kubernetes-csi sidecar parses
// its arguments: "-name", "--name", "-name=value", "--name=value" and "--name value"; parsing
// stops at "--" or at the first argument that is not a flag.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace csiop::api {

struct FlagArgument {
  std::size_t index = 0;  // of the argument that names the flag
  std::string name;       // without dashes
  std::size_t dashes = 2; // 1 or 2
  // After '=', or the next argument when that is not a flag ("--timeout 5s"): whether a flag
  // takes a value depends on the flag (a boolean's does not), which only its binary knows.
  std::optional<std::string> value;
};

// The flags in `args`, in order (a flag given twice appears twice; Go keeps the last value).
std::vector<FlagArgument> flagArguments(const std::vector<std::string>& args);

// The last --name in `args`; nullopt when it is not given.
std::optional<FlagArgument> lastFlag(const std::vector<std::string>& args, std::string_view name);

} // namespace csiop::api
