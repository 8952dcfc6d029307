#include <csiop/testsupport/metrics_recording.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace csiop::testsupport {
namespace {

std::string escaped(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// The labels of `line` from `at` (just after '{') to the closing '}'; `at` ends after it.
Labels parseLabels(const std::string& line, std::size_t& at) {
  Labels labels;
  while (at < line.size() && line[at] != '}') {
    const std::size_t eq = line.find('=', at);
    if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
      throw std::runtime_error("unreadable labels: " + line);
    }
    std::string key = line.substr(at, eq - at);
    std::string value;
    std::size_t i = eq + 2;
    for (; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        ++i;
        value += line[i] == 'n' ? '\n' : line[i];
      } else {
        value += line[i];
      }
    }
    if (i >= line.size()) {
      throw std::runtime_error("unterminated label value: " + line);
    }
    labels[std::move(key)] = std::move(value);
    at = i + 1;
    if (at < line.size() && line[at] == ',') {
      ++at;
    }
  }
  if (at >= line.size()) {
    throw std::runtime_error("no closing brace: " + line);
  }
  ++at;
  return labels;
}

double parseValue(const std::string& text, const std::string& line) {
  if (text == "+Inf" || text == "Inf") {
    return INFINITY;
  }
  if (text == "-Inf") {
    return -INFINITY;
  }
  if (text == "NaN" || text == "Nan") {
    return NAN;
  }
  std::size_t used = 0;
  const double v = std::stod(text, &used);
  if (used != text.size()) {
    throw std::runtime_error("unreadable value: " + line);
  }
  return v;
}

std::string formatValue(double v) {
  if (std::isnan(v)) {
    return "NaN";
  }
  if (std::isinf(v)) {
    return v > 0 ? "Inf" : "-Inf";
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

} // namespace

std::string Series::str() const {
  std::string out = name + "{";
  bool first = true;
  for (const auto& [key, value] : labels) {
    out += (first ? "" : ",") + key + "=\"" + escaped(value) + "\"";
    first = false;
  }
  return out + "}";
}

std::vector<std::pair<Series, double>> parseExposition(const std::string& text) {
  std::vector<std::pair<Series, double>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (line.empty() || line[0] == '#') {
      continue;
    }
    Series s;
    std::size_t at = line.find_first_of("{ ");
    if (at == std::string::npos) {
      throw std::runtime_error("unreadable sample: " + line);
    }
    s.name = line.substr(0, at);
    if (line[at] == '{') {
      ++at;
      s.labels = parseLabels(line, at);
    }
    while (at < line.size() && line[at] == ' ') {
      ++at;
    }
    const std::size_t end = line.find(' ', at); // a timestamp may follow
    out.emplace_back(std::move(s),
                     parseValue(line.substr(at, end == std::string::npos ? end : end - at), line));
  }
  return out;
}

MetricsRecording::MetricsRecording(Labels targetLabels, std::function<bool(const Series&)> keep)
    : target_(std::move(targetLabels)), keep_(std::move(keep)) {}

void MetricsRecording::add(const std::string& exposition, bool sameStep,
                           const Labels& targetLabels) {
  if (!sameStep || steps_ == 0) {
    ++steps_;
  }
  for (auto& [series, value] : parseExposition(exposition)) {
    for (const Labels* target : {&targetLabels, static_cast<const Labels*>(&target_)}) {
      for (const auto& [key, label] : *target) {
        series.labels.emplace(key, label); // the scraped label wins, as with honor_labels
      }
    }
    if (keep_ && !keep_(series)) {
      continue;
    }
    auto& values = series_[series];
    values.resize(static_cast<std::size_t>(steps_));
    values.back() = value;
  }
}

std::string MetricsRecording::values(const Series& s) const {
  const auto it = series_.find(s);
  std::string out;
  for (int step = 0; step < steps_; ++step) {
    const std::size_t i = static_cast<std::size_t>(step);
    const auto at = [&](std::size_t k) {
      return it != series_.end() && k < it->second.size() ? it->second[k] : std::nullopt;
    };
    const std::optional<double> value = at(i);
    const std::string text = value                ? formatValue(*value)
                             : i > 0 && at(i - 1) ? std::string("stale")
                                                  : std::string("_");
    out += (step == 0 ? "" : " ") + text;
  }
  return out;
}

std::string promtoolRules(const nlohmann::ordered_json& prometheusRule) {
  nlohmann::ordered_json spec = prometheusRule.at("spec");
  for (auto& group : spec.at("groups")) {
    for (auto& rule : group.at("rules")) {
      rule.erase("annotations");
    }
  }
  return spec.dump(2) + "\n";
}

std::vector<std::string> alertNames(const nlohmann::ordered_json& prometheusRule) {
  std::vector<std::string> out;
  for (const auto& group : prometheusRule.at("spec").at("groups")) {
    for (const auto& rule : group.at("rules")) {
      if (rule.contains("alert")) {
        out.push_back(rule.at("alert").get<std::string>());
      }
    }
  }
  return out;
}

std::string promtoolTest(const std::string& rulesFile, const MetricsRecording& recording,
                         const std::vector<ExpectedAlerts>& expected, const std::string& interval) {
  nlohmann::ordered_json input = nlohmann::ordered_json::array();
  for (const auto& [series, samples] : recording.series()) {
    input.push_back({{"series", series.str()}, {"values", recording.values(series)}});
  }
  nlohmann::ordered_json tests = nlohmann::ordered_json::array();
  for (const ExpectedAlerts& e : expected) {
    nlohmann::ordered_json alerts = nlohmann::ordered_json::array();
    for (const Labels& labels : e.firing) {
      alerts.push_back({{"exp_labels", labels}});
    }
    tests.push_back(
        {{"eval_time", e.evalTime}, {"alertname", e.alertname}, {"exp_alerts", alerts}});
  }
  // JSON is YAML: promtool reads it as its test file.
  const nlohmann::ordered_json file = {
      {"rule_files", {rulesFile}},
      {"evaluation_interval", interval},
      {"tests", {{{"interval", interval}, {"input_series", input}, {"alert_rule_test", tests}}}}};
  return file.dump(2) + "\n";
}

} // namespace csiop::testsupport
