#include <cstdio>
#include <functional>

#include "peer.hpp"
#include "stats.hpp"

namespace csiop::bench {
namespace {

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

using Figure = std::function<std::optional<double>(const SubjectFigures&)>;

// One row: both columns and the ratio ours / peer's.
void row(std::ostream& out, const std::string& what, const PeerReport& r, const Figure& figure,
         int decimals) {
  const auto ours = figure(r.ours);
  const auto peer = figure(r.peer);
  const auto cell = [&](const std::optional<double>& v) {
    return v ? fixed(*v, decimals) : std::string("-");
  };
  const std::string ratio = ours && peer && *peer > 0 ? fixed(*ours / *peer, 2) : "-";
  char line[256];
  std::snprintf(line, sizeof line, "  %-62s %14s %18s %7s\n", what.c_str(), cell(ours).c_str(),
                cell(peer).c_str(), ratio.c_str());
  out << line;
}

std::optional<double> p(const std::vector<double>& ms, double q) {
  if (ms.empty()) {
    return std::nullopt;
  }
  return percentile(ms, q);
}

std::optional<double> mib(const std::optional<MemoryUsage>& m, long MemoryUsage::*field) {
  if (!m || (*m).*field < 0) {
    return std::nullopt;
  }
  return static_cast<double>((*m).*field) / 1024.0;
}

void subjectNotes(std::ostream& out, const SubjectFigures& f) {
  out << "\n" << f.title << "\n  command  " << f.command << "\n  log      " << f.log << "\n";
  for (const auto& phase : f.phases) {
    printPhase(out, phase);
  }
  if (f.leavesCsiDriver) {
    out << "  it does not delete the CSIDriver of a deleted custom resource: the harness does, "
           "after the measurement\n";
  }
  for (const auto& problem : f.problems) {
    out << "  problem: " << problem << "\n";
  }
}

} // namespace

void printPeerReport(std::ostream& out, const PeerReport& r) {
  const std::string n = std::to_string(r.many);
  const std::string rounds = std::to_string(r.iterations);
  out << "workload    per custom resource a CSIDriver, a node plugin DaemonSet and a controller "
         "Deployment of 2 replicas with provisioner, attacher, resizer and snapshotter\n";
  out << "            Ready: the workloads' rollout complete (the same test for both); times from "
         "the create or delete request sent\n\n";
  char head[256];
  std::snprintf(head, sizeof head, "  %-62s %14s %18s %7s\n", "measurement", r.ours.title.c_str(),
                r.peer.title.c_str(), "ratio");
  out << head;
  row(
      out, "idle RSS (MiB)", r,
      [](const auto& f) { return mib(f.idleMemory, &MemoryUsage::rssKb); }, 1);
  row(
      out, "1 CR: create -> CSIDriver + DaemonSet + Deployment, p50 (ms)", r,
      [](const auto& f) { return p(f.singleChildrenMs, 0.5); }, 1);
  row(
      out, "1 CR: create -> CSIDriver + DaemonSet + Deployment, p99 (ms)", r,
      [](const auto& f) { return p(f.singleChildrenMs, 0.99); }, 1);
  row(
      out, "1 CR: create -> workloads Ready, p50 (ms)", r,
      [](const auto& f) { return p(f.singleReadyMs, 0.5); }, 1);
  row(
      out, "1 CR: delete -> gone, p50 (ms)", r,
      [](const auto& f) { return p(f.singleDeleteMs, 0.5); }, 1);
  row(
      out, rounds + " single trials: operator CPU (s)", r,
      [](const auto& f) { return f.singleCpuSeconds; }, 2);
  row(
      out, n + " CRs: first create -> every child of all (s)", r,
      [](const auto& f) { return f.manyChildrenSeconds; }, 2);
  row(
      out, n + " CRs: first create -> every workload Ready (s)", r,
      [](const auto& f) { return f.manyReadySeconds; }, 2);
  row(
      out, n + " CRs: operator CPU create -> workloads Ready (s)", r,
      [](const auto& f) { return f.manyCpuToReadySeconds; }, 2);
  row(
      out, n + " CRs: RSS converged (MiB)", r,
      [](const auto& f) { return mib(f.convergedMemory, &MemoryUsage::rssKb); }, 1);
  row(
      out, n + " CRs: anonymous RSS (heap) converged (MiB)", r,
      [](const auto& f) { return mib(f.convergedMemory, &MemoryUsage::anonKb); }, 1);
  row(
      out, n + " CRs: API requests create -> idle", r, [](const auto& f) { return f.manyRequests; },
      0);
  row(
      out, n + " CRs: reconciles create -> idle", r, [](const auto& f) { return f.manyReconciles; },
      0);
  row(
      out, n + " CRs deleted at once -> gone (s)", r,
      [](const auto& f) { return f.deleteAllSeconds; }, 2);
  row(
      out, n + " CRs deleted at once: operator CPU (s)", r,
      [](const auto& f) { return f.deleteCpuSeconds; }, 2);
  out << "\nratio: " << r.ours.title << " / " << r.peer.title
      << "; API requests by each operator's own counter (csiop_api_requests_total, "
         "rest_client_requests_total)\n";
  subjectNotes(out, r.ours);
  subjectNotes(out, r.peer);
}

} // namespace csiop::bench
