// The metric families a PromQL expression reads, for the tests that check the chart's alerts and
// dashboard against what the operator (csiop_*) and the API server (apiserver_*) serve.
#pragma once

#include <regex>
#include <set>
#include <string>

namespace csiop::testsupport {

// The csiop_* and apiserver_* names in `expr`; a csiop histogram's _bucket, _sum and _count are
// its family's name (the API server's names are taken as written).
inline std::set<std::string> metricsIn(const std::string& expr) {
  std::set<std::string> out;
  static const std::regex name(R"(\b((csiop|apiserver)_[a-z0-9_]+)\b)");
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), name); it != std::sregex_iterator();
       ++it) {
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

} // namespace csiop::testsupport
