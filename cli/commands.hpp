// Subcommands of the csi-operator binary. Each registers itself on the app and
// returns the process exit code when run: 0 success, 1 bad input.
#pragma once

#include <functional>
#include <iosfwd>

#include <CLI/CLI.hpp>

namespace csiop::cli {

struct Streams {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
};

using Command = std::function<int(Streams&)>;

Command addRender(CLI::App& app);
Command addCrds(CLI::App& app);
Command addVersion(CLI::App& app);
Command addRun(CLI::App& app);
Command addWebhook(CLI::App& app);
Command addProbe(CLI::App& app);

// Parses argv and runs the chosen subcommand. Usage errors exit with 2.
int run(int argc, const char* const* argv, Streams streams);

} // namespace csiop::cli
