#include "metrics.hpp"

#include <csiop/testsupport/metrics_recording.hpp>

#include <stdexcept>
#include <utility>

namespace csiop::bench {
namespace {} // namespace

double MetricsSnapshot::sum(std::string_view name) const {
  double total = 0;
  for (const auto& s : samples) {
    if (s.name == name) {
      total += s.value;
    }
  }
  return total;
}

double MetricsSnapshot::sum(std::string_view name, std::string_view label,
                            std::string_view value) const {
  double total = 0;
  for (const auto& s : samples) {
    if (s.name != name) {
      continue;
    }
    const auto it = s.labels.find(std::string(label));
    if (it != s.labels.end() && it->second == value) {
      total += s.value;
    }
  }
  return total;
}

std::map<std::string, double> MetricsSnapshot::byLabel(std::string_view name,
                                                       std::string_view label) const {
  std::map<std::string, double> out;
  for (const auto& s : samples) {
    if (s.name != name) {
      continue;
    }
    const auto it = s.labels.find(std::string(label));
    out[it == s.labels.end() ? std::string() : it->second] += s.value;
  }
  return out;
}

MetricsSnapshot parsePrometheus(std::string_view text) {
  MetricsSnapshot snapshot;
  for (auto& [series, value] : testsupport::parseExposition(std::string(text))) {
    snapshot.samples.push_back({std::move(series.name), std::move(series.labels), value});
  }
  return snapshot;
}

boost::asio::awaitable<MetricsSnapshot> scrape(kube::HttpClient& http) {
  kube::HttpRequest request(kube::Method::Get, "/metrics");
  request.accept = "text/plain";
  const kube::HttpResponse response = co_await http.send(std::move(request));
  if (response.status != 200) {
    throw std::runtime_error("GET /metrics: HTTP " + std::to_string(response.status));
  }
  co_return parsePrometheus(response.body);
}

std::map<std::string, double> delta(const std::map<std::string, double>& before,
                                    const std::map<std::string, double>& after) {
  std::map<std::string, double> out;
  for (const auto& [key, value] : after) {
    const auto it = before.find(key);
    const double d = value - (it == before.end() ? 0.0 : it->second);
    if (d != 0) {
      out[key] = d;
    }
  }
  return out;
}

ApiUsage usageBetween(const MetricsSnapshot& before, const MetricsSnapshot& after, double seconds) {
  ApiUsage u;
  u.seconds = seconds;
  u.requests = after.sum("csiop_api_requests_total") - before.sum("csiop_api_requests_total");
  u.mutating = after.sum("csiop_api_mutating_requests_total") -
               before.sum("csiop_api_mutating_requests_total");
  u.reconciles = after.sum("csiop_reconcile_total") - before.sum("csiop_reconcile_total");
  u.requestsByVerb = delta(before.byLabel("csiop_api_requests_total", "verb"),
                           after.byLabel("csiop_api_requests_total", "verb"));
  u.requestsByCode = delta(before.byLabel("csiop_api_requests_total", "code"),
                           after.byLabel("csiop_api_requests_total", "code"));
  u.reconcilesByResult = delta(before.byLabel("csiop_reconcile_total", "result"),
                               after.byLabel("csiop_reconcile_total", "result"));
  return u;
}

} // namespace csiop::bench
