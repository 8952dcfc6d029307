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

#include <unistd.h>

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

// The objects of release "csiop" in kNamespace rendered from the chart at `chart`; flags are
// added to the command line.
inline std::vector<api::Json> helmTemplateOf(const std::string& chart, const std::string& flags) {
  const std::string command = helmBinary() + " template csiop '" + chart + "' --namespace " +
                              kNamespace + " " + flags + " 2>&1";
  std::vector<api::Json> objects;
  for (api::Json& o : api::parseYaml(capture(command))) {
    if (o.is_object()) {
      objects.push_back(std::move(o));
    }
  }
  return objects;
}

// The objects of release "csiop" in kNamespace; flags are added to the command line.
inline std::vector<api::Json> helmTemplate(const std::string& flags = "") {
  return helmTemplateOf(CSIOP_CHART_DIR, flags);
}

// What helm says when `helm template` with these flags fails (e.g. values the schema refuses);
// "" if it succeeds.
inline std::string helmTemplateError(const std::string& flags) {
  try {
    helmTemplate(flags);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// NOTES.txt as `helm install` with these flags would print it. `helm template` does not render
// NOTES.txt, so a copy of the chart renders the same text through `tpl` into a ConfigMap, with
// the same values and capabilities.
inline std::string helmNotes(const std::string& flags = "") {
  namespace fs = std::filesystem;
  const fs::path copy =
      fs::temp_directory_path() / ("csiop-chart-notes-" + std::to_string(::getpid()));
  fs::remove_all(copy);
  fs::copy(CSIOP_CHART_DIR, copy, fs::copy_options::recursive);
  fs::copy_file(copy / "templates/NOTES.txt", copy / "notes-under-test.txt");
  std::ofstream(copy / "templates/notes-under-test.yaml")
      << "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n"
         "  notes: {{ tpl (.Files.Get \"notes-under-test.txt\") . | toJson }}\n";
  std::vector<api::Json> objects;
  try {
    objects = helmTemplateOf(copy.string(), "--show-only templates/notes-under-test.yaml " + flags);
  } catch (...) {
    fs::remove_all(copy);
    throw;
  }
  fs::remove_all(copy);
  if (objects.size() != 1) {
    throw std::runtime_error("the NOTES.txt ConfigMap was not rendered");
  }
  return objects[0]["data"]["notes"].get<std::string>();
}

} // namespace csiop::test
