// The children the spec no longer wants (toPrune: only what the operator made for this
// DriverDeployment, never a Namespace), deleted in the background; those marked unmanaged stay.
#include <csiop/driverdeployment/reconciler.hpp>

#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/object_key.hpp>
#include <csiop/driverdeployment/pruning.hpp>
#include <csiop/driverdeployment/unmanaged.hpp>
#include <csiop/kube/attempt.hpp>

#include "reconcile_run.hpp"
#include "requests.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;

asio::awaitable<StepResult> Reconciler::prune(ReconcileRun& run) {
  Observed& observed = run.observed;
  for (const Json& gone :
       toPrune(ownedChildren(run.name, run.uid), run.desired, run.uid, fieldManagers())) {
    const ObjectKey key = keyOf(gone);
    if (!managed(gone)) {
      noteUnmanaged(gone, observed);
      continue;
    }
    const std::string goneUid = api::metadataField(gone, "uid");
    const kube::DeleteOptions options = deleteOnly(goneUid, true);
    auto removed = co_await kube::attempt(
        client_.removeIfExists(*caches_.resourceOf(key.kind), key.namespace_, key.name, options));
    if (!removed) {
      run.addError(ErrorLine::of("pruning " + key.str() + ": ", removed));
      continue;
    }
    applied_.forget(key.str());
    if (*removed) {
      spdlog::info("pruned {} of DriverDeployment {}", key.str(), run.name);
    }
  }
  co_return std::nullopt;
}

} // namespace csiop::driverdeployment
