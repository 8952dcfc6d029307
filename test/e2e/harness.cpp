#include "harness.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

namespace csiop::e2e {
namespace {

std::filesystem::path workDir() {
  if (const char* e = std::getenv("CSIOP_E2E_WORK_DIR"); e != nullptr && *e != '\0')
    return e;
  return CSIOP_E2E_WORK_DIR;
}

std::filesystem::path envFilePath() {
  if (const char* e = std::getenv("CSIOP_E2E_ENV_FILE"); e != nullptr && *e != '\0')
    return e;
  return workDir() / "cluster.env";
}

} // namespace

std::map<std::string, std::string> readEnvFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in)
    throw E2EError("cannot read " + path.string());
  std::map<std::string, std::string> vars;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      continue;
    vars[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return vars;
}

const Cluster& cluster() {
  static const Cluster c = [] {
    const auto path = envFilePath();
    if (!std::filesystem::exists(path))
      throw E2EError("no e2e cluster: " + path.string() +
                     " does not exist. The ctest fixture e2e.cluster.up writes it; run the tests "
                     "through ctest (ctest -L e2e) or run test/e2e/cluster-fixture up " +
                     path.string() + " " + operatorBinary().string());
    Cluster k;
    k.vars = readEnvFile(path);
    const auto get = [&](const std::string& key) {
      const auto it = k.vars.find(key);
      if (it == k.vars.end() || it->second.empty())
        throw E2EError(path.string() + " has no " + key + "=");
      return it->second;
    };
    k.kubeconfig = get("KUBECONFIG");
    k.kubectl = get("KUBECTL");
    k.nodes = std::stoi(get("NODES"));
    k.binDir = k.vars.count("BIN_DIR") ? k.vars["BIN_DIR"] : "";
    k.external = k.vars.count("EXTERNAL") && k.vars["EXTERNAL"] == "1";
    return k;
  }();
  return c;
}

std::filesystem::path sourceDir() {
  return CSIOP_SOURCE_DIR;
}

std::filesystem::path operatorBinary() {
  if (const char* e = std::getenv("CSIOP_OPERATOR_BINARY"); e != nullptr && *e != '\0')
    return e;
  return CSIOP_OPERATOR_BINARY;
}

std::filesystem::path writeArtifact(const std::string& name, std::string_view content) {
  const auto dir = workDir() / "artifacts";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!f)
    throw E2EError("cannot write " + path.string());
  return path;
}

std::filesystem::path artifactDirectory(const std::string& name) {
  const auto dir = workDir() / "artifacts" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

RunResult kubectl(const std::vector<std::string>& args, const std::optional<std::string>& input,
                  std::chrono::milliseconds timeout) {
  const Cluster& c = cluster();
  std::vector<std::string> argv = {c.kubectl.string(), "--kubeconfig=" + c.kubeconfig.string(),
                                   // discovery/OpenAPI cache of this build, not ~/.kube/cache
                                   "--cache-dir=" + (workDir() / "kube-cache").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {.input = input, .timeout = timeout});
}

Json kubectlJson(const std::vector<std::string>& args, const std::optional<std::string>& input,
                 std::chrono::milliseconds timeout) {
  auto withOutput = args;
  withOutput.insert(withOutput.end(), {"-o", "json"});
  const auto r = kubectl(withOutput, input, timeout);
  if (!r.ok()) {
    std::ostringstream msg;
    msg << r;
    throw E2EError(msg.str());
  }
  try {
    return Json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    throw E2EError("kubectl printed invalid JSON (" + std::string(e.what()) + "): " + r.command());
  }
}

RunResult csiOperator(const std::vector<std::string>& args,
                      const std::optional<std::string>& input) {
  std::vector<std::string> argv = {operatorBinary().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {.input = input, .timeout = 60s});
}

bool waitFor(std::string_view description, std::chrono::milliseconds timeout,
             const std::function<bool(std::string& observed)>& probe,
             std::chrono::milliseconds interval, std::source_location caller) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout;
  std::string observed;
  int attempts = 0;
  for (;;) {
    ++attempts;
    observed.clear();
    try {
      if (probe(observed))
        return true;
    } catch (const std::exception& e) {
      observed = std::string("exception: ") + e.what();
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      break;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(interval, deadline - now));
  }
  const auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start);
  ADD_FAILURE_AT(caller.file_name(), static_cast<int>(caller.line()))
      << "timed out after " << std::fixed << std::setprecision(1) << secs.count() << "s ("
      << attempts << " attempts) waiting for " << description << "\nlast observed state:\n"
      << (observed.empty() ? std::string("(nothing recorded)") : observed);
  return false;
}

void applyCrds() {
  const auto crds = csiOperator({"crds"});
  std::ostringstream msg;
  if (!crds.ok()) {
    msg << "csi-operator crds failed:\n" << crds;
    throw E2EError(msg.str());
  }
  const auto applied = kubectl(
      {"apply", "--server-side", "--field-manager=csiop-e2e", "-f", "-", "-o", "name"}, crds.out);
  if (!applied.ok()) {
    msg << "applying the CRDs failed:\n" << applied;
    throw E2EError(msg.str());
  }
  // "customresourcedefinition.apiextensions.k8s.io/<plural>.<group>" per line
  std::vector<std::string> names;
  std::istringstream lines(applied.out);
  for (std::string line; std::getline(lines, line);)
    if (const auto slash = line.find('/'); slash != std::string::npos)
      names.push_back(line.substr(slash + 1));
  if (names.empty())
    throw E2EError("kubectl apply named no CRDs:\n" + applied.out);
  for (const auto& name : names) {
    const bool served = waitFor("CRD " + name + " Established and served", 60s, [&](auto& seen) {
      const auto crd = kubectlJson({"get", "customresourcedefinition", name});
      bool established = false;
      for (const auto& c : crd["status"].value("conditions", Json::array()))
        established |= c.value("type", "") == "Established" && c.value("status", "") == "True";
      seen = crd["status"].dump(2);
      if (!established)
        return false;
      const auto list = kubectl({"get", name});
      seen += "\n" + list.err;
      return list.ok();
    });
    if (!served)
      throw E2EError("CRD " + name + " did not become Established and served");
  }
}

std::filesystem::path snapshotManifests() {
  const auto has = [](const std::filesystem::path& dir) {
    return std::filesystem::exists(dir / "snapshot.storage.k8s.io_volumesnapshotclasses.yaml");
  };
  if (const char* dir = std::getenv("CSIOP_SNAPSHOT_MANIFESTS"); dir != nullptr && *dir != '\0') {
    return has(dir) ? std::filesystem::path(dir) : std::filesystem::path();
  }
  if (const char* dir = std::getenv("CSIOP_IMAGE_ARCHIVES"); dir != nullptr && *dir != '\0') {
    if (has(std::filesystem::path(dir) / "manifests")) {
      return std::filesystem::path(dir) / "manifests";
    }
  }
  const auto beside = sourceDir().parent_path() / "shared/upstream-images/manifests";
  return has(beside) ? beside : std::filesystem::path();
}

bool applySnapshotCrds() {
  const auto dir = snapshotManifests();
  if (dir.empty()) {
    return false;
  }
  for (const char* crd : {"volumesnapshotclasses", "volumesnapshotcontents", "volumesnapshots"}) {
    const auto applied =
        kubectl({"apply", "--server-side", "--force-conflicts", "-f",
                 (dir / ("snapshot.storage.k8s.io_" + std::string(crd) + ".yaml")).string()});
    if (!applied.ok()) {
      throw E2EError("applying the snapshot CRDs: " + applied.err);
    }
  }
  return true;
}

} // namespace csiop::e2e
