// Each input that once took seconds, forever, the stack or the process (issue "Hardened") replayed
// through `csi-operator render` and through the admission webhook's webhook::review, each within
// a budget of CPU time and of peak memory, which the fixed code meets by orders of magnitude (the
// figures print). The input is one JSON text: render reads it as YAML (JSON is YAML's flow style),
// the webhook as the object of an AdmissionReview.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <csiop/webhook/admission.hpp>

#include "../cli/cli_run.hpp"

namespace csiop {
namespace {

// Under AddressSanitizer (the CI's Debug build with ASan and UBSan) code runs several times
// slower and every allocation carries shadow memory and a quarantine: the budgets grow with it,
// still far below what the old code took (seconds to forever, or the whole stack).
#if defined(__SANITIZE_ADDRESS__)
constexpr double kSanitizerFactor = 10;
#else
constexpr double kSanitizerFactor = 1;
#endif
constexpr double kCpuSecondsBudget = 2 * kSanitizerFactor; // the fixed code takes milliseconds
constexpr long kPeakMemoryBudgetMiB = kSanitizerFactor > 1 ? 1024 : 256;

// A DriverDeployment whose spec ends with `more` (members, each after a comma), with an empty
// controller unless `more` has one.
std::string object(const std::string& more,
                   const std::string& driverName = "demo.csi.example.com") {
  const bool controller = more.find("\"controller\"") != std::string::npos;
  return R"({"apiVersion": "csiop.dev/v1alpha1", "kind": "DriverDeployment",
    "metadata": {"name": "demo"},
    "spec": {"driverName": ")" +
         driverName + R"(", "driver": {"image": "example.com/driver:v1"})" +
         (controller ? "" : R"(, "controller": {})") + more + "}}";
}

std::string repeat(const std::string& part, std::size_t times, const std::string& separator = "") {
  std::string out;
  out.reserve((part.size() + separator.size()) * times);
  for (std::size_t i = 0; i < times; ++i) {
    out += (i == 0 ? "" : separator) + part;
  }
  return out;
}

std::string pipeName40KB() {
  return "a" + repeat("-a", 20'000) + "-v1";
}

std::string manyKeys(std::size_t keys) {
  std::string out = "{";
  for (std::size_t i = 0; i < keys; ++i) {
    out += (i == 0 ? "\"k" : ", \"k") + std::to_string(i) + "\": \"v\"";
  }
  return out + "}";
}

struct Hostile {
  const char* name;
  std::function<std::string()> text;
};

void PrintTo(const Hostile& h, std::ostream* os) {
  *os << h.name;
}

const Hostile kCases[] = {
    {"CsiProxyPipe40KB",
     [] { return object(R"(, "windowsNode": {"csiProxyPipes": [")" + pipeName40KB() + R"("]})"); }},
    {"KubeletDirBacktracker30",
     [] {
       return object(R"(, "windowsNode": {"kubeletDir": "C:\\)" + std::string(30, 'a') + R"(*"})");
     }},
    {"KubeletDirBacktracker60",
     [] {
       return object(R"(, "windowsNode": {"kubeletDir": "C:\\)" + std::string(60, 'a') + R"(*"})");
     }},
    {"Scalar200000Digits",
     [] {
       return object(R"(, "node": {"registrar": {"args": [)" + std::string(200'000, '7') + "]}}");
     }},
    {"ConfigMapValue200KBDigits",
     [] {
       return object(R"(, "configMaps": [{"name": "config", "data": {"k": ")" +
                     std::string(200'000, '7') + R"("}}])");
     }},
    {"HundredThousandKeys",
     [] {
       return object(R"(, "configMaps": [{"name": "config", "data": )" + manyKeys(100'000) + "}]");
     }},
    {"HundredThousandArgs",
     [] {
       return object(R"(, "node": {"registrar": {"args": [)" + repeat("\"--v=5\"", 100'000, ",") +
                     "]}}");
     }},
    {"Nesting100000",
     [] {
       return object(R"(, "node": {"podTemplatePatch": {"x": )" + std::string(100'000, '[') +
                     std::string(100'000, ']') + "}}");
     }},
    {"InvalidUtf8DriverName", [] { return object("", "demo\xff.csi.example.com"); }},
    // Found by the render fuzzer: yaml-cpp 0.7's LoadAll allocated for ever.
    {"StrayComma", [] { return std::string(","); }},
    {"HugePercentage",
     [] {
       return object(
           R"(, "controller": {"podDisruptionBudget": {"maxUnavailable": "99999999999999999999%"}})");
     }},
};

// CPU time of the process, and the peak of its resident memory since the last reset.
struct Usage {
  double cpuSeconds;
  long peakKiB;
};

long statusKiB(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) {
      return std::stol(line.substr(line.find(':') + 1));
    }
  }
  return 0;
}

Usage usage() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return {seconds(r.ru_utime) + seconds(r.ru_stime), statusKiB("VmHWM:")};
}

// Runs `work` and checks its budget: CPU time, and how far the peak resident memory rose over
// the resident memory before (the peak is reset first, where Linux allows it).
void withinBudget(const std::string& what, const std::function<void()>& work) {
  {
    std::ofstream reset("/proc/self/clear_refs");
    reset << "5"; // VmHWM := VmRSS
  }
  const long rssBefore = statusKiB("VmRSS:");
  const Usage before = usage();
  work();
  const Usage after = usage();
  const double cpu = after.cpuSeconds - before.cpuSeconds;
  const long peakMiB = std::max(0L, after.peakKiB - rssBefore) / 1024;
  std::printf("hostile input %s: %.3f s CPU, peak memory +%ld MiB\n", what.c_str(), cpu, peakMiB);
  EXPECT_LT(cpu, kCpuSecondsBudget) << what;
  EXPECT_LT(peakMiB, kPeakMemoryBudgetMiB) << what;
}

class HostileInput : public ::testing::TestWithParam<Hostile> {};

TEST_P(HostileInput, RenderAnswersWithinBudget) {
  const std::string text = GetParam().text();
  test::CliResult r{};
  withinBudget(std::string(GetParam().name) + " through render", [&] {
    r = test::runCli({"render", "-f", "-"}, text);
  });
  // An answer: objects, or errors.
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err.substr(0, 500);
  EXPECT_TRUE(r.code == 0 ? !r.out.empty() : !r.err.empty());
  std::printf("  exit %d, %s\n", r.code, (r.code == 0 ? r.out : r.err).substr(0, 200).c_str());
}

TEST_P(HostileInput, ReviewAnswersWithinBudget) {
  const std::string body =
      R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u1",
        "kind": {"group": "csiop.dev", "version": "v1alpha1", "kind": "DriverDeployment"},
        "operation": "CREATE", "object": )" +
      GetParam().text() + "}}";
  webhook::ClusterView cluster{[](const std::string&) { return std::vector<std::string>{}; },
                               [](const std::string&) -> const api::Json* { return nullptr; },
                               {}};
  webhook::Reservations reservations([] { return std::chrono::steady_clock::time_point{}; });
  webhook::ReviewResult r;
  withinBudget(std::string(GetParam().name) + " through review",
               [&] { r = webhook::review(body, cluster, reservations); });
  EXPECT_TRUE(r.httpStatus == 200 || r.httpStatus == 400) << r.body.substr(0, 500);
  EXPECT_FALSE(r.body.empty());
  std::printf("  HTTP %d, %s\n", r.httpStatus, r.body.substr(0, 200).c_str());
}

INSTANTIATE_TEST_SUITE_P(Hardened, HostileInput, ::testing::ValuesIn(kCases),
                         [](const auto& p) { return std::string(p.param.name); });

} // namespace
} // namespace csiop
