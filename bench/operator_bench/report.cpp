#include "report.hpp"

#include <unistd.h>

#include <cstdio>
#include <map>

#include "report_rows.hpp"
#include "stats.hpp"

namespace csiop::bench {
namespace {

void latencyRow(std::ostream& out, const std::string& what, const std::vector<double>& ms,
                int expected) {
  char line[160];
  if (ms.empty()) {
    std::snprintf(line, sizeof line, "  %-38s %5d/%-4d %8s %8s %8s %8s\n", what.c_str(), 0,
                  expected, "-", "-", "-", "-");
  } else {
    const Summary s = summarize(ms);
    std::snprintf(line, sizeof line, "  %-38s %5zu/%-4d %8.0f %8.0f %8.0f %8.0f\n", what.c_str(),
                  s.n, expected, s.min, s.p50, s.p99, s.max);
  }
  out << line;
}

// The 1-DD rounds added up, and the CPU per DriverDeployment.
void singleCpuRows(std::ostream& out, const std::vector<CpuUsage>& rounds) {
  std::optional<CpuUsage> total;
  std::vector<double> perDd;
  for (const auto& c : rounds) {
    total = total.value_or(CpuUsage{});
    total->wallSeconds += c.wallSeconds;
    total->cpuSeconds += c.cpuSeconds;
    perDd.push_back(c.cpuSeconds * 1000);
  }
  cpuRow(out, "1 DD: create -> Ready, " + std::to_string(rounds.size()) + " rounds", total);
  if (total) {
    const Summary s = summarize(perDd);
    out << "    CPU per DD create -> Ready           mean "
        << format("%.0f", total->cpuSeconds * 1000 / static_cast<double>(rounds.size()))
        << " ms, min " << format("%.0f", s.min) << ", p50 " << format("%.0f", s.p50) << ", max "
        << format("%.0f", s.max) << " ms\n";
  }
}

std::string kindsSummary(const std::vector<ObjectKey>& objects) {
  std::map<std::string, int> kinds;
  for (const auto& k : objects) {
    ++kinds[k.kind];
  }
  std::string out;
  for (const auto& [kind, n] : kinds) {
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
  }
  return out;
}

void scaleReport(std::ostream& out, const ScaleReport& s) {
  const auto value = [&](const char* what, const std::string& v) {
    char line[200];
    std::snprintf(line, sizeof line, "  %-46s %s\n", what, v.c_str());
    out << line;
  };
  const auto millis = [&](const std::optional<double>& ms) {
    return ms ? format("%.0f ms", *ms) : std::string("-");
  };
  out << "workload    " << s.driverDeployments << " hostpath-like DriverDeployments of "
      << s.objectsPerDriverDeployment << " objects each, without pods (node plugins select no "
      << "node, 0 controller replicas), on " << s.nodes << " nodes, each CSINode listing "
      << s.driversPerNode << " drivers\n\n";
  value("CSINodes written", millis(s.registerMs));
  value("creates sent -> last create returned", millis(s.createSpanMs));
  value("creates sent -> every child of every DD", millis(s.allChildrenMs));
  value("creates sent -> operator idle (statuses written)", millis(s.idleMs));
  value("statuses counting the registering nodes right",
        std::to_string(s.truthfulStatuses) + "/" + std::to_string(s.driverDeployments));
  memoryRow(out, "memory when converged (VmRSS, VmHWM)", s.convergedMemory);
  cpuRow(out, "CPU creates -> idle (wall, CPU, avg, peak)", s.convergeCpu);
  out << "  API usage, creates -> idle:\n";
  if (s.converge) {
    usageRows(out, *s.converge, s.driverDeployments);
  }
  out << "  " << s.csiNodeUpdates << " CSINode updates (one driver dropped on 50 nodes, 20 ms "
      << "apart, then re-added), until the operator is idle:\n";
  if (s.updates && s.csiNodeUpdates > 0) {
    const double n = s.csiNodeUpdates;
    value("  reconciles per update", format("%.2f", s.updates->reconciles / n));
    value("  API requests per update", format("%.2f", s.updates->requests / n));
    value("  mutating requests per update", format("%.2f", s.updates->mutating / n));
    value("  mean reconcile duration",
          s.reconcileMeanMs ? format("%.2f ms", *s.reconcileMeanMs) : std::string("-"));
    if (s.updatesCpu) {
      value("  operator CPU per update (incl. metrics scrapes)",
            format("%.1f ms", s.updatesCpu->cpuSeconds * 1000 / n));
    }
  }
  out << "  steady state:\n";
  if (s.steady) {
    usageRows(out, *s.steady, 0);
  }
  cpuRow(out, "steady state CPU", s.steadyCpu);
  out << "  cold start (SIGTERM, started again):\n";
  value("  started -> /readyz", millis(s.restartReadyMs));
  value("  started -> every DD reconciled, idle", millis(s.restartIdleMs));
  if (s.restart) {
    usageRows(out, *s.restart, 0);
  }
  cpuRow(out, "cold start CPU", s.restartCpu);
  memoryRow(out, "memory after the cold start", s.restartMemory);
}

// The benchmark's own figures and the problems of the run.
void footer(std::ostream& out, const Report& r) {
  out << "\nbenchmark   " << r.watchEvents << " watch events read, wall time "
      << format("%.0f s", r.wallSeconds) << "\n";
  if (!r.problems.empty()) {
    out << "\nproblems:\n";
    for (const auto& p : r.problems) {
      out << "  - " << p << "\n";
    }
  }
}

} // namespace

void printReport(std::ostream& out, const Report& r) {
  out << "\n== csi-operator benchmark ==\n";
  out << "machine     " << r.machine.cpus << " CPUs (nproc), " << r.machine.cpuModel << ", "
      << format("%.1f", static_cast<double>(r.machine.memTotalKb) / 1024.0 / 1024.0)
      << " GiB RAM, Linux " << r.machine.kernel << "\n";
  out << "load avg    " << r.loadStart << " at start, " << r.loadEnd
      << " at end (1/5/15 min; the machine may be shared)\n";
  out << "cluster     " << r.cluster << ", " << r.nodes << " nodes, Kubernetes "
      << r.kubernetesVersion << "\n";
  if (r.peer) {
    printPeerReport(out, *r.peer);
    out << "\nbenchmark   wall time " << format("%.0f s", r.wallSeconds) << "\n";
    for (const auto& p : r.problems) {
      out << "  - " << p << "\n";
    }
    return;
  }
  out << "operator    " << r.operatorCommand << "\n";
  out << "            log: " << r.operatorLog << "\n";
  if (r.fleet) {
    printFleetReport(out, *r.fleet);
    out << "\noperator memory                               VmRSS      VmHWM\n";
    memoryRow(out, "idle (CRD installed, no DDs)", r.idleMemory);
    footer(out, r);
    return;
  }
  if (r.scale) {
    scaleReport(out, *r.scale);
    memoryRow(out, "idle (CRD installed, no DDs)", r.idleMemory);
    footer(out, r);
    return;
  }
  out << "workload    hostpath-like DriverDeployment (examples/hostpath.yaml, own name, driver "
         "name, namespace, StorageClass), "
      << r.objectsPerDriverDeployment.size()
      << " rendered objects each: " << kindsSummary(r.objectsPerDriverDeployment) << "\n";
  out << "            the driver is registered in every node's CSINode before the apply\n";

  out << "\nlatency (ms; from the create/delete response; nearest-rank percentiles, so p99 of "
         "20 samples is the max)\n";
  out << "                                           done     min      p50      p99      max\n";
  latencyRow(out, "1 DD: apply -> all children created", r.single.childrenMs, r.singleIterations);
  latencyRow(out, "1 DD: apply -> Ready", r.single.readyMs, r.singleIterations);
  latencyRow(out, "1 DD: delete -> gone", r.single.deleteMs, r.singleIterations);
  latencyRow(out, std::to_string(r.many) + " DDs: apply -> all children created",
             r.manySeries.childrenMs, r.many);
  latencyRow(out, std::to_string(r.many) + " DDs: apply -> Ready", r.manySeries.readyMs, r.many);
  latencyRow(out, std::to_string(r.many) + " DDs: delete -> gone", r.manySeries.deleteMs, r.many);
  const auto span = [&](const char* what, const std::optional<double>& ms) {
    out << "  " << what << (ms ? format("%.0f ms", *ms) : "-") << "\n";
  };
  out << "  " << r.many << " DDs, whole batch:\n";
  span("  creates sent -> last create returned    ", r.manyCreateSpanMs);
  span("  creates sent -> every child of every DD ", r.manyAllChildrenMs);
  span("  creates sent -> every DD Ready          ", r.manyAllReadyMs);
  span("  deletes sent -> every DD gone           ", r.manyDeleteAllMs);

  out << "\nAPI requests (operator metrics)\n";
  out << "  " << r.many << "-DD run (creates -> all Ready -> operator idle 3 s):\n";
  if (r.manyRun) {
    usageRows(out, *r.manyRun, r.many);
  } else {
    out << "    -\n";
  }
  out << "  steady state after convergence:\n";
  if (r.steady) {
    usageRows(out, *r.steady, 0);
  } else {
    out << "    -\n";
  }
  out << "  " << r.many << " DDs deleted at once (deletes sent -> every DD gone):\n";
  if (r.deleteRun) {
    usageRows(out, *r.deleteRun, 0);
  } else {
    out << "    -\n";
  }

  out << "\noperator memory                               VmRSS      VmHWM\n";
  memoryRow(out, "idle (CRD installed, no DDs)", r.idleMemory);
  memoryRow(out, std::to_string(r.many) + " DDs on " + std::to_string(r.nodes) + " nodes",
            r.loadedMemory);
  if (r.loadedMemory) {
    out << "  of which anonymous (RssAnon)          "
        << format("%7.1f MiB", static_cast<double>(r.loadedMemory->anonKb) / 1024.0) << "\n";
  }
  cacheHeapRows(out, r.loadedCacheObjects, r.loadedCacheHeapBytes);

  out << "\noperator CPU (utime+stime of /proc/<pid>/stat in "
      << format("%.0f", 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK)))
      << " ms ticks; peak: busiest 1 s sample)\n";
  out << "                                            wall       CPU avg mCPU peak mCPU\n";
  cpuRow(out, "idle (no DDs), 5 s before VmRSS read", r.idleCpu);
  singleCpuRows(out, r.singleCpu);
  cpuRow(out, std::to_string(r.many) + " DDs: create -> Ready -> idle 3 s", r.manyCpu);
  cpuRow(out, "steady state, " + std::to_string(r.many) + " DDs", r.steadyCpu);
  cpuRow(out, std::to_string(r.many) + " DDs: deletes -> all gone", r.deleteManyCpu);

  footer(out, r);
}

} // namespace csiop::bench
