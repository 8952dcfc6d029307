#include "operator_process.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace csiop::e2e {

namespace {
OperatorInvocation verboseRun(const std::vector<std::string>& extraArgs,
                              const std::string& subcommand) {
  OperatorInvocation invocation{{subcommand, "-v", "2"}, {}, {}};
  invocation.args.insert(invocation.args.end(), extraArgs.begin(), extraArgs.end());
  return invocation;
}
} // namespace

OperatorProcess::OperatorProcess(const std::string& logName,
                                 const std::vector<std::string>& extraArgs,
                                 const std::string& subcommand)
    : OperatorProcess(logName, verboseRun(extraArgs, subcommand)) {}

OperatorProcess::OperatorProcess(const std::string& logName, const OperatorInvocation& invocation)
    : ports_(testsupport::freeOperatorPorts()) {
  if (invocation.args.empty())
    throw E2EError("OperatorProcess: no subcommand");
  const auto kubeconfig =
      invocation.kubeconfig.empty() ? cluster().kubeconfig : invocation.kubeconfig;
  auto argv =
      testsupport::operatorCommand(invocation.binary.empty() ? operatorBinary() : invocation.binary,
                                   invocation.args.front(), kubeconfig, ports_);
  argv.insert(argv.end(), invocation.args.begin() + 1, invocation.args.end());
  process_ = std::make_unique<ChildProcess>(argv, writeArtifact(logName, ""));
}

bool OperatorProcess::waitReady(std::chrono::milliseconds timeout) {
  return waitFor("the operator is ready", timeout, [&](std::string& seen) {
    const auto r =
        run({"curl", "-fsS", "http://127.0.0.1:" + std::to_string(ports_.health) + "/readyz"});
    seen = r.out + r.err + process_->log();
    return r.ok();
  });
}

std::optional<int> OperatorProcess::stop(std::chrono::milliseconds timeout) {
  process_->signal(SIGTERM);
  return process_->wait(timeout);
}

std::string OperatorProcess::metrics() const {
  const auto r =
      run({"curl", "-fsS", "http://127.0.0.1:" + std::to_string(ports_.metrics) + "/metrics"});
  return r.ok() ? r.out : "";
}

bool OperatorProcess::waitForNoWrites(std::chrono::milliseconds quiet,
                                      std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  double last = mutatingRequests();
  auto since = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const double now = mutatingRequests();
    if (now != last) {
      last = now;
      since = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - since >= quiet) {
      return true;
    }
  }
  return false;
}

double OperatorProcess::metric(const std::string& series) const {
  const std::string text = metrics();
  if (text.empty())
    return -1;
  const std::string key = "\n" + series + " ";
  const auto at = ("\n" + text).find(key);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size() - 1));
}

double OperatorProcess::metricSum(const std::string& family) const {
  const std::string text = metrics();
  if (text.empty())
    return -1;
  double sum = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(family + " ") || line.starts_with(family + "{")) {
      sum += std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return sum;
}

double OperatorProcess::writesTo(const std::string& resource) const {
  return std::max(0.0, metric("csiop_api_mutating_requests_total{resource=\"" + resource + "\"}"));
}

std::map<std::string, double> OperatorProcess::writesByResource() const {
  std::map<std::string, double> out;
  std::istringstream lines(metrics());
  const std::string prefix = "csiop_api_mutating_requests_total{resource=\"";
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(prefix)) {
      const auto end = line.find('"', prefix.size());
      out[line.substr(prefix.size(), end - prefix.size())] =
          std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return out;
}

void registerDriverOnNodes(const std::string& driver) {
  const Json nodes = kubectlJson({"get", "nodes"});
  for (const auto& n : nodes["items"]) {
    const std::string name = n["metadata"]["name"];
    Json csinode = {{"apiVersion", "storage.k8s.io/v1"},
                    {"kind", "CSINode"},
                    {"metadata",
                     {{"name", name},
                      {"ownerReferences", Json::array({{{"apiVersion", "v1"},
                                                        {"kind", "Node"},
                                                        {"name", name},
                                                        {"uid", n["metadata"]["uid"]}}})}}},
                    {"spec", {{"drivers", Json::array({{{"name", driver}, {"nodeID", name}}})}}}};
    const auto r = kubectl({"apply", "-f", "-"}, csinode.dump());
    ASSERT_TRUE(r.ok()) << r;
  }
}

std::string ddCondition(const std::string& dd, const std::string& type) {
  return kubectl({"get", "dd", dd, "-o",
                  "jsonpath={.status.conditions[?(@.type==\"" + type + "\")].status}"})
      .out;
}

