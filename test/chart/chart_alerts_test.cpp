// The chart's alerts (a prometheus-operator PrometheusRule) and Grafana dashboard: off by default;
// the rule rendered only where the cluster serves its API or when forced, NOTES.txt saying when
// it was skipped; each alert has a runbook in docs/how-to/alerts.md; the per-alert values
// override or disable; every metric an alert or a panel names is a family the operator serves;
// promtool (the pinned build, $CSIOP_PROMTOOL) accepts the rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <csiop/api/yaml.hpp>
#include <csiop/runtime/operator_metrics.hpp>
#include <csiop/testsupport/metrics_recording.hpp>
#include <csiop/testsupport/promql_metrics.hpp>

#include "helm_template.hpp"

namespace csiop {
namespace {

using api::Json;

const std::string kRuleApi = "--api-versions monitoring.coreos.com/v1/PrometheusRule";
const std::string kEnabled = "--set metrics.prometheusRule.enabled=true";
const std::string kDashboard = "--set metrics.grafanaDashboard.enabled=true";

const Json* ofKind(const std::vector<Json>& objects, const std::string& kind) {
  for (const Json& o : objects) {
    if (o["kind"] == kind) {
      return &o;
    }
  }
  return nullptr;
}

const Json* dashboardOf(const std::vector<Json>& objects) {
  for (const Json& o : objects) {
    if (o["kind"] == "ConfigMap" && o["metadata"]["name"] == "csiop-csi-operator-dashboard") {
      return &o;
    }
  }
  return nullptr;
}

std::vector<Json> rulesOf(const Json& rule) {
  std::vector<Json> out;
  for (const Json& group : rule["spec"]["groups"]) {
    for (const Json& r : group["rules"]) {
      out.push_back(r);
    }
  }
  return out;
}

const Json* alertNamed(const std::vector<Json>& rules, const std::string& name) {
  for (const Json& r : rules) {
    if (r.value("alert", "") == name) {
      return &r;
    }
  }
  return nullptr;
}

// Every family the operator serves, with the series that need labels set.
std::set<std::string> servedFamilies() {
  runtime::OperatorMetrics metrics;
  metrics.observeApiRequest("get", "pods", 200);
  metrics.observeApiRequest("apply", "pods", 200);
  metrics.observeApiWarning("daemonsets");
  metrics.setCache("pods", 1, 1024);
  metrics.setUnregisteredNodes({{"a", {{"NotRegistered", 1}}}});
  metrics.setVolumeFailures({{"a", {{"MountFailed", 1}}}});
  metrics.setConditions({{"a", {{"Ready", "True"}}}});
  std::set<std::string> out;
  static const std::regex type(R"(# TYPE (\S+) \S+)");
  std::istringstream in(metrics.exposition());
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, type)) {
      out.insert(m[1]);
    }
  }
  return out;
}

TEST(ChartAlerts, NeitherTheRuleNorTheDashboardByDefault) {
  const auto objects = test::helmTemplate(kRuleApi);
  EXPECT_EQ(ofKind(objects, "PrometheusRule"), nullptr);
  EXPECT_EQ(dashboardOf(objects), nullptr);
}

TEST(ChartAlerts, TheRuleIsRenderedWhereItsApiIsServedOrForcedAndTheNotesSaySo) {
  EXPECT_NE(ofKind(test::helmTemplate(kEnabled + " " + kRuleApi), "PrometheusRule"), nullptr);
  EXPECT_NE(ofKind(test::helmTemplate(kEnabled + " --set metrics.prometheusRule.force=true"),
                   "PrometheusRule"),
            nullptr);
  EXPECT_EQ(ofKind(test::helmTemplate(kEnabled), "PrometheusRule"), nullptr);
  const std::string skipped = test::helmNotes(kEnabled);
  EXPECT_NE(skipped.find("WARNING: metrics.prometheusRule.enabled is true, but this cluster does "
                         "not serve the"),
            std::string::npos)
      << skipped;
  const std::string rendered = test::helmNotes(kEnabled + " " + kRuleApi + " " + kDashboard);
  EXPECT_NE(rendered.find("Alerts: the PrometheusRule csiop-system/csiop-csi-operator"),
            std::string::npos)
      << rendered;
  EXPECT_NE(rendered.find("Dashboard: the ConfigMap csiop-system/csiop-csi-operator-dashboard"),
            std::string::npos)
      << rendered;
  EXPECT_EQ(rendered.find("WARNING"), std::string::npos) << rendered;
}

