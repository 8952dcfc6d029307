#include <ostream>

#include <csiop/api/images.hpp>

#include "commands.hpp"
#include "operator_version.hpp"

namespace csiop::cli {

Command addVersion(CLI::App& app) {
  app.add_subcommand("version", "Print the operator version and its default sidecar images");
  return [](Streams& s) {
    s.out << "csi-operator " << operatorVersion() << "\n";
    s.out << "default sidecar images:\n";
    for (const auto& image : api::imageDefaults()) {
      s.out << "  " << api::kDefaultRegistry << "/" << image.name << ":" << image.tag << "\n";
    }
    return 0;
  };
}

} // namespace csiop::cli
