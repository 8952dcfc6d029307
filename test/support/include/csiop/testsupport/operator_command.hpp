// The command line that starts csi-operator against a cluster, its metrics and health probes
// on loopback ports of their own: the same for the e2e tests and the benchmarks.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace csiop::testsupport {

struct OperatorPorts {
  int metrics = 0;
  int health = 0;
};
// Two ports that were free a moment ago (ports.hpp), metrics first.
OperatorPorts freeOperatorPorts();

// binary subcommand --kubeconfig K --metrics-bind-address 127.0.0.1:M
//   --health-probe-bind-address 127.0.0.1:H
std::vector<std::string> operatorCommand(const std::filesystem::path& binary,
                                         const std::string& subcommand,
                                         const std::filesystem::path& kubeconfig,
                                         const OperatorPorts& ports);

} // namespace csiop::testsupport