TEST(ChartAlerts, EveryAlertHasARunbookAndARowInTheDocs) {
  const auto objects = test::helmTemplate(kEnabled + " " + kRuleApi);
  const Json* rule = ofKind(objects, "PrometheusRule");
  ASSERT_NE(rule, nullptr);
  const std::string page =
      test::readFile(std::filesystem::path(CSIOP_SOURCE_DIR) / "docs/how-to/alerts.md");
  const auto rules = rulesOf(*rule);
  EXPECT_EQ(rules.size(), 9u);
  for (const Json& r : rules) {
    const std::string name = r["alert"];
    EXPECT_NE(page.find("\n## " + name + "\n"), std::string::npos) << name << ": no runbook";
    std::string anchor = name;
    std::transform(anchor.begin(), anchor.end(), anchor.begin(), ::tolower);
    EXPECT_NE(page.find("| [" + name + "](#" + anchor + ") |"), std::string::npos)
        << name << ": no row in the table";
    EXPECT_TRUE(r["labels"].contains("severity")) << name;
    EXPECT_FALSE(r["annotations"].value("summary", "").empty()) << name;
    EXPECT_FALSE(r["annotations"].value("description", "").empty()) << name;
    EXPECT_FALSE(r["annotations"].contains("runbook_url")) << name; // none without a base
  }
}

TEST(ChartAlerts, ValuesOverrideDisableAndLabelTheAlerts) {
  const auto objects = test::helmTemplate(
      kEnabled + " " + kRuleApi +
      " --set metrics.prometheusRule.alerts.CSIOperatorWebhookDenials.disabled=true"
      " --set metrics.prometheusRule.alerts.CSIDriverDeploymentNotReady.for=30m"
      " --set metrics.prometheusRule.alerts.CSIDriverDeploymentNotReady.severity=critical"
      " --set metrics.prometheusRule.additionalLabels.team=storage"
      " --set metrics.prometheusRule.errorWindow=30m"
      " --set metrics.prometheusRule.selector='job=\"ops\"'"
      " --set metrics.prometheusRule.runbookBaseURL=https://docs.example.com/alerts.md");
  const Json* rule = ofKind(objects, "PrometheusRule");
  ASSERT_NE(rule, nullptr);
  const auto rules = rulesOf(*rule);
  EXPECT_EQ(alertNamed(rules, "CSIOperatorWebhookDenials"), nullptr);
  const Json* notReady = alertNamed(rules, "CSIDriverDeploymentNotReady");
  ASSERT_NE(notReady, nullptr);
  EXPECT_EQ((*notReady)["for"], "30m");
  EXPECT_EQ((*notReady)["labels"]["severity"], "critical");
  EXPECT_EQ((*notReady)["labels"]["team"], "storage");
  EXPECT_EQ((*notReady)["annotations"]["runbook_url"],
            "https://docs.example.com/alerts.md#csidriverdeploymentnotready");
  EXPECT_NE((*notReady)["expr"].get<std::string>().find("{job=\"ops\",condition=\"Ready\""),
            std::string::npos)
      << (*notReady)["expr"];
  const Json* errors = alertNamed(rules, "CSIOperatorReconcileErrors");
  ASSERT_NE(errors, nullptr);
  EXPECT_NE((*errors)["expr"].get<std::string>().find("[30m]"), std::string::npos)
      << (*errors)["expr"];
  // An alert name the chart does not have is refused by the schema.
  EXPECT_NE(test::helmTemplateError(
                kEnabled + " --set metrics.prometheusRule.alerts.NoSuchAlert.disabled=true"),
            "");
}

