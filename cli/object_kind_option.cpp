#include <ostream>

#include "commands.hpp"

namespace csiop::cli {

void addObjectKindOption(CLI::App* cmd, std::vector<std::string>& texts) {
  cmd->add_option("--object-kind", texts,
                  "A kind DriverDeployments may list in spec.objects beyond the built-in ones, as "
                  "apiVersion,Kind,resource (e.g. monitoring.coreos.com/v1,ServiceMonitor,"
                  "servicemonitors); repeatable. The operator needs RBAC for it")
      ->check([](const std::string& text) {
        std::string error;
        return api::parseObjectKind(text, error) ? std::string() : error;
      });
}

std::optional<std::vector<api::ObjectKind>> objectKinds(const std::vector<std::string>& texts,
                                                        std::ostream& err) {
  std::string error;
  auto kinds = api::objectKindsWith(texts, error);
  if (!kinds) {
    err << "error: --object-kind: " << error << "\n";
  }
  return kinds;
}

} // namespace csiop::cli
