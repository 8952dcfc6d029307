#include <csiop/api/command_line.hpp>

namespace csiop::api {

std::vector<FlagArgument> flagArguments(const std::vector<std::string>& args) {
  std::vector<FlagArgument> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    // Go's flag package: "-" alone and anything without a leading '-' end the flags.
    if (arg.size() < 2 || arg[0] != '-') {
      break;
    }
    if (arg == "--") {
      break;
    }
    const std::size_t dashes = arg[1] == '-' ? 2 : 1;
    std::string_view rest = std::string_view(arg).substr(dashes);
    if (rest.empty() || rest[0] == '-' || rest[0] == '=') {
      break; // "---x" and "-=x" are "bad flag syntax" to Go: nothing after them is a flag
    }
    FlagArgument flag;
    flag.index = i;
    flag.dashes = dashes;
    if (const auto eq = rest.find('='); eq != std::string_view::npos) {
      flag.name = std::string(rest.substr(0, eq));
      flag.value = std::string(rest.substr(eq + 1));
    } else {
      flag.name = std::string(rest);
      if (i + 1 < args.size() && (args[i + 1].empty() || args[i + 1][0] != '-')) {
        flag.value = args[++i]; // taken as the value, as Go does for a flag that has one
      }
    }
    out.push_back(std::move(flag));
  }
  return out;
}

std::optional<FlagArgument> lastFlag(const std::vector<std::string>& args, std::string_view name) {
  std::optional<FlagArgument> found;
  for (FlagArgument& flag : flagArguments(args)) {
    if (flag.name == name) {
      found = std::move(flag);
    }
  }
  return found;
}

} // namespace csiop::api
