// Pod Security admission refuses the pods of a workload, not the workload: a DaemonSet in a
// namespace that enforces `baseline` or `restricted` is created, and its node plugin pods (which
// are privileged) are refused one by one, said only in FailedCreate Events
// (sergelogvinov/proxmox-csi-plugin#241). Before the operator creates a workload in a namespace
// that enforces a level (read from the API server with the driver name's claim, in the pass's
// first round trip), it asks the API server with a server-side dry run of one of its pods:
// a refusal is reported as a missing prerequisite, with the server's words, and the workload is
// not created until the namespace allows its pods. A workload that exists already is left to its
// FailedCreate Events (pod_creation.hpp).
#include <csiop/driverdeployment/reconciler.hpp>

#include <set>

#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/apply_waves.hpp>
#include <csiop/driverdeployment/object_key.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::member;
using api::metadataField;
using api::stringField;

namespace {

constexpr const char* kEnforceLabel = "pod-security.kubernetes.io/enforce";

// A pod as the workload's controller would create it (its name left to the server).
Json podOf(const Json& workload) {
  const Json& tmpl = member(member(workload, "spec"), "template");
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"generateName", metadataField(workload, "name") + "-"},
                {"namespace", metadataField(workload, "namespace")}}},
              {"spec", member(tmpl, "spec")}};
  for (const char* key : {"labels", "annotations"}) {
    if (const Json& value = member(member(tmpl, "metadata"), key); value.is_object()) {
      pod["metadata"][key] = value;
    }
  }
  return pod;
}

// The level namespace `ns` enforces as the server has it (a namespace labelled a moment ago, and
// not cached yet, must not slip through): "" if none, or if the namespace is not there (the
// operator creates it, labelled for the node plugins: renderNamespace) or cannot be read (its
// pods' FailedCreate Events tell, as for a workload that exists).
asio::awaitable<std::string> enforcedLevel(kube::Client& client, std::string ns) {
  auto namespace_ = co_await kube::attempt(client.getOpt(kube::resources::namespaces, "", ns));
  if (!namespace_ || !*namespace_) {
    co_return std::string();
  }
  co_return stringField(member(member(**namespace_, "metadata"), "labels"), kEnforceLabel);
}

} // namespace

asio::awaitable<StepResult> Reconciler::readPodSecurityLevels(ReconcileRun& run) {
  std::set<std::string> namespaces; // of the workloads not created yet
  for (const Json& desired : run.desired) {
    if (isWorkload(stringField(desired, "kind")) && cachedChild(desired) == nullptr) {
      namespaces.insert(metadataField(desired, "namespace"));
    }
  }
  std::vector<asio::awaitable<std::string>> reads;
  for (const std::string& ns : namespaces) {
    reads.push_back(enforcedLevel(client_, ns));
  }
  std::vector<std::string> levels = co_await runtime::allOf(std::move(reads));
  auto level = levels.begin();
  for (const std::string& ns : namespaces) {
    run.podSecurityLevels[ns] = std::move(*level++);
  }
  co_return std::nullopt;
}

asio::awaitable<void> Reconciler::checkPodSecurity(ReconcileRun& run) {
  for (const Json& desired : run.desired) {
    const std::string kind = stringField(desired, "kind");
    if (!isWorkload(kind) || cachedChild(desired) != nullptr) {
      continue;
    }
    // Read with the claim (readPodSecurityLevels), else now.
    const std::string ns = metadataField(desired, "namespace");
    std::string level;
    if (const auto read = run.podSecurityLevels.find(ns); read != run.podSecurityLevels.end()) {
      level = read->second;
    } else {
      level = co_await enforcedLevel(client_, ns); // no co_await in a ?: (g++ 12)
    }
    if (level.empty() || level == "privileged") {
      continue;
    }
    const Json pod = podOf(desired);
    const kube::CreateOptions dryRun{.dryRun = true};
    auto tried = co_await kube::attempt(client_.create(kube::resources::pods, pod, dryRun));
    // Pod Security's refusal is a 403 whose message says "violates PodSecurity" (it has no
    // cause of its own); any other refusal of the dry run (a quota, a webhook, a missing
    // ServiceAccount that a moment will create) does not hold the workload: its FailedCreate
    // Events tell, once it exists.
    if (tried || tried.apiError() == nullptr || !tried.apiError()->isForbidden() ||
        tried.message().find("violates PodSecurity") == std::string::npos) {
      if (!tried) {
        spdlog::debug("the dry run of a pod of {} {}/{}: {}", kind, ns,
                      metadataField(desired, "name"), tried.message());
      }
      continue;
    }
    run.refusedWorkloads.insert(keyOf(desired).str());
    run.observed.missingPrerequisites.push_back(
        kind + " " + ns + "/" + metadataField(desired, "name") + " is not created: namespace " +
        ns + " enforces Pod Security \"" + level + "\", which refuses its pods (label the " +
        "namespace " + kEnforceLabel + "=privileged): " + tried.apiError()->status().message);
    run.requeueAfter(requeue::kPrerequisitesMissing);
  }
}

} // namespace csiop::driverdeployment
