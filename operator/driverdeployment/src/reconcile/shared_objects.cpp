// The objects kept for every driver at once (render::isShared: each sidecar's ClusterRole of its
// upstream rules, which a driver's binding names). Applied with the finalizer and the claim when
// the cache lacks one or it differs from this operator's rendering, so that the bindings (the
// children's second wave) name a role that exists; owned by no DriverDeployment, never pruned,
// never deleted.
#include <csiop/driverdeployment/reconciler.hpp>

#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/compare.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/render/render.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::metadataField;

namespace {

// Whether `live` is what `desired` says: the same rules (an added one would grant every driver's
// sidecars more), and the labels desired has;
// the rules' keys in any order: the API server writes them in its own.
bool sameShared(const Json& live, const Json& desired) {
  const Json& liveLabels = api::member(api::member(live, "metadata"), "labels");
  for (const auto& [key, value] : api::member(api::member(desired, "metadata"), "labels").items()) {
    if (api::member(liveLabels, key) != value) {
      return false;
    }
  }
  return sameJson(api::member(live, "rules"), api::member(desired, "rules"));
}

} // namespace

std::vector<std::string> Reconciler::sharedChanged(const Json* old, const Json* updated) {
  if (updated != nullptr) {
    const std::string name = metadataField(*updated, "name");
    for (const Json& desired : render::sharedObjects()) {
      if (metadataField(desired, "name") == name && !sameShared(*updated, desired)) {
        return everyDriverDeployment();
      }
    }
    return {};
  }
  if (old == nullptr) {
    return {};
  }
  sharedApplied_.erase(metadataField(*old, "name")); // not in the cluster any more
  return everyDriverDeployment();
}

std::vector<std::string> Reconciler::everyDriverDeployment() const {
  std::vector<std::string> out;
  for (const Json* dd : caches_.driverDeployments.list()) {
    out.push_back(metadataField(*dd, "name"));
  }
  return out;
}

asio::awaitable<StepResult> Reconciler::applySharedObjects(ReconcileRun& run) {
  std::vector<asio::awaitable<std::optional<ErrorLine>>> applies;
  for (const Json& desired : run.shared) {
    const std::string name = metadataField(desired, "name");
    const Json* live = caches_.sharedRoles.get("", name);
    // Applied by this process and not in the cache yet: the watch has not shown it (a deletion
    // since would have dropped it from sharedApplied_).
    if (live != nullptr ? sameShared(*live, desired) : sharedApplied_.contains(name)) {
      continue;
    }
    spdlog::info("applying shared ClusterRole {}: {}", name,
                 live == nullptr ? std::string("not cached")
                                 : "differs at " + firstDifference(*live, desired));
    applies.push_back(applyShared(desired));
  }
  std::vector<std::optional<ErrorLine>> errors = co_await runtime::allOf(std::move(applies));
  for (std::optional<ErrorLine>& error : errors) {
    if (error) {
      run.addError(std::move(*error));
    }
  }
  co_return std::nullopt;
}

asio::awaitable<std::optional<ErrorLine>> Reconciler::applyShared(const Json& desired) {
  const std::string name = metadataField(desired, "name");
  auto applied = co_await kube::attempt(client_.apply(caches_.sharedRoles.resource(), desired, {}));
  if (!applied) {
    co_return ErrorLine::of("ClusterRole " + name + " (shared by every driver): ", applied);
  }
  sharedApplied_.insert(name);
  co_return std::nullopt;
}

} // namespace csiop::driverdeployment
