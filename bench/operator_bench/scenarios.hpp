// The measured scenarios. Each fills its part of the report as it goes, so a failure midway
// still leaves what was measured.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "context.hpp"
#include "metrics.hpp"
#include "report.hpp"

namespace csiop::bench {

// Waits until the operator's metrics show no reconcile for `quiet` and an empty work queue (at
// most `limit`); returns the last scrape.
boost::asio::awaitable<MetricsSnapshot>
waitOperatorIdle(Context& ctx, std::chrono::milliseconds quiet, std::chrono::milliseconds limit);

// The operator's caches: objects and estimated heap by resource (csiop_cache_objects,
// csiop_cache_heap_bytes). The operator measures them on a scrape at most every 10 s; this
// waits 11 s without scraping, so that the scrape it then makes measures them anew.
struct CacheSizes {
  std::map<std::string, double> objects;
  std::map<std::string, double> heapBytes;
};
boost::asio::awaitable<CacheSizes> readCacheSizes(Context& ctx);

// options.steadySeconds in which nothing is asked of the operator: what it did anyway (it
// should write nothing) and its CPU time, sampled every 1 s for the peak.
struct SteadyState {
  std::optional<ApiUsage> usage;
  std::optional<CpuUsage> cpu;
};
boost::asio::awaitable<SteadyState> measureSteady(Context& ctx);

// options.singleIterations times: create DriverDeployment `name`, wait until every rendered
// object exists and it is Ready, delete it, wait until it and its children are gone and its
// pods too (so rounds do not overlap). The operator's CPU time is taken from the create to
// Ready.
boost::asio::awaitable<void> runSingle(Context& ctx, std::string name, Report& report);

// Creates `names` at once, waits for every child and Ready, then until the operator is idle
// (metrics: API usage of the run), then options.steadySeconds of steady state (API usage,
// should be write-free), then reads the operator's memory; its CPU time over the run and the
// steady state, sampled every 1 s for the peak. Leaves the DriverDeployments.
boost::asio::awaitable<void> runMany(Context& ctx, std::vector<std::string> names, Report& report);

// Deletes `names` at once and waits until each is gone (and the operator's CPU time meanwhile).
boost::asio::awaitable<void> deleteMany(Context& ctx, std::vector<std::string> names,
                                        Report& report);

} // namespace csiop::bench
