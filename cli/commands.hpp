// Subcommands of the csi-operator binary. Each registers itself on the app and
// returns the process exit code when run: 0 success, 1 bad input.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <csiop/api/object_kinds.hpp>

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
Command addSmokeVolume(CLI::App& app);

// --object-kind (repeatable): a kind spec.objects may hold beyond the built-in ones
// (api::parseObjectKind), for `run`, `webhook` and `render`.
void addObjectKindOption(CLI::App* cmd, std::vector<std::string>& texts);
// The kinds the options name with the built-in ones, or nullopt after writing why to `err`.
std::optional<std::vector<api::ObjectKind>> objectKinds(const std::vector<std::string>& texts,
                                                        std::ostream& err);

// Parses argv and runs the chosen subcommand. Usage errors exit with 2.
int run(int argc, const char* const* argv, Streams streams);

} // namespace csiop::cli
