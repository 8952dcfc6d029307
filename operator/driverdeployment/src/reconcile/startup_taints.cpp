// spec.startupTaint (startup_taint.hpp): removes the taint from every node that carries it and
// whose CSINode lists the driver, and counts the nodes it still holds (status.nodes.held). The
// node cache's index finds the nodes with the taint; a node's change (the taint put back) and
// its CSINode's (the driver registered) both queue this pass.
#include <csiop/driverdeployment/reconciler.hpp>

#include <algorithm>

#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/startup_taint.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;

namespace {

// Removals at a time: a new node pool registers many nodes at once.
constexpr std::size_t kReleasesAtOnce = 16;

struct Release {
  std::string node;
  Json patch;
};

// nullopt: removed (or the node is gone); true: the node's taints changed since they were read
// (the node's own change queues the pass again); an ErrorLine: refused.
using ReleaseOutcome = std::variant<bool, ErrorLine>;

} // namespace

asio::awaitable<StepResult> Reconciler::releaseStartupTaints(ReconcileRun& run) {
  const api::Effective& effective = *run.effective;
  if (effective.startupTaint.empty()) {
    co_return std::nullopt;
  }
  const std::string& key = effective.startupTaint;
  std::int32_t held = 0;
  std::vector<Release> releases;
  for (const Json* node : caches_.nodes.byIndex(kByTaint, key)) {
    const std::string name = api::metadataField(*node, "name");
    const CachedCSINode* csiNode = caches_.csiNodes.get("", name);
    if (csiNode == nullptr || std::find(csiNode->drivers.begin(), csiNode->drivers.end(),
                                        effective.driverName) == csiNode->drivers.end()) {
      ++held;
      continue;
    }
    releases.push_back(
        {name, releasePatch(api::member(api::member(*node, "spec"), "taints"), key)});
  }
  std::vector<std::string> released;
  for (std::size_t first = 0; first < releases.size(); first += kReleasesAtOnce) {
    const std::size_t end = std::min(releases.size(), first + kReleasesAtOnce);
    std::vector<asio::awaitable<ReleaseOutcome>> writes;
    for (std::size_t i = first; i < end; ++i) {
      writes.push_back(release(releases[i].node, releases[i].patch));
    }
    std::vector<ReleaseOutcome> outcomes = co_await runtime::allOf(std::move(writes));
    for (std::size_t i = first; i < end; ++i) {
      ReleaseOutcome& outcome = outcomes[i - first];
      if (const auto* error = std::get_if<ErrorLine>(&outcome)) {
        run.addError(*error);
        ++held;
      } else if (std::get<bool>(outcome)) {
        ++held; // read again with the node's change
      } else {
        released.push_back(releases[i].node);
      }
    }
  }
  run.observed.held = held;
  if (!released.empty()) {
    std::sort(released.begin(), released.end());
    std::string names;
    for (std::size_t i = 0; i < released.size() && i < 5; ++i) {
      names += (i == 0 ? "" : ", ") + released[i];
    }
    if (released.size() > 5) {
      names += ", ...";
    }
    const std::string message = "removed the startup taint " + key + " from " +
                                std::to_string(released.size()) +
                                (released.size() == 1 ? " node" : " nodes") +
                                " where the driver is registered (" + names + ")";
    spdlog::info("DriverDeployment {}: {}", run.name, message);
    co_await events_.record(run.dd, false, "StartupTaintRemoved", message);
  }
  co_return std::nullopt;
}

asio::awaitable<std::variant<bool, ErrorLine>> Reconciler::release(std::string node, Json patch) {
  if (patch.empty()) {
    co_return false; // no taint of the key left: nothing to write
  }
  auto patched = co_await kube::attempt(client_.patch(
      kube::resources::nodes, "", node, kube::PatchType::JsonPatch, std::move(patch)));
  if (patched || patched.notFound()) {
    co_return false;
  }
  if (patched.invalid()) {
    co_return true; // the test failed: the node's taints changed since the cache read them
  }
  co_return ErrorLine::of("removing the startup taint from node " + node + ": ", patched);
}

} // namespace csiop::driverdeployment
