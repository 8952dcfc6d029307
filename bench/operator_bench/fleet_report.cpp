#include <cstdio>

#include "fleet.hpp"
#include "report_rows.hpp"

namespace csiop::bench {
namespace {

void value(std::ostream& out, const std::string& what, const std::string& v) {
  char line[256];
  std::snprintf(line, sizeof line, "  %-56s %s\n", what.c_str(), v.c_str());
  out << line;
}

std::string millis(const std::optional<double>& ms) {
  return ms ? format("%.0f ms", *ms) : std::string("-");
}

std::string changes(const PodChanges& c) {
  return format("%.0f", c.total()) + " (added " + format("%.0f", c.added) + ", modified " +
         format("%.0f", c.modified) + ", deleted " + format("%.0f", c.deleted) + ")";
}

// The operator's CPU time per pod change in the same window.
std::string perChange(const std::optional<CpuUsage>& cpu, const PodChanges& c) {
  return cpu && c.total() > 0 ? format("%.0f us", cpu->cpuSeconds * 1e6 / c.total())
                              : std::string("-");
}

std::string mib(long kb) {
  return kb < 0 ? std::string("-") : format("%.1f MiB", static_cast<double>(kb) / 1024.0);
}

void cpuHeader(std::ostream& out) {
  out << "  operator CPU                                wall       CPU avg mCPU peak mCPU\n";
}

} // namespace

void printFleetReport(std::ostream& out, const FleetReport& f) {
  out << "workload    " << f.driverDeployments << " hostpath-like DriverDeployments of "
      << f.objectsPerDriverDeployment << " objects each, their node plugin on every one of "
      << f.nodes << " nodes: " << f.nodePluginPods << " node plugin pods\n";
  out << "            the drivers are registered in every node's CSINode before the creates\n";
  out << "control     "
      << (f.controlPlaneRates.empty() ? "rates of the controller manager and scheduler unknown"
                                      : f.controlPlaneRates)
      << "\n";

  out << "\n" << f.driverDeployments << " DDs created at once\n";
  value(out, "creates sent -> last create returned", millis(f.createSpanMs));
  value(out, "creates sent -> every child of every DD", millis(f.allChildrenMs));
  value(out, "creates sent -> every node plugin pod Ready (converged)", millis(f.podsReadyMs));
  if (f.podsReadyMs && *f.podsReadyMs > 0) {
    value(out, "node plugin pods Ready per second, creates -> converged",
          format("%.1f", f.nodePluginPods / (*f.podsReadyMs / 1000.0)));
  }
  value(out, "creates sent -> every DD's status Ready", millis(f.ddsReadyMs));
  value(out, "creates sent -> operator idle", millis(f.idleMs));
  value(out, "pod changes, creates -> converged", changes(f.convergeChanges));
  value(out, "operator CPU per pod change, creates -> converged",
        perChange(f.convergeCpu, f.convergeChanges));
  value(out, "pod changes, creates -> idle", changes(f.idleChanges));
  value(out, "operator CPU per pod change, creates -> idle", perChange(f.idleCpu, f.idleChanges));
  if (f.idleUsage && f.idleChanges.total() > 0) {
    value(out, "reconciles per pod change, creates -> idle",
          format("%.3f", f.idleUsage->reconciles / f.idleChanges.total()));
  }
  if (f.convergedMemory) {
    value(out,
          std::string("operator memory at ") + (f.memoryAtTimeout ? "the timeout" : "idle") +
              ": VmRSS / anonymous / VmHWM",
          mib(f.convergedMemory->rssKb) + " / " + mib(f.convergedMemory->anonKb) + " / " +
              mib(f.convergedMemory->hwmKb));
  }
  cacheHeapRows(out, f.cacheObjects, f.cacheHeapBytes);
  cpuHeader(out);
  cpuRow(out, "creates -> converged", f.convergeCpu);
  cpuRow(out, "creates -> idle", f.idleCpu);
  out << "  API usage, creates -> idle:\n";
  if (f.idleUsage) {
    usageRows(out, *f.idleUsage, f.driverDeployments);
  }

  out << "\nsteady state\n";
  value(out, "pod changes", changes(f.steadyChanges));
  if (f.steady) {
    usageRows(out, *f.steady, 0);
  }
  cpuHeader(out);
  cpuRow(out, "steady state", f.steadyCpu);

  if (f.churn) {
    printChurnReport(out, *f.churn);
  }

  out << "\n" << f.driverDeployments << " DDs deleted at once\n";
  value(out, "deletes sent -> every DD and its children gone", millis(f.deleteGoneMs));
  value(out, "deletes sent -> every node plugin pod gone", millis(f.podsGoneMs));
  value(out, "pod changes, deletes -> pods gone", changes(f.podsGoneChanges));
  value(out, "operator CPU per pod change, deletes -> pods gone",
        perChange(f.podsGoneCpu, f.podsGoneChanges));
  cpuHeader(out);
  cpuRow(out, "deletes -> every DD gone", f.deleteCpu);
  cpuRow(out, "deletes -> every node plugin pod gone", f.podsGoneCpu);
  out << "  API usage, deletes -> every DD gone:\n";
  if (f.deleteUsage) {
    usageRows(out, *f.deleteUsage, 0);
  }

  out << "\nthe machine during each phase (all cores: control plane, kwok, operator, benchmark)\n";
  for (const auto& phase : f.phases) {
    printPhase(out, phase);
  }
  out << "  the benchmark's pods watch relisted " << f.podWatchRelists
      << " times (the changes a relist skips are not counted)\n";
}

} // namespace csiop::bench
