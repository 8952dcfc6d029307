#include "metrics.hpp"

#include <charconv>
#include <limits>
#include <stdexcept>
#include <utility>

namespace csiop::bench {
namespace {

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':';
}

double parseValue(std::string_view text) {
  if (text == "+Inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (text == "-Inf") {
    return -std::numeric_limits<double>::infinity();
  }
  if (text == "NaN" || text == "Nan") { // client_golang's, prometheus-cpp's
    return std::numeric_limits<double>::quiet_NaN();
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw std::runtime_error("metrics: bad value '" + std::string(text) + "'");
  }
  return value;
}

// name{k="v",...} value [timestamp]
Sample parseLine(std::string_view line) {
  Sample s;
  std::size_t i = 0;
  while (i < line.size() && isNameChar(line[i])) {
    ++i;
  }
  s.name = std::string(line.substr(0, i));
  if (s.name.empty()) {
    throw std::runtime_error("metrics: no metric name in '" + std::string(line) + "'");
  }
  if (i < line.size() && line[i] == '{') {
    ++i;
    for (;;) {
      while (i < line.size() && (line[i] == ',' || line[i] == ' ')) {
        ++i;
      }
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      const std::size_t eq = line.find('=', i);
      if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
        throw std::runtime_error("metrics: bad labels in '" + std::string(line) + "'");
      }
      std::string key(line.substr(i, eq - i));
      std::string value;
      i = eq + 2;
      for (; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) {
          ++i;
          value += line[i] == 'n' ? '\n' : line[i];
        } else {
          value += line[i];
        }
      }
      if (i >= line.size()) {
        throw std::runtime_error("metrics: unterminated label value in '" + std::string(line) +
                                 "'");
      }
      ++i; // closing quote
      s.labels.emplace(std::move(key), std::move(value));
    }
  }
  while (i < line.size() && line[i] == ' ') {
    ++i;
  }
  std::string_view rest = line.substr(i);
  rest = rest.substr(0, rest.find(' ')); // drop a timestamp
  s.value = parseValue(rest);
  return s;
}

} // namespace

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
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.empty() || line.front() == '#') {
      continue;
    }
    snapshot.samples.push_back(parseLine(line));
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