TEST(ChartAlerts, EveryMetricAnAlertOrAPanelReadsIsOneTheOperatorServes) {
  const auto objects = test::helmTemplate(kEnabled + " " + kRuleApi + " " + kDashboard);
  const Json* rule = ofKind(objects, "PrometheusRule");
  const Json* dashboard = dashboardOf(objects);
  ASSERT_NE(rule, nullptr);
  ASSERT_NE(dashboard, nullptr);
  const Json board = Json::parse(dashboard->at("data").at("csi-operator.json").get<std::string>());
  std::set<std::string> read = testsupport::metricsReadByRules(*rule);
  read.merge(testsupport::metricsReadByPanels(board));
  int targets = 0;
  for (const Json& panel : board["panels"]) {
    if (panel["type"] != "row") {
      EXPECT_FALSE(panel.value("targets", Json::array()).empty()) << panel["title"];
      targets += static_cast<int>(panel.value("targets", Json::array()).size());
    }
  }
  EXPECT_GE(targets, 15);
  std::set<std::string> operatorMetrics;
  for (const std::string& metric : read) {
    if (metric.rfind("apiserver_", 0) != 0) { // the API server's own: e2e scrapes it
      operatorMetrics.insert(metric);
    }
  }
  // Each is a family the operator serves, and each family it serves is read somewhere.
  EXPECT_EQ(operatorMetrics, servedFamilies());
  // The dashboard's variables pick the operator's series by namespace and job.
  EXPECT_EQ(board["templating"]["list"].size(), 3u);
}

TEST(ChartAlerts, PromtoolAcceptsTheRules) {
  const char* promtool = std::getenv("CSIOP_PROMTOOL");
  ASSERT_TRUE(promtool != nullptr && *promtool != '\0')
      << "CSIOP_PROMTOOL is not set; run through test/chart/chart-test exec";
  const auto objects = test::helmTemplate(kEnabled + " " + kRuleApi);
  const Json* rule = ofKind(objects, "PrometheusRule");
  ASSERT_NE(rule, nullptr);
  char dir[] = "/tmp/csiop-rules-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path file = std::filesystem::path(dir) / "rules.json";
  std::ofstream(file) << (*rule)["spec"].dump(2);
  const std::string out =
      test::capture(std::string(promtool) + " check rules --lint=all " + file.string() + " 2>&1");
  EXPECT_NE(out.find("SUCCESS: 9 rules found"), std::string::npos) << out;
  std::filesystem::remove_all(dir);
}

// The rules as the chart renders them with test-sized durations, without their annotations
// (promtool compares those too; the tests check when each alert fires), as a file in `dir`.
std::filesystem::path testRules(const std::filesystem::path& dir) {
  const auto objects =
      test::helmTemplate(kEnabled + " " + kRuleApi +
                         " --set metrics.prometheusRule.alerts.CSIDriverDeploymentNotReady.for=5s"
                         " --set metrics.prometheusRule.selector='job=\"op\"'");
  const Json* rule = ofKind(objects, "PrometheusRule");
  if (rule == nullptr) {
    throw std::runtime_error("no PrometheusRule rendered");
  }
  const auto file = dir / "rules.json";
  std::ofstream(file) << testsupport::promtoolRules(*rule);
  return file;
}

// The pipeline the e2e recordings use, on the operator's own serializer: ten scrapes with the
// DriverDeployment Ready, then ten with it not; promtool finds CSIDriverDeploymentNotReady
// silent at the first tenth second and firing at the twentieth (for: 5s).
TEST(ChartAlerts, PromtoolEvaluatesARecordingOfTheOperatorsMetrics) {
  const char* promtool = std::getenv("CSIOP_PROMTOOL");
  ASSERT_TRUE(promtool != nullptr && *promtool != '\0')
      << "CSIOP_PROMTOOL is not set; run through test/chart/chart-test exec";
  char dir[] = "/tmp/csiop-rules-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const auto rules = testRules(dir);
  testsupport::MetricsRecording recording({{"job", "op"}, {"namespace", "csiop-system"}});
  runtime::OperatorMetrics metrics;
  for (int step = 0; step < 20; ++step) {
    metrics.setConditions({{"demo", {{"Ready", step < 10 ? "True" : "False"}}}});
    recording.add(metrics.exposition());
  }
  const std::string test =
      testsupport::promtoolTest(rules.string(), recording,
                                {{"9s", "CSIDriverDeploymentNotReady", {}},
                                 {"19s",
                                  "CSIDriverDeploymentNotReady",
                                  {{{"driverdeployment", "demo"}, {"severity", "warning"}}}}});
  std::ofstream(std::filesystem::path(dir) / "test.json") << test;
  const std::string out =
      test::capture(std::string(promtool) + " test rules " + dir + "/test.json 2>&1");
  EXPECT_NE(out.find("SUCCESS"), std::string::npos) << out << "\n" << test.substr(0, 3000);
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace csiop
