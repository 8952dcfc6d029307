// Step 6: what the driver needs but the operator does not create (render/prerequisites.hpp):
// the APIs its sidecars and companion objects use, and the PriorityClasses its pods name.
// Missing ones are reported (Degraded and Ready say which) and looked for again; the children
// of an API that is not served are left out of this pass instead of failing to apply.
#include <csiop/controller/reconciler.hpp>

#include <csiop/api/json_access.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/render/prerequisites.hpp>

#include "reconcile_run.hpp"

namespace csiop::controller {

namespace asio = boost::asio;
using api::Json;

asio::awaitable<StepResult> Reconciler::checkPrerequisites(ReconcileRun& run) {
  Observed& o = run.observed;
  std::vector<render::RequiredApi> apis = render::requiredApis(*run.effective);
  // spec.objects of a kind that may not be served (a CRD of --object-kind).
  for (const Json& object : run.effective->objects) {
    if (const api::ObjectKind* k = api::findObjectKind(caches_.objectKinds(), object)) {
      const auto known = [&](const render::RequiredApi& a) {
        return a.group == k->group() && a.version == k->version() && a.resource == k->resource;
      };
      if (std::none_of(apis.begin(), apis.end(), known)) {
        apis.push_back({k->group(), k->version(), k->resource, "spec.objects"});
      }
    }
  }
  for (const render::RequiredApi& api : apis) {
    const std::optional<bool> present = co_await served(api.group, api.version, api.resource);
    if (present.value_or(true)) {
      continue;
    }
    o.missingPrerequisites.push_back(api.str() + " is not served (needed by " + api.neededBy +
                                     "; its CRD is installed by a cluster admin)");
    for (const Json& desired : run.desired) {
      const std::string apiVersion = api::stringField(desired, "apiVersion");
      if (apiVersion == (api.group.empty() ? api.version : api.group + "/" + api.version)) {
        run.unservedKinds.insert(api::stringField(desired, "kind"));
      }
    }
  }
  for (const render::RequiredPriorityClass& pc : render::requiredPriorityClasses(*run.effective)) {
    if (!(co_await priorityClassExists(pc.name)).value_or(true)) {
      o.missingPrerequisites.push_back("PriorityClass " + pc.name + " does not exist (" +
                                       pc.neededBy + "'s pods name it and cannot be created)");
    }
  }
  co_return std::nullopt;
}

asio::awaitable<std::optional<bool>> Reconciler::served(const std::string& group,
                                                        const std::string& version,
                                                        const std::string& resource) {
  // A kind the caches watch: its reflector knows.
  for (const auto& cache : caches_.children) {
    const kube::ResourceRef& r = cache->resource();
    if (r.group == group && r.version == version && r.resource == resource && cache->synced()) {
      co_return cache->served();
    }
  }
  const std::string key = group + "/" + version + "/" + resource;
  const auto now = std::chrono::steady_clock::now();
  if (const auto it = prerequisites_.find(key);
      it != prerequisites_.end() && now - it->second.at < kPrerequisiteRecheck) {
    co_return it->second.present;
  }
  auto answer = co_await kube::attempt(client_.serves(group, version, resource));
  if (!answer) {
    co_return std::nullopt; // not known: nothing is reported
  }
  prerequisites_[key] = Found{*answer, now};
  co_return *answer;
}

asio::awaitable<std::optional<bool>> Reconciler::priorityClassExists(const std::string& name) {
  const std::string key = "PriorityClass " + name;
  const auto now = std::chrono::steady_clock::now();
  if (const auto it = prerequisites_.find(key);
      it != prerequisites_.end() && now - it->second.at < kPrerequisiteRecheck) {
    co_return it->second.present;
  }
  auto found = co_await kube::attempt(client_.getOpt(kube::resources::priorityclasses, "", name));
  if (!found) {
    co_return std::nullopt;
  }
  prerequisites_[key] = Found{found->has_value(), now};
  co_return found->has_value();
}

} // namespace csiop::controller
