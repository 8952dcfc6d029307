// Runs the csi-operator command line in-process (cli::run) with captured streams.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"

namespace csiop::test {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

// `csi-operator <args...>` with stdinText on its standard input.
inline CliResult runCli(std::vector<std::string> args, const std::string& stdinText = "") {
  std::istringstream in(stdinText);
  std::ostringstream out;
  std::ostringstream err;
  args.insert(args.begin(), "csi-operator");
  std::vector<const char*> argv;
  for (const auto& a : args) {
    argv.push_back(a.c_str());
  }
  const int code = cli::run(static_cast<int>(argv.size()), argv.data(), {in, out, err});
  return {code, out.str(), err.str()};
}

} // namespace csiop::test
