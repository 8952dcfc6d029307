// `helm template` of charts/csi-operator, parsed, for the chart tests. helm is $CSIOP_HELM,
// which test/chart/chart-test sets to the pinned build (run the tests through
// `chart-test exec`).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <csiop/api/yaml.hpp>

namespace csiop::test {

inline const std::string kNamespace = "csiop-system"; // of the release "csiop"

inline std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

// stdout and stderr of a shell command; throws unless it exits 0.
inline std::string capture(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    throw std::runtime_error("cannot run " + command);
  }
  char buffer[65536];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    out.append(buffer, n);
  }
  if (::pclose(pipe) != 0) {
    throw std::runtime_error(command + " failed:\n" + out);
  }
  return out;
}

inline std::string helmBinary() {
  const char* helm = std::getenv("CSIOP_HELM");
  if (helm == nullptr || *helm == '\0') {
    throw std::runtime_error("CSIOP_HELM is not set; run through test/chart/chart-test exec");
  }
  return helm;
}

// The objects of release "csiop" in kNamespace; flags are added to the command line.
inline std::vector<api::Json> helmTemplate(const std::string& flags = "") {
  const std::string command = helmBinary() + " template csiop '" + CSIOP_CHART_DIR +
                              "' --namespace " + kNamespace + " " + flags + " 2>&1";
  std::vector<api::Json> objects;
  for (api::Json& o : api::parseYaml(capture(command))) {
    if (o.is_object()) {
      objects.push_back(std::move(o));
    }
  }
  return objects;
}

} // namespace csiop::test