std::string conditionField(const std::string& dd, const std::string& type,
                           const std::string& field) {
  return kubectl({"get", "dd", dd, "-o",
                  "jsonpath={.status.conditions[?(@.type==\"" + type + "\")]." + field + "}"})
      .out;
}

std::string ddStatus(const std::string& dd) {
  return kubectl({"get", "dd", dd, "-o", "jsonpath={.status}"}).out;
}

bool exists(const std::vector<std::string>& what) {
  std::vector<std::string> args = {"get"};
  args.insert(args.end(), what.begin(), what.end());
  return kubectl(args).ok();
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

bool issueServingCertificate(const std::filesystem::path& dir, const std::string& ca) {
  const std::string script = R"(set -euo pipefail
cd "$1"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj "/CN=$2" -keyout "$2.key" -out "$2.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 \
  -keyout next.key -out next.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >next.ext
openssl x509 -req -in next.csr -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -days 1 \
  -extfile next.ext -out next.crt 2>/dev/null
mv next.key tls.key
mv next.crt tls.crt
)";
  const auto r = run({"bash", "-c", script, "_", dir.string(), ca});
  if (!r.ok()) {
    ADD_FAILURE() << r;
  }
  return r.ok();
}

void registerLocalWebhook(const std::string& name, int port, const std::string& caBundle,
                          const std::string& label, const std::vector<std::string>& operations,
                          const std::string& failurePolicy, const std::string& webhookName) {
  const auto b64 = bash("base64 -w0", {.input = caBundle});
  const Json config = {
      {"apiVersion", "admissionregistration.k8s.io/v1"},
      {"kind", "ValidatingWebhookConfiguration"},
      {"metadata", {{"name", name}}},
      {"webhooks",
       Json::array(
           {{{"name", webhookName},
             {"clientConfig",
              {{"url", "https://127.0.0.1:" + std::to_string(port) + "/validate-driverdeployment"},
               {"caBundle", b64.out}}},
             {"rules", Json::array({{{"operations", operations},
                                     {"apiGroups", Json::array({"csiop.dev"})},
                                     {"apiVersions", Json::array({"v1alpha1"})},
                                     {"resources", Json::array({"driverdeployments"})},
                                     {"scope", "Cluster"}}})},
             {"objectSelector", {{"matchLabels", {{label, "true"}}}}},
             {"failurePolicy", failurePolicy},
             {"sideEffects", "None"},
             {"timeoutSeconds", 5},
             {"admissionReviewVersions", Json::array({"v1"})}}})}};
  const auto r = kubectl({"apply", "-f", "-"}, config.dump());
  EXPECT_TRUE(r.ok()) << r;
}

std::string nowRfc3339() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string failedMount(const std::string& ns, const std::string& pod, const std::string& name,
                        const std::string& volume, const std::string& why) {
  const std::string now = nowRfc3339();
  return R"(apiVersion: v1
kind: Event
metadata:
  name: )" +
         name + R"(
  namespace: )" +
         ns + R"(
involvedObject: {apiVersion: v1, kind: Pod, namespace: )" +
         ns + ", name: " + pod + R"(}
type: Warning
reason: FailedMount
message: 'MountVolume.SetUp failed for volume ")" +
         volume + "\" : " + why + R"('
source: {component: kubelet, host: kwok-node-0}
count: 1
firstTimestamp: ")" +
         now + R"("
lastTimestamp: ")" +
         now + "\"\n";
}

std::string hostpathAs(const std::string& name) {
  std::string yaml = readFile(sourceDir() / "examples/hostpath.yaml");
  const auto replaceAll = [&](const std::string& from, const std::string& to) {
    for (auto at = yaml.find(from); at != std::string::npos; at = yaml.find(from, at + to.size())) {
      yaml.replace(at, from.size(), to);
    }
  };
  replaceAll("name: hostpath\n", "name: " + name + "\n");
  replaceAll("hostpath.csi.k8s.io", name + ".csi.k8s.io");
  replaceAll("csi-hostpath", "csi-" + name);
  return yaml;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

void deleteDd(const std::string& name) {
  kubectl({"delete", "dd", name, "--ignore-not-found", "--wait=true", "--timeout=60s"});
}

double OperatorProcess::cpuSeconds() const {
  // utime and stime are fields 14 and 15, after the command in parentheses.
  std::ifstream in("/proc/" + std::to_string(process_->pid()) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string skip;
  for (int i = 3; i < 14; ++i)
    fields >> skip;
  double utime = 0, stime = 0;
  fields >> utime >> stime;
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

} // namespace csiop::e2e
