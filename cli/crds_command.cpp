#include <ostream>

#include <csiop/crds.hpp>

#include "commands.hpp"

namespace csiop::cli {

Command addCrds(CLI::App& app) {
  app.add_subcommand("crds", "Print the CustomResourceDefinitions the operator installs");
  return [](Streams& s) {
    s.out << embedded::crdYaml();
    return 0;
  };
}

} // namespace csiop::cli
