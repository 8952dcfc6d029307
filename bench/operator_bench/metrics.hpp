// The operator's Prometheus /metrics, scraped and summed.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <csiop/kube/http.hpp>

namespace csiop::bench {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct MetricsSnapshot {
  std::vector<Sample> samples;

  // Sum of every sample of the metric (over all label values).
  double sum(std::string_view name) const;
  // Sum of the samples whose label has this value.
  double sum(std::string_view name, std::string_view label, std::string_view value) const;
  // Sums per value of one label: {"get": 12, "apply": 3}.
  std::map<std::string, double> byLabel(std::string_view name, std::string_view label) const;
};

// The Prometheus text exposition format (comments skipped, label values unescaped).
// Throws std::runtime_error on a line that is not a sample.
MetricsSnapshot parsePrometheus(std::string_view text);

// GET /metrics; throws std::runtime_error unless 200.
boost::asio::awaitable<MetricsSnapshot> scrape(kube::HttpClient& http);

// after - before, per label value (values that did not change are left out).
std::map<std::string, double> delta(const std::map<std::string, double>& before,
                                    const std::map<std::string, double>& after);

// What the operator did between two scrapes: csiop_api_requests_total (by verb and by code),
// csiop_api_mutating_requests_total and csiop_reconcile_total (by result).
struct ApiUsage {
  double seconds = 0;
  double requests = 0;
  double mutating = 0;
  double reconciles = 0;
  std::map<std::string, double> requestsByVerb;
  std::map<std::string, double> requestsByCode;
  std::map<std::string, double> reconcilesByResult;
};
ApiUsage usageBetween(const MetricsSnapshot& before, const MetricsSnapshot& after, double seconds);

} // namespace csiop::bench
