// Scrapes of a real /metrics, recorded step by step, and written as a promtool rule unit test
// (`promtool test rules`): the e2e tests evaluate the chart's alerts on the series a real run
// served, at the times its conditions held and did not.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace csiop::testsupport {

// A sample's series as promtool writes it: name{label="value",...}, labels sorted.
using Labels = std::map<std::string, std::string>;
struct Series {
  std::string name;
  Labels labels;
  bool operator<(const Series& other) const {
    return name != other.name ? name < other.name : labels < other.labels;
  }
  std::string str() const;
};

// The samples of a Prometheus text exposition (0.0.4): comments and blank lines skipped; throws
// std::runtime_error on a line it cannot read.
std::vector<std::pair<Series, double>> parseExposition(const std::string& text);

class MetricsRecording {
public:
  // `targetLabels` are added to every series, as Prometheus adds its target's (namespace, job);
  // `keep` decides which series are recorded (all when empty).
  explicit MetricsRecording(Labels targetLabels = {}, std::function<bool(const Series&)> keep = {});

  // One scrape, the next step. Several targets may be scraped at the same step with `sameStep`;
  // `targetLabels` are added to this scrape's series besides the recording's own.
  void add(const std::string& exposition, bool sameStep = false, const Labels& targetLabels = {});
  int steps() const { return steps_; }
  const std::map<Series, std::vector<std::optional<double>>>& series() const { return series_; }
  // The values of one series at each step, as promtool's input_series `values` reads them:
  // "stale" at the first step without it after one with it (Prometheus writes a staleness
  // marker when a series leaves its target's scrape, or the scrape fails), "_" after that.
  // So a gauge a target stopped serving ends there, as in Prometheus, instead of lasting for
  // the 5-minute lookback.
  std::string values(const Series& s) const;

private:
  Labels target_;
  std::function<bool(const Series&)> keep_;
  std::map<Series, std::vector<std::optional<double>>> series_;
  int steps_ = 0;
};

// An alert promtool must find firing at `evalTime` (Go duration from the first step), with
// these label sets (none: it must not fire).
struct ExpectedAlerts {
  std::string evalTime;
  std::string alertname;
  std::vector<Labels> firing;
};

// A PrometheusRule's rules (its spec: a rules file's groups) as a rules file for promtool,
// without the rules' annotations: promtool's alert tests compare those too, and the tests check
// when and with which labels each alert fires, not its words.
std::string promtoolRules(const nlohmann::ordered_json& prometheusRule);
// The names of its alerts.
std::vector<std::string> alertNames(const nlohmann::ordered_json& prometheusRule);

// The test file: `rulesFile`, the recording's series at `interval` per step, the expectations.
std::string promtoolTest(const std::string& rulesFile, const MetricsRecording& recording,
                         const std::vector<ExpectedAlerts>& expected,
                         const std::string& interval = "1s");

} // namespace csiop::testsupport
