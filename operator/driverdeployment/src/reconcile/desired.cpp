// The children the spec wants: rendered (render is pure), with the content hash of
// the ConfigMaps and Secrets each workload references on its pod template, so that its pods
// roll when one changes. Those are read (by GET, they are not cached) again every
// configPollPeriod; the DriverDeployment's own ConfigMaps (spec.configMaps) are hashed as
// rendered, so a change of one rolls the pods in the same pass that applies it.
#include <csiop/driverdeployment/reconciler.hpp>

#include <algorithm>
#include <iterator>
#include <map>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/config_hash.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/render/config_refs.hpp>
#include <csiop/render/render.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::stringField;

namespace {

const Json* desiredConfigMap(const std::vector<Json>& desired, const render::ConfigReference& ref) {
  if (ref.kind != "ConfigMap") {
    return nullptr;
  }
  for (const Json& object : desired) {
    if (stringField(object, "kind") == "ConfigMap" &&
        api::metadataField(object, "name") == ref.name &&
        api::metadataField(object, "namespace") == ref.namespace_) {
      return &object;
    }
  }
  return nullptr;
}

} // namespace

const Json& ReconcileRun::desiredCSIDriver() const {
  return *std::find_if(desired.begin(), desired.end(),
                       [](const Json& child) { return child["kind"] == "CSIDriver"; });
}

asio::awaitable<StepResult> Reconciler::computeDesired(ReconcileRun& run) {
  run.desired = render::render(*run.spec, {.csiDriverV1 = csiDriverV1()});
  // The objects of every driver at once are no child of this one (applySharedObjects).
  std::copy_if(run.desired.begin(), run.desired.end(), std::back_inserter(run.shared),
               render::isShared);
  std::erase_if(run.desired, render::isShared);
  run.pollConfig = co_await annotateConfigHashes(run);
  co_return std::nullopt;
}

asio::awaitable<bool> Reconciler::annotateConfigHashes(ReconcileRun& run) {
  // What was read, by reference: the object, nullopt if absent; an unreadable one is absent
  // from the map and named in `unreadable`.
  std::map<std::string, std::optional<Json>> read;
  std::map<std::string, std::string> unreadable;
  bool any = false;
  for (Json& workload : run.desired) {
    const std::string kind = stringField(workload, "kind");
    if (kind != "DaemonSet" && kind != "Deployment" && kind != "StatefulSet") {
      continue;
    }
    std::vector<render::ConfigReference> refs = render::configReferences(workload);
    const std::string what = render::isNodePlugin(workload) ? "the node plugin" : "the controller";
    for (auto& r : render::storageClassSecretsOf(*run.effective, workload)) {
      refs.push_back(std::move(r));
    }
    if (refs.empty()) {
      continue;
    }
    std::vector<ReadReference> contents;
    bool complete = true;
    for (const render::ConfigReference& ref : refs) {
      const std::string key = ref.str();
      // One of the DriverDeployment's own ConfigMaps: its content is what this pass applies
      // (and nothing but a change of the spec changes it: no need to read it again).
      const Json* own = desiredConfigMap(run.desired, ref);
      any = any || own == nullptr;
      if (own != nullptr) {
        read[key] = *own;
      } else if (!read.contains(key) && !unreadable.contains(key)) {
        const auto& resource =
            ref.kind == "ConfigMap" ? kube::resources::configmaps : kube::resources::secrets;
        auto got = co_await kube::attempt(client_.getOpt(resource, ref.namespace_, ref.name));
        if (got) {
          read[key] = std::move(*got);
        } else {
          unreadable[key] = got.message();
        }
      }
      if (const auto it = unreadable.find(key); it != unreadable.end()) {
        run.observed.configProblems.push_back("cannot read " + key + " (referenced by " + what +
                                              "): " + it->second +
                                              "; its pods keep their configuration");
        complete = false;
        continue;
      }
      const std::optional<Json>& content = read[key];
      if (!content && !ref.optional) {
        run.observed.configProblems.push_back(key + " (referenced by " + what + ") does not exist");
      }
      contents.emplace_back(ref, content);
    }
    if (complete) {
      render::setConfigHash(workload, configContentHash(contents));
    } else if (const CachedChild* cached = cachedChild(workload); cached != nullptr) {
      // No roll on a failed read: the hash the workload has.
      if (const std::string hash = render::configHash(cached->whole()); !hash.empty()) {
        render::setConfigHash(workload, hash);
      }
    }
  }
  co_return any;
}

} // namespace csiop::driverdeployment
