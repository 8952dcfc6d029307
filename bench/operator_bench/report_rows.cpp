#include "report_rows.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace csiop::bench {

std::string format(const char* fmt, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, fmt, value);
  return buffer;
}

std::string counts(const std::map<std::string, double>& byKey) {
  std::string out;
  for (const auto& [key, value] : byKey) {
    out += (out.empty() ? "" : ", ") + key + " " + format("%.0f", value);
  }
  return out.empty() ? "-" : out;
}

void usageRows(std::ostream& out, const ApiUsage& u, int driverDeployments) {
  out << "    window                               " << format("%.1f s", u.seconds) << "\n";
  out << "    reconciles                           " << format("%.0f", u.reconciles) << "  ("
      << counts(u.reconcilesByResult) << ")\n";
  out << "    API requests                         " << format("%.0f", u.requests) << "  ("
      << counts(u.requestsByVerb) << ")\n";
  out << "    API requests by code                 " << counts(u.requestsByCode) << "\n";
  out << "    API requests per reconcile           "
      << (u.reconciles > 0 ? format("%.2f", u.requests / u.reconciles) : "-") << "\n";
  out << "    mutating requests                    " << format("%.0f", u.mutating) << "\n";
  if (driverDeployments > 0) {
    out << "    mutating requests per DD created     "
        << format("%.2f", u.mutating / driverDeployments) << "\n";
    out << "    reconciles per DD                    "
        << format("%.2f", u.reconciles / driverDeployments) << "\n";
  }
}

void memoryRow(std::ostream& out, const std::string& what, const std::optional<MemoryUsage>& m) {
  char line[160];
  if (!m) {
    std::snprintf(line, sizeof line, "  %-38s %10s %10s\n", what.c_str(), "-", "-");
  } else {
    std::snprintf(line, sizeof line, "  %-38s %7.1f MiB %6.1f MiB\n", what.c_str(),
                  static_cast<double>(m->rssKb) / 1024.0, static_cast<double>(m->hwmKb) / 1024.0);
  }
  out << line;
}

void cacheHeapRows(std::ostream& out, const std::map<std::string, double>& objects,
                   const std::map<std::string, double>& heapBytes) {
  if (heapBytes.empty()) {
    return;
  }
  std::vector<std::pair<double, std::string>> bySize;
  double totalBytes = 0;
  double totalObjects = 0;
  for (const auto& [resource, bytes] : heapBytes) {
    bySize.emplace_back(bytes, resource);
    totalBytes += bytes;
  }
  for (const auto& [resource, n] : objects) {
    totalObjects += n;
  }
  std::sort(bySize.rbegin(), bySize.rend());
  out << "  heap of the caches (estimate)         objects        MiB  bytes each\n";
  const auto row = [&out](const std::string& what, double n, double bytes) {
    char line[160];
    std::snprintf(line, sizeof line, "    %-34s %8.0f %10.2f %11.0f\n", what.c_str(), n,
                  bytes / 1048576.0, n > 0 ? bytes / n : 0.0);
    out << line;
  };
  for (const auto& [bytes, resource] : bySize) {
    const auto n = objects.find(resource);
    row(resource, n == objects.end() ? 0.0 : n->second, bytes);
  }
  row("all caches", totalObjects, totalBytes);
}

void cpuRow(std::ostream& out, const std::string& what, const std::optional<CpuUsage>& c) {
  char line[160];
  if (!c) {
    std::snprintf(line, sizeof line, "  %-38s %7s %9s %8s %9s\n", what.c_str(), "-", "-", "-", "-");
  } else {
    const std::string peak = c->peakMillicores ? format("%.0f", *c->peakMillicores) : "-";
    std::snprintf(line, sizeof line, "  %-38s %5.1f s %7.2f s %8.0f %9s\n", what.c_str(),
                  c->wallSeconds, c->cpuSeconds, c->millicores(), peak.c_str());
  }
  out << line;
}

} // namespace csiop::bench
