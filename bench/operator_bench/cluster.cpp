#include "cluster.hpp"

#include <fstream>
#include <iostream>
#include <stdexcept>

#include "process.hpp"

namespace csiop::bench {

std::filesystem::path clusterUp(const std::filesystem::path& sourceDir, const std::string& name,
                                int nodes, const std::vector<std::string>& upArgs) {
  std::vector<std::string> argv = {(sourceDir / "test/cluster/up").string(), "--name", name,
                                   "--nodes", std::to_string(nodes)};
  argv.insert(argv.end(), upArgs.begin(), upArgs.end());
  const Captured r = runCapture(argv);
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') {
    out.pop_back();
  }
  const std::string last = out.substr(out.find_last_of('\n') + 1);
  if (r.exitCode != 0 || last.empty()) {
    throw std::runtime_error("test/cluster/up --name " + name + " failed (exit " +
                             std::to_string(r.exitCode) + ")");
  }
  return last;
}

bool clusterDown(const std::filesystem::path& sourceDir, const std::string& name) {
  const Captured r = runCapture({(sourceDir / "test/cluster/down").string(), "--name", name});
  if (r.exitCode != 0) {
    std::cerr << "test/cluster/down --name " << name << " failed (exit " << r.exitCode << ")\n";
    return false;
  }
  return true;
}

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
