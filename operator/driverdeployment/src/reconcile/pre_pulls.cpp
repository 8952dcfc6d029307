// spec.rollout.prePullImages: the pre-pull pods of a node plugin rollout (pre_pull.hpp builds
// them and reads what they say). While a node plugin DaemonSet has pods at an older revision, a
// pass lists the DriverDeployment's pre-pull pods (one LIST, by label), the rollout's plan names
// the nodes whose images must be pulled before their plugin is replaced, and those without a
// pod get one; every other pre-pull pod is deleted (read, or of another revision). Once no
// rollout needs them, one more LIST deletes any left. Pods a rollout left when the operator
// stopped are deleted by its next pass that needs pre-pulls, or with the DriverDeployment (owner
// reference); each ends by itself within its deadline meanwhile.
#include <csiop/driverdeployment/reconciler.hpp>

#include <csiop/api/annotations.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/pre_pull.hpp>
#include <csiop/kube/attempt.hpp>

#include "reconcile_run.hpp"
#include "requests.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::metadataField;

asio::awaitable<PrePulls> Reconciler::readPrePulls(ReconcileRun& run, const std::string& revision) {
  PrePulls out;
  const api::Effective& effective = *run.effective;
  auto listed = co_await kube::attempt(
      client_.listAll(kube::resources::pods, effective.namespace_,
                      {.labelSelector = std::string(kPrePullLabel) + "=" + effective.name}));
  if (!listed) {
    run.addError(ErrorLine::of("listing the pre-pull pods: ", listed));
    out.readable = false;
    co_return out;
  }
  for (Json& pod : listed->items) {
    const std::string name = metadataField(pod, "name");
    if (api::annotationValue(pod, kPrePullRevisionAnnotation) == revision) {
      out.results[api::annotationValue(pod, kPrePullNodeAnnotation)] = readPrePull(pod);
    }
    out.pods[name] = metadataField(pod, "uid");
  }
  co_return out;
}

asio::awaitable<void> Reconciler::syncPrePulls(ReconcileRun& run, const PrePulls& seen,
                                               const std::set<std::string>& nodes,
                                               const std::string& revision,
                                               const Json& podTemplate) {
  const api::Effective& effective = *run.effective;
  if (!seen.readable) {
    co_return; // nothing is known of them: created or deleted at the next pass
  }
  std::set<std::string> keep;
  bool clean = true; // every pod not kept is gone
  for (const std::string& node : nodes) {
    const std::string name = prePullName(effective.name, node, revision);
    keep.insert(name);
    if (seen.pods.contains(name)) {
      continue;
    }
    PrePullTarget target{effective.name,
                         run.uid,
                         effective.namespace_,
                         node,
                         revision,
                         podTemplate,
                         effective.rollout.gateTimeoutSeconds};
    const Json pod = prePullPod(target);
    auto created = co_await kube::attempt(client_.create(kube::resources::pods, pod));
    if (!created && !created.alreadyExists()) {
      run.addError(ErrorLine::of("creating the pre-pull pod " + name + ": ", created));
    }
  }
  for (const auto& [name, uid] : seen.pods) {
    if (keep.contains(name)) {
      continue;
    }
    const kube::DeleteOptions options = deleteOnly(uid);
    auto removed = co_await kube::attempt(
        client_.remove(kube::resources::pods, effective.namespace_, name, options));
    if (!removed && !removed.notFound() && !removed.conflict()) {
      run.addError(ErrorLine::of("deleting the pre-pull pod " + name + ": ", removed));
      clean = false;
    }
  }
  if (nodes.empty() && clean) {
    prePullsLeft_.erase(effective.name);
  } else if (!nodes.empty()) {
    prePullsLeft_.insert(effective.name);
  }
}

asio::awaitable<void> Reconciler::endPrePulls(ReconcileRun& run) {
  if (!prePullsLeft_.contains(run.effective->name)) {
    co_return; // none made since the operator started (or all deleted)
  }
  const PrePulls seen = co_await readPrePulls(run, "");
  co_await syncPrePulls(run, seen, {}, "", Json::object());
}

} // namespace csiop::driverdeployment
