// The rows the scenarios' reports share: API usage from the operator's metrics, memory and CPU
// time from /proc.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "metrics.hpp"
#include "process_usage.hpp"

namespace csiop::bench {

// printf of one number, e.g. format("%.1f s", 2.5).
std::string format(const char* fmt, double value);

// "get 12, list 3" ("-" for none).
std::string counts(const std::map<std::string, double>& byKey);

// Reconciles and API requests in a window (by result, verb and code); per DriverDeployment
// created when driverDeployments > 0.
void usageRows(std::ostream& out, const ApiUsage& usage, int driverDeployments);

// "  <what>  VmRSS MiB  VmHWM MiB".
void memoryRow(std::ostream& out, const std::string& what, const std::optional<MemoryUsage>& m);

// The operator's caches by estimated heap, largest first: objects, MiB, bytes per object, and the
// total (csiop_cache_objects and csiop_cache_heap_bytes by resource). Nothing if none.
void cacheHeapRows(std::ostream& out, const std::map<std::string, double>& objects,
                   const std::map<std::string, double>& heapBytes);

// "  <what>  wall s  CPU s  average mCPU  peak mCPU".
void cpuRow(std::ostream& out, const std::string& what, const std::optional<CpuUsage>& c);

} // namespace csiop::bench
