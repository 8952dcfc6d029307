#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"

namespace csiop::cli {

int run(int argc, const char* const* argv, Streams streams) {
  CLI::App app{"csi-operator: deploys and runs CSI drivers on Kubernetes", "csi-operator"};
  app.require_subcommand(1);
  const std::vector<std::pair<std::string, Command>> commands = {
      {"render", addRender(app)},
      {"crds", addCrds(app)},
      {"version", addVersion(app)},
      {"run", addRun(app)},
      {"webhook", addWebhook(app)},
      {"probe", addProbe(app)},
      {"smoke-volume", addSmokeVolume(app)},
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    streams.out << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    streams.err << "error: " << e.what() << "\n";
    streams.err << "Run 'csi-operator --help' for usage.\n";
    return 2;
  }
  const std::string chosen = app.get_subcommands().front()->get_name();
  for (const auto& [name, command] : commands) {
    if (name == chosen) {
      return command(streams);
    }
  }
  return 2;
}

} // namespace csiop::cli
