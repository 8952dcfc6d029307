// The nodes where the node plugin runs and the driver is not registered, and why
// (registration_problems.hpp): status.nodes.waiting, the RegistrationFailing condition and
// csiop_driver_nodes_unregistered. For the first few, the registrar's own words: the last lines of
// its log (registrar_logs.hpp), read through the API server where the operator may (pods/log).
#include <csiop/driverdeployment/reconciler.hpp>

#include <algorithm>

#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;

namespace {

// status.nodes.waiting[].message's maxLength.
constexpr std::size_t kMaxWaitingMessage = 1024;

} // namespace

asio::awaitable<StepResult> Reconciler::explainRegistration(ReconcileRun& run) {
  const api::Effective& effective = *run.effective;
  std::vector<const CachedPod*> pods;
  for (const auto& [kind, suffix] : {std::pair{effective.nodeWorkloadKind(), "-node"},
                                     std::pair{"DaemonSet", "-node-windows"}}) {
    if (const CachedChild* workload =
            caches_.child(kind)->get(effective.namespace_, effective.name + suffix)) {
      const std::vector<const CachedPod*> of =
          nodePluginPods(run, api::metadataField(workload->head, "uid"));
      pods.insert(pods.end(), of.begin(), of.end());
    }
  }
  const api::WallTime now = api::parseRfc3339OrEpoch(now_());
  RegistrationProblems problems = registrationProblems(
      pods, [this](const std::string& node) { return caches_.csiNodes.get("", node); },
      effective.driverName, now);
  if (problems.recheckAt) {
    const auto due =
        std::chrono::duration_cast<std::chrono::milliseconds>(*problems.recheckAt - now);
    run.requeueAfter(std::max(due, std::chrono::milliseconds(0)) + std::chrono::seconds(1));
  }
  std::map<std::string, std::int32_t>& counts = unregistered_[run.name];
  counts.clear();
  RegistrarLogs& logs = registrarLogs_[run.name];
  std::set<std::string> reported;
  for (const UnregisteredNode& node : problems.nodes) {
    reported.insert(node.podUid);
    ++counts[node.reason];
  }
  logs.retain(reported);
  if (problems.nodes.empty()) {
    co_return std::nullopt;
  }
  // The registrar's log of the first nodes (those the conditions show). A missing CSINode is the
  // kubelet's story, not the registrar's.
  const auto steadyNow = std::chrono::steady_clock::now();
  std::vector<UnregisteredNode> toRead;
  for (std::size_t i = 0; i < problems.nodes.size() && i < kRegistrarLogsPerPass; ++i) {
    const UnregisteredNode& node = problems.nodes[i];
    if (node.reason != registration::kNoCSINode && logs.due(node, steadyNow)) {
      toRead.push_back(node);
    }
  }
  if (!toRead.empty()) {
    std::vector<asio::awaitable<RegistrarLogRead>> reads;
    for (const UnregisteredNode& node : toRead) {
      reads.push_back(readRegistrarLog(node));
    }
    std::vector<RegistrarLogRead> read = co_await runtime::allOf(std::move(reads));
    for (std::size_t i = 0; i < toRead.size(); ++i) {
      registrarLogs_[run.name].record(toRead[i], std::move(read[i].lines), std::move(read[i].error),
                                      steadyNow, read[i].passing);
    }
  }
  const RegistrarLogs& current = registrarLogs_[run.name]; // the map may have changed meanwhile
  for (const UnregisteredNode& node : problems.nodes) {
    const std::size_t budget =
        node.message.size() < kMaxWaitingMessage ? kMaxWaitingMessage - node.message.size() : 0;
    std::string message = node.message + current.noteFor(node, budget);
    if (message.size() > kMaxWaitingMessage) {
      message.erase(kMaxWaitingMessage - 3);
      message += "...";
    }
    run.observed.unregistered.push_back({node.node, node.reason, std::move(message)});
  }
  // The logs again in a while (and the reasons, though nothing may change meanwhile).
  run.requeueAfter(current.readAgainIn());
  co_return std::nullopt;
}

asio::awaitable<Reconciler::RegistrarLogRead> Reconciler::readRegistrarLog(UnregisteredNode node) {
  const kube::LogOptions options{.container = kRegistrarContainer,
                                 .tailLines = kRegistrarLogLines,
                                 .limitBytes = kRegistrarLogBytes,
                                 .previous = node.previousLog};
  auto log = co_await kube::attempt(client_.podLog(node.podNamespace, node.pod, options));
  RegistrarLogRead read;
  if (log) {
    if (auto unreadable = kubeletLogError(*log)) {
      spdlog::debug("the kubelet could not read the registrar's log of pod {}/{}: {}",
                    node.podNamespace, node.pod, *unreadable);
      read.error = std::move(*unreadable);
      read.passing = true;
      co_return read;
    }
    read.lines = logLines(*log);
    co_return read;
  }
  spdlog::debug("reading the registrar's log of pod {}/{}: {}", node.podNamespace, node.pod,
                log.message());
  const bool forbidden = log.apiError() != nullptr && log.apiError()->isForbidden();
  read.error = forbidden
                   ? std::string("the operator may not read pods/log: chart value rbac.podLogs")
                   : printableLine(log.message(), 200);
  read.passing = !forbidden;
  co_return read;
}

} // namespace csiop::driverdeployment
