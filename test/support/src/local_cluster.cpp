#include <sstream>
#include <stdexcept>

#include <csiop/testsupport/local_cluster.hpp>

namespace csiop::testsupport {
namespace {

std::string lastLine(std::string out) {
  while (!out.empty() && out.back() == '\n') {
    out.pop_back();
  }
  return out.substr(out.rfind('\n') + 1); // npos + 1 == 0: a single line
}

// What a script prints last, its result; throws unless it succeeded and printed one.
std::string resultLine(const RunResult& r) {
  std::string line = lastLine(r.out);
  if (!r.ok() || line.empty()) {
    std::ostringstream message;
    message << r;
    throw std::runtime_error(message.str());
  }
  return line;
}

} // namespace

std::filesystem::path clusterUp(const std::filesystem::path& sourceDir, const std::string& name,
                                int nodes, const std::vector<std::string>& upArgs,
                                const RunOptions& options) {
  std::vector<std::string> argv = {(sourceDir / "test/cluster/up").string(), "--name", name,
                                   "--nodes", std::to_string(nodes)};
  argv.insert(argv.end(), upArgs.begin(), upArgs.end());
  return resultLine(run(argv, options));
}

std::filesystem::path clusterBinDir(const std::filesystem::path& sourceDir,
                                    const RunOptions& options) {
  return resultLine(run({(sourceDir / "test/cluster/build").string()}, options));
}

RunResult clusterDown(const std::filesystem::path& sourceDir, const std::string& name,
                      const RunOptions& options) {
  return run({(sourceDir / "test/cluster/down").string(), "--name", name}, options);
}

} // namespace csiop::testsupport
