#include "cluster.hpp"

#include <iostream>
#include <stdexcept>

#include "process.hpp"

namespace csiop::bench {

std::filesystem::path clusterUp(const std::filesystem::path& sourceDir, const std::string& name,
                                int nodes) {
  const Captured r = runCapture(
      {(sourceDir / "test/cluster/up").string(), "--name", name, "--nodes", std::to_string(nodes)});
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

} // namespace csiop::bench
