// Writes the render fuzzer's seed corpus: `render_corpus DIR` (re)writes DIR/*.yaml, one manifest
// per file: every example, and the inputs of issue "Hardened" cut to the fuzzer's 64 KiB (long
// strings and digit runs, many keys, deep nesting, bytes that are not UTF-8, values beyond every
// bound), each in a valid DriverDeployment so that the fuzzer starts from inputs that reach
// validation and rendering.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace {

// A valid DriverDeployment but its controller, and with one.
const std::string kHead = R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec:
  driverName: demo.csi.example.com
  driver: {image: example.com/driver:v1}
)";
const std::string kObject = kHead + "  controller: {}\n";

std::string repeat(const std::string& part, std::size_t times) {
  std::string out;
  for (std::size_t i = 0; i < times; ++i) {
    out += part;
  }
  return out;
}

std::string keys(std::size_t count, const std::string& indent) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    out += indent + "k" + std::to_string(i) + ": v\n";
  }
  return out;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: render_corpus DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  std::vector<std::pair<std::string, std::string>> seeds;

  for (const auto& entry : std::filesystem::directory_iterator(CSIOP_EXAMPLES_DIR)) {
    if (entry.path().extension() == ".yaml") {
      std::ifstream in(entry.path(), std::ios::binary);
      seeds.emplace_back("example-" + entry.path().stem().string(),
                         std::string(std::istreambuf_iterator<char>(in), {}));
    }
  }

  const std::string digits(60'000, '7');
  seeds.emplace_back("hostile-csi-proxy-pipe-40kb", kObject +
                                                        "  windowsNode:\n    csiProxyPipes: [a" +
                                                        repeat("-a", 20'000) + "-v1]\n");
  for (const int n : {30, 60}) {
    seeds.emplace_back("hostile-kubelet-dir-backtracker-" + std::to_string(n),
                       kObject + "  windowsNode: {kubeletDir: 'C:\\" + std::string(n, 'a') +
                           "*'}\n");
  }
  seeds.emplace_back("hostile-plain-scalar-60000-digits",
                     kObject + "  node: {registrar: {args: [" + digits + "]}}\n");
  seeds.emplace_back("hostile-configmap-value-60000-digits",
                     kObject + "  configMaps:\n  - name: config\n    data: {k: '" + digits +
                         "'}\n");
  seeds.emplace_back("hostile-4000-keys", kObject + "  configMaps:\n  - name: config\n    data:\n" +
                                              keys(4000, "      "));
  seeds.emplace_back("hostile-duplicate-key-of-a-wide-map",
                     kObject + "  configMaps:\n  - name: config\n    data:\n" +
                         keys(100, "      ") + "      k50: again\n");
  seeds.emplace_back("hostile-nesting-250",
                     kObject + "  node: {podTemplatePatch: {x: " + std::string(250, '[') +
                         std::string(250, ']') + "}}\n");
  seeds.emplace_back("hostile-nesting-199",
                     kObject + "  node: {podTemplatePatch: {x: " + std::string(190, '[') +
                         std::string(190, ']') + "}}\n");
  seeds.emplace_back("hostile-driver-name-not-utf8",
                     "apiVersion: csiop.dev/v1alpha1\nkind: DriverDeployment\nmetadata: {name: "
                     "demo}\nspec:\n  driverName: demo\xff.csi.example.com\n  driver: {image: "
                     "example.com/driver:v1}\n");
  seeds.emplace_back("hostile-key-not-utf8",
                     kObject + "  configMaps:\n  - name: config\n    data: {\"\xc0\xaf\": v}\n");
  seeds.emplace_back("hostile-huge-percentage",
                     kHead + "  controller: {podDisruptionBudget: {maxUnavailable: "
                             "'99999999999999999999%'}}\n"
                             "  node: {updateStrategy: {type: RollingUpdate, rollingUpdate: "
                             "{maxUnavailable: '99999999999999999999%'}}}\n");
  seeds.emplace_back("hostile-lease-timings",
                     kHead + "  controller: {leaderElection: {leaseDuration: 9999999999999h, "
                             "retryPeriod: 1ns}}\n");
  seeds.emplace_back("hostile-numbers",
                     kObject +
                         "  objects:\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: "
                         "n, namespace: x}, data: {a: '1'}, x: [1e999, 0x" +
                         std::string(40, 'f') + ", 0o" + std::string(40, '7') +
                         ", 99999999999999999999, -9223372036854775809, .5, 1_000, 0b1, 1:30]}\n");
  seeds.emplace_back("hostile-quoting",
                     kObject + "  configMaps:\n  - name: config\n    data: {a: '0x1F', b: '1e5', "
                               "c: '.inf', d: '~', e: 'yes', f: '- x', g: 'a: b', h: ' x', i: "
                               "\"\\t\", j: '#', k: '1_000', l: '12:30', m: '+1', n: '.', o: "
                               "'0o17', p: '<<', q: '=', r: \"\\u2028\", s: \"\\ufeffx\"}\n");

  for (const auto& [name, text] : seeds) {
    std::ofstream out(dir / (name + ".yaml"), std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) {
      std::cerr << "cannot write " << (dir / (name + ".yaml")).string() << "\n";
      return 1;
    }
  }
  std::cout << "wrote " << seeds.size() << " seeds to " << dir.string() << "\n";
  return 0;
}
