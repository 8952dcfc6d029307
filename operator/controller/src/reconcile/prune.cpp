// The children the spec no longer wants (toPrune: only what the operator made for this
// DriverDeployment, never a Namespace), deleted in the background; those marked unmanaged stay.
#include <csiop/controller/reconciler.hpp>

#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/controller/object_key.hpp>
#include <csiop/controller/pruning.hpp>
#include <csiop/controller/unmanaged.hpp>
#include <csiop/kube/attempt.hpp>

#include "reconcile_run.hpp"
#include "requests.hpp"

namespace csiop::controller {

namespace asio = boost::asio;
using api::Json;

asio::awaitable<StepResult> Reconciler::prune(ReconcileRun& run) {
  Observed& o = run.observed;
  for (const Json& gone :
       toPrune(ownedChildren(run.name, run.uid), run.desired, run.uid, fieldManagers())) {
    const ObjectKey k = keyOf(gone);
    if (!managed(gone)) {
      noteUnmanaged(gone, o);
      continue;
    }
    const std::string goneUid = api::metadataField(gone, "uid");
    const kube::DeleteOptions options = deleteOnly(goneUid, true);
    auto removed = co_await kube::attempt(
        client_.removeIfExists(*caches_.resourceOf(k.kind), k.namespace_, k.name, options));
    if (!removed) {
      run.addError(ErrorLine::of("pruning " + k.str() + ": ", removed));
      continue;
    }
    applied_.forget(k.str());
    if (*removed) {
      spdlog::info("pruned {} of DriverDeployment {}", k.str(), run.name);
    }
  }
  co_return std::nullopt;
}

} // namespace csiop::controller
