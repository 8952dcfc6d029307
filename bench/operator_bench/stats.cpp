#include "stats.hpp"

#include <algorithm>
#include <cmath>

namespace csiop::bench {

double percentile(std::vector<double> samples, double q) {
  if (samples.empty()) {
    return 0;
  }
  std::sort(samples.begin(), samples.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples.size())));
  return samples[std::clamp<std::size_t>(rank, 1, samples.size()) - 1];
}

Summary summarize(const std::vector<double>& samples) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) {
    return s;
  }
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  s.min = *lo;
  s.max = *hi;
  s.p50 = percentile(samples, 0.50);
  s.p99 = percentile(samples, 0.99);
  return s;
}

} // namespace csiop::bench
