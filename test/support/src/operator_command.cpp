#include <csiop/testsupport/operator_command.hpp>
#include <csiop/testsupport/ports.hpp>

namespace csiop::testsupport {

OperatorPorts freeOperatorPorts() {
  OperatorPorts ports;
  ports.metrics = freeLoopbackPort();
  ports.health = freeLoopbackPort();
  return ports;
}

std::vector<std::string> operatorCommand(const std::filesystem::path& binary,
                                         const std::string& subcommand,
                                         const std::filesystem::path& kubeconfig,
                                         const OperatorPorts& ports) {
  return {binary.string(),
          subcommand,
          "--kubeconfig",
          kubeconfig.string(),
          "--metrics-bind-address",
          "127.0.0.1:" + std::to_string(ports.metrics),
          "--health-probe-bind-address",
          "127.0.0.1:" + std::to_string(ports.health)};
}

} // namespace csiop::testsupport
