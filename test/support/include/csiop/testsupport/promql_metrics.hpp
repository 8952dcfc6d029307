// The metric families a PromQL expression reads, for the tests that check the chart's alerts and
// dashboard against what the operator (csiop_*) and the API server (apiserver_*) serve.
#pragma once

#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace csiop::testsupport {

// The csiop_* and apiserver_* names in `expr`; a csiop histogram's _bucket, _sum and _count are
// its family's name (the API server's names are taken as written).
// Names inside quotes are label values (error_type=~"...|apiserver_internal_error"), not read.
inline std::set<std::string> metricsIn(const std::string& expr) {
  std::set<std::string> out;
  static const std::regex quoted(R"("(\\.|[^"\\])*")");
  const std::string unquoted = std::regex_replace(expr, quoted, "\"\"");
  static const std::regex name(R"(\b((csiop|apiserver)_[a-z0-9_]+)\b)");
  for (auto it = std::sregex_iterator(unquoted.begin(), unquoted.end(), name);
       it != std::sregex_iterator(); ++it) {
    std::string metric = (*it)[1];
    for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
      if (metric.rfind("csiop_", 0) == 0 && metric.ends_with(suffix)) {
        metric.resize(metric.size() - suffix.size());
      }
    }
    out.insert(metric);
  }
  return out;
}

// What the rules of a PrometheusRule read.
inline std::set<std::string> metricsReadByRules(const nlohmann::ordered_json& prometheusRule) {
  std::set<std::string> out;
  for (const auto& group : prometheusRule.at("spec").at("groups")) {
    for (const auto& rule : group.at("rules")) {
      out.merge(metricsIn(rule.at("expr").get<std::string>()));
    }
  }
  return out;
}

// What the panels of a Grafana dashboard (its JSON model) read.
inline std::set<std::string> metricsReadByPanels(const nlohmann::ordered_json& dashboard) {
  std::set<std::string> out;
  for (const auto& panel : dashboard.at("panels")) {
    for (const auto& target : panel.value("targets", nlohmann::ordered_json::array())) {
      out.merge(metricsIn(target.at("expr").get<std::string>()));
    }
  }
  return out;
}

} // namespace csiop::testsupport
