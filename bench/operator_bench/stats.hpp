// Latency distributions: nearest-rank percentiles over the samples (with 20 samples p99 is the
// maximum; that is what 20 samples can say).
#pragma once

#include <cstddef>
#include <vector>

namespace csiop::bench {

struct Summary {
  std::size_t n = 0;
  double min = 0;
  double p50 = 0;
  double p99 = 0;
  double max = 0;
};

// q in (0, 1]; samples need not be sorted. 0 for no samples.
double percentile(std::vector<double> samples, double q);
Summary summarize(const std::vector<double>& samples);

} // namespace csiop::bench
