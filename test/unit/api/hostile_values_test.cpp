// Values that escaped the loader as exceptions (text that is not UTF-8, percentages beyond any
// integer) or passed although no sidecar could run with them (lease timings): each is a field
// error now, through the loader and through `csi-operator render`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <csiop/api/load.hpp>

#include "../cli/cli_run.hpp"
#include "validation_cases.hpp"

namespace csiop::api {
namespace {

const char* kPercentMessage = "must be an integer or a percentage between 0% and 100%";

std::string percent(const std::string& field, const std::string& value) {
  return field + ": Invalid value: \"" + value + "\": " + kPercentMessage;
}

const std::string kHuge = "99999999999999999999%";

INSTANTIATE_TEST_SUITE_P(
    HostileValues, Rule,
    ::testing::Values(
        Case{
            "LeaseDurationBeyondGo",
            "spec: {controller: {leaderElection: {leaseDuration: 9999999999999h}}}",
            {R"(spec.controller.leaderElection.leaseDuration: Invalid value: "9999999999999h": must be a positive Go duration such as "15s" or "1m30s")"}},
        Case{
            "LeaseDurationOverAnHour",
            "spec: {controller: {leaderElection: {leaseDuration: 2h, renewDeadline: 10s}}}",
            {R"(spec.controller.leaderElection.leaseDuration: Invalid value: "2h": must be between 1s and 1h)"}},
        Case{
            "RetryPeriodUnderASecond",
            "spec: {controller: {provisioner: {leaderElection: {retryPeriod: 1ns}}}}",
            {R"(spec.controller.provisioner.leaderElection.retryPeriod: Invalid value: "1ns": must be between 1s and 1h)"}},
        Case{
            "RenewDeadlineUnderASecond",
            "spec: {controller: {leaderElection: {renewDeadline: 999ms, retryPeriod: 1s}}}",
            {R"(spec.controller.leaderElection.renewDeadline: Invalid value: "999ms": must be between 1s and 1h)"}},
        Case{"LeaderElectionAtTheBounds",
             "spec: {controller: {leaderElection: {leaseDuration: 1h, renewDeadline: 59m, "
             "retryPeriod: 1s}}}",
             {}},
        Case{"BudgetHugePercentage",
             "spec: {controller: {podDisruptionBudget: {maxUnavailable: '99999999999999999999%'}}}",
             {percent("spec.controller.podDisruptionBudget.maxUnavailable", kHuge)}},
        Case{"BudgetLongZeroPercentage",
             "spec: {controller: {podDisruptionBudget: {minAvailable: '000000000000000000050%'}}}",
             {}},
        Case{"NodeRollingUpdateHugePercentage",
             "spec: {node: {updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: "
             "'99999999999999999999%'}}}}",
             {percent("spec.node.updateStrategy.rollingUpdate.maxUnavailable", kHuge)}},
        Case{"NodeRollingUpdateNegative",
             "spec: {node: {updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: "
             "-1}}}}",
             {"spec.node.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: -1: must be "
              "greater than or equal to 0"}},
        Case{"NodeRollingUpdateInRange",
             "spec: {node: {updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: "
             "'100%', maxSurge: 0}}}}",
             {}},
        Case{"WindowsRollingUpdateHugePercentage",
             "spec: {windowsNode: {updateStrategy: {rollingUpdate: {maxUnavailable: "
             "'99999999999999999999%'}}}}",
             {percent("spec.windowsNode.updateStrategy.rollingUpdate.maxUnavailable", kHuge)}},
        Case{"CsiProxyPipeLongerThanItsVolumeName",
             "spec: {windowsNode: {csiProxyPipes: "
             "[abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwx-v1, "
             "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxy-v1]}}",
             {"spec.windowsNode.csiProxyPipes[1]: Too long: may not be more than 53 bytes"}},
        Case{"ControllerRollingUpdatePercentageOver100",
             "spec: {controller: {strategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: "
             "'101%'}}}}",
             {percent("spec.controller.strategy.rollingUpdate.maxUnavailable", "101%")}}));

// kBase (validation_cases.hpp) with `from` replaced by `to`.
std::string with(const std::string& from, const std::string& to) {
  std::string text = kBase;
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

struct Utf8Case {
  std::string text;
  std::string expected; // the loader's one error
};

std::vector<Utf8Case> utf8Cases() {
  const std::string p = "DriverDeployment \"demo\": ";
  return {
      {with("demo.csi.example.com", "demo\xff.csi.example.com"),
       p + "spec.driverName: Invalid value: \"demo\xEF\xBF\xBD.csi.example.com\": must be valid "
           "UTF-8"},
      {with("example.com/driver:v1", "example.com/driver:\xC0\xAF"), // an overlong '/'
       p + "spec.driver.image: Invalid value: \"example.com/driver:\xEF\xBF\xBD\xEF\xBF\xBD\": "
           "must be valid UTF-8"},
      {with("controller: {}", "controller: {podLabels: {app: \"\\xED\\xA0\\x80\"}}"),
       ""}, // an escape in a double-quoted scalar is a code point, written as UTF-8: valid
      {with("controller: {}", "controller: {podLabels: {\"k\xfe\": v}}"),
       p + "spec.controller.podLabels: Invalid value: \"k\xEF\xBF\xBD\": keys must be valid "
           "UTF-8"},
      {with("  controller: {}\n", "  controller: {}\n  objects:\n  - {kind: ConfigMap, data: "
                                  "{k: \"\xf4\x90\x80\x80\"}}\n"), // beyond U+10FFFF
       p + "spec.objects[0].data.k: Invalid value: \"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF"
           "\xBD\": must be valid UTF-8"},
  };
}

TEST(HostileValues, TextThatIsNotUtf8IsAFieldError) {
  for (const auto& c : utf8Cases()) {
    SCOPED_TRACE(c.text);
    const Loaded loaded = loadDriverDeployments(c.text);
    if (c.expected.empty()) {
      EXPECT_TRUE(loaded.errors.empty() || loaded.errors[0].find("UTF-8") == std::string::npos)
          << loaded.errors[0];
      continue;
    }
    EXPECT_EQ(loaded.errors, std::vector<std::string>{c.expected});
    EXPECT_TRUE(loaded.objects.empty());
    // The same object as JSON (as a caller with its own parser might hand it over).
    const Loaded again = loadDriverDeployment(parseYaml(c.text).at(0));
    EXPECT_EQ(again.errors, std::vector<std::string>{c.expected});
  }
}

TEST(HostileValues, TextThatIsNotUtf8IsAnErrorOfRender) {
  for (const auto& c : utf8Cases()) {
    if (c.expected.empty()) {
      continue;
    }
    for (const char* output : {"yaml", "json"}) {
      SCOPED_TRACE(c.text + output);
      const auto r = test::runCli({"render", "-o", output, "-f", "-"}, c.text);
      EXPECT_EQ(r.code, 1);
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(r.err, "error: " + c.expected + "\n");
    }
  }
}

TEST(HostileValues, AValueQuotedInAMessageNeverThrows) {
  // Not UTF-8, quoted by a message: U+FFFD in its place.
  EXPECT_EQ(invalid("f", Json::parse(R"({"a": "x"})"), "d").message(),
            R"(f: Invalid value: {"a":"x"}: d)");
  EXPECT_EQ(invalid("f", Json{{"a", "\xff"}}, "d").message(),
            "f: Invalid value: {\"a\":\"\xEF\xBF\xBD\"}: d");
  EXPECT_EQ(duplicate("f", "\xc3").message(), "f: Duplicate value: \"\xEF\xBF\xBD\"");
}

TEST(HostileValues, HugeNumbersAreErrorsOfRender) {
  for (const auto& [text, error] : std::vector<std::pair<std::string, std::string>>{
           {with("controller: {}",
                 "controller: {podDisruptionBudget: {maxUnavailable: '" + kHuge + "'}}"),
            percent("spec.controller.podDisruptionBudget.maxUnavailable", kHuge)},
           {with("controller: {}", "controller: {replicas: 99999999999999999999}"),
            "spec.controller.replicas: Invalid value: 1e+20: spec.controller.replicas in body must "
            "be of type integer: \"number\""},
           {with("controller: {}", "controller: {replicas: " + std::string(200'000, '9') + "}"),
            "spec.controller.replicas: Invalid value: \"" + std::string(200'000, '9') +
                "\": spec.controller.replicas in body must be of type integer: \"string\""},
       }) {
    const auto r = test::runCli({"render", "-f", "-"}, text);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "error: DriverDeployment \"demo\": " + error + "\n");
  }
}

} // namespace
} // namespace csiop::api
