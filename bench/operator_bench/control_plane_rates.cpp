#include "control_plane_rates.hpp"

#include <fstream>

namespace csiop::bench {

std::string controlPlaneRates(const std::filesystem::path& kubeconfig) {
  const std::filesystem::path run = kubeconfig.parent_path() / "run";
  std::string out;
  for (const char* component : {"kube-controller-manager", "kube-scheduler"}) {
    std::ifstream argv(run / (std::string(component) + ".argv"));
    if (!argv) {
      return "";
    }
    std::string flags;
    std::string arg;
    while (std::getline(argv, arg, '\0')) {
      if (arg.rfind("--kube-api-qps", 0) == 0 || arg.rfind("--kube-api-burst", 0) == 0) {
        flags += " " + arg;
      }
    }
    out += (out.empty() ? "" : "; ") + std::string(component) +
           (flags.empty() ? " (its default rate)" : flags);
  }
  return out;
}

} // namespace csiop::bench
