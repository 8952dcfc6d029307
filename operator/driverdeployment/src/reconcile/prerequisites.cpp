// What the driver needs but the operator does not create (render/prerequisites.hpp):
// the APIs its sidecars and companion objects use, and the PriorityClasses its pods name.
// Missing ones are reported (Degraded says which) and remembered: prerequisitesAppeared() asks
// for them again, once for all the DriverDeployments that wait, and queues those once they are
// there. The children of an API that is not served are left out instead of failing to apply.
#include <csiop/driverdeployment/reconciler.hpp>

#include <algorithm>

#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/render/prerequisites.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;

asio::awaitable<StepResult> Reconciler::checkPrerequisites(ReconcileRun& run) {
  Observed& observed = run.observed;
  stopWaitingForPrerequisites(run.name);
  std::vector<render::RequiredApi> apis = render::requiredApis(*run.effective);
  // spec.objects of a kind that may not be served (a CRD of --object-kind).
  for (const Json& object : run.effective->objects) {
    if (const api::ObjectKind* objectKind = api::findObjectKind(caches_.objectKinds(), object)) {
      const auto known = [&](const render::RequiredApi& required) {
        return required.group == objectKind->group() && required.version == objectKind->version() &&
               required.resource == objectKind->resource;
      };
      if (std::none_of(apis.begin(), apis.end(), known)) {
        apis.push_back(
            {objectKind->group(), objectKind->version(), objectKind->resource, "spec.objects"});
      }
    }
  }
  for (const render::RequiredApi& api : apis) {
    const std::optional<bool> present = co_await served(api.group, api.version, api.resource);
    if (present.value_or(true)) {
      continue;
    }
    observed.missingPrerequisites.push_back(api.str() + " is not served (needed by " +
                                            api.neededBy +
                                            "; its CRD is installed by a cluster admin)");
    waitingFor_[api.str()].insert(run.name);
    for (const Json& desired : run.desired) {
      const std::string apiVersion = api::stringField(desired, "apiVersion");
      if (apiVersion == api.apiVersion()) {
        run.unservedKinds.insert(api::stringField(desired, "kind"));
      }
    }
  }
  for (const render::RequiredPriorityClass& pc : render::requiredPriorityClasses(*run.effective)) {
    if (!(co_await priorityClassExists(pc.name)).value_or(true)) {
      observed.missingPrerequisites.push_back("PriorityClass " + pc.name + " does not exist (" +
                                              pc.neededBy +
                                              "'s pods name it and cannot be created)");
      waitingFor_["PriorityClass " + pc.name].insert(run.name);
    }
  }
  if (const auto classes = co_await priorityClasses()) {
    for (std::string& line : render::lowPriorityNodePlugins(*run.effective, *classes)) {
      observed.missingPrerequisites.push_back(std::move(line));
    }
  }
  co_return std::nullopt;
}

void Reconciler::stopWaitingForPrerequisites(const std::string& name) {
  for (auto it = waitingFor_.begin(); it != waitingFor_.end();) {
    it->second.erase(name);
    it = it->second.empty() ? waitingFor_.erase(it) : std::next(it);
  }
}

asio::awaitable<std::vector<std::string>> Reconciler::prerequisitesAppeared() {
  std::vector<std::string> out;
  // A copy: the map changes while the requests wait.
  const auto waiting = waitingFor_;
  for (const auto& [key, names] : waiting) {
    std::optional<bool> present;
    if (key.rfind("PriorityClass ", 0) == 0) {
      const std::string name = key.substr(14);
      present = co_await priorityClassExists(name, true);
    } else if (const auto gvr = api::parseGroupVersionResource(key)) {
      present = co_await served(gvr->group, gvr->version, gvr->resource, true);
    }
    if (present.value_or(false)) {
      spdlog::info("{} is there now; reconciling the DriverDeployments that need it", key);
      out.insert(out.end(), names.begin(), names.end());
      waitingFor_.erase(key);
    }
  }
  co_return out;
}

asio::awaitable<std::optional<bool>> Reconciler::served(const std::string& group,
                                                        const std::string& version,
                                                        const std::string& resource, bool fresh) {
  // A kind the caches watch: its reflector knows it is served (one that is not lists again
  // only every Reflector::kUnservedRetry, so discovery decides then).
  for (const auto& cache : caches_.children) {
    const kube::ResourceRef& r = cache->resource();
    if (r.group == group && r.version == version && r.resource == resource && cache->synced() &&
        cache->served()) {
      co_return true;
    }
  }
  const std::string key = (group.empty() ? "" : group + "/") + version + "/" + resource;
  const auto now = std::chrono::steady_clock::now();
  if (const auto it = prerequisites_.find(key);
      !fresh && it != prerequisites_.end() && now - it->second.at < kPrerequisiteRecheck) {
    co_return it->second.present;
  }
  auto answer = co_await kube::attempt(client_.serves(group, version, resource));
  if (!answer) {
    co_return std::nullopt; // not known: nothing is reported
  }
  prerequisites_[key] = Found{*answer, now};
  co_return *answer;
}

asio::awaitable<std::optional<bool>> Reconciler::priorityClassExists(const std::string& name,
                                                                     bool fresh) {
  const std::string key = "PriorityClass " + name;
  const auto now = std::chrono::steady_clock::now();
  if (const auto it = prerequisites_.find(key);
      !fresh && it != prerequisites_.end() && now - it->second.at < kPrerequisiteRecheck) {
    co_return it->second.present;
  }
  auto found = co_await kube::attempt(client_.getOpt(kube::resources::priorityclasses, "", name));
  if (!found) {
    co_return std::nullopt;
  }
  prerequisites_[key] = Found{found->has_value(), now};
  co_return found->has_value();
}

asio::awaitable<std::optional<render::PriorityClasses>> Reconciler::priorityClasses() {
  const auto now = std::chrono::steady_clock::now();
  if (priorityClasses_ && now - priorityClassesAt_ < kPrerequisiteRecheck) {
    co_return priorityClasses_;
  }
  auto listed = co_await kube::attempt(client_.listAll(kube::resources::priorityclasses, ""));
  if (!listed) {
    co_return std::nullopt; // not known: nothing is reported
  }
  render::PriorityClasses classes;
  for (const Json& pc : listed->items) {
    const Json& value = api::member(pc, "value");
    if (!value.is_number_integer()) {
      continue;
    }
    const auto v = static_cast<std::int32_t>(value.get<std::int64_t>());
    classes.values[api::metadataField(pc, "name")] = v;
    if (api::isTrue(pc, "globalDefault")) {
      classes.defaultPriority = v;
    }
  }
  priorityClasses_ = std::move(classes);
  priorityClassesAt_ = now;
  co_return priorityClasses_;
}

} // namespace csiop::driverdeployment
