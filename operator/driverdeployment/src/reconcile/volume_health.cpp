// The driver's volumes that fail (volume_health.hpp): status.volumes, the VolumesFailing
// condition and csiop_driver_volume_failures. Read from the volume Events the caches keep by
// driver (server-filtered watches) and the VolumeAttachments; the claims the provisioner's Events
// name are looked up (GET, a few per pass, each at most every kClaimRecheck) to see them bound or
// gone.
#include <csiop/driverdeployment/reconciler.hpp>

#include <algorithm>
#include <tuple>

#include <csiop/api/json_access.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;

namespace {

AttachmentState attachmentOf(const Json& va) {
  const Json& spec = api::member(va, "spec");
  const Json& status = api::member(va, "status");
  AttachmentState out;
  out.name = api::metadataField(va, "name");
  out.persistentVolume = api::stringField(api::member(spec, "source"), "persistentVolumeName");
  out.node = api::stringField(spec, "nodeName");
  out.attached = api::isTrue(status, "attached");
  for (const auto& [field, message, at] :
       {std::tuple{"attachError", &out.attachError, &out.attachErrorAt},
        std::tuple{"detachError", &out.detachError, &out.detachErrorAt}}) {
    const Json& error = api::member(status, field);
    if (error.is_object()) {
      *message = api::stringField(error, "message");
      *at = api::parseRfc3339OrEpoch(api::stringField(error, "time"));
    }
  }
  return out;
}

} // namespace

asio::awaitable<StepResult> Reconciler::checkVolumeHealth(ReconcileRun& run) {
  const std::string& driver = run.effective->driverName;
  const api::WallTime now = api::parseRfc3339OrEpoch(now_());
  std::vector<VolumeEvent> events;
  for (const Informer* cache :
       {&caches_.provisioningFailures, &caches_.attachFailures, &caches_.mountFailures}) {
    for (const Json* event : cache->byIndex(kByDriver, driver)) {
      events.push_back(volumeEventOf(*event));
    }
  }
  // A pod's failure counts while the pod waits: the pods with volumes are read.
  if (std::any_of(events.begin(), events.end(),
                  [](const VolumeEvent& e) { return e.kind == "Pod"; })) {
    co_await knowVolumeUsers(run, driver, true);
  }
  std::vector<AttachmentState> attachments;
  for (const Json* va : caches_.volumeAttachments.byIndex(kByDriver, driver)) {
    AttachmentState a = attachmentOf(*va);
    if (a.attachError || a.detachError) {
      attachments.push_back(std::move(a));
    }
  }
  // The claims: those due looked up now (a few), the rest as last seen.
  std::map<std::string, ClaimLookup>& known = claimLookups_[run.name];
  const std::vector<std::string> claims = claimsToLookUp(driver, events, now);
  std::erase_if(known, [&](const auto& entry) {
    return !std::binary_search(claims.begin(), claims.end(), entry.first);
  });
  const auto steadyNow = std::chrono::steady_clock::now();
  std::vector<std::string> due;
  for (const std::string& claim : claims) {
    const auto it = known.find(claim);
    if ((it == known.end() || steadyNow - it->second.at >= kClaimRecheck) &&
        due.size() < kClaimLookupsPerPass) {
      due.push_back(claim);
    }
  }
  if (!due.empty()) {
    std::vector<asio::awaitable<ClaimPhase>> lookups;
    for (const std::string& claim : due) {
      lookups.push_back(lookUpClaim(claim));
    }
    const std::vector<ClaimPhase> phases = co_await runtime::allOf(std::move(lookups));
    std::map<std::string, ClaimLookup>& now_known = claimLookups_[run.name]; // may have changed
    for (std::size_t i = 0; i < due.size(); ++i) {
      now_known[due[i]] = {phases[i], steadyNow};
    }
  }
  const std::map<std::string, ClaimLookup>& looked = claimLookups_[run.name];
  const DriverVolumeView view{
      [this, &driver](const std::string& name) {
        const Json* pv = caches_.persistentVolumes.get("", name);
        return pv != nullptr &&
               api::stringField(api::member(api::member(*pv, "spec"), "csi"), "driver") == driver;
      },
      [this](const std::string& ns, const std::string& name) { return caches_.pod(ns, name); },
      [&looked](const std::string& ns, const std::string& name) {
        const auto it = looked.find(ns + "/" + name);
        return it == looked.end() ? ClaimPhase::Unknown : it->second.phase;
      }};
  VolumeHealth health = volumeHealth(driver, events, attachments, view, now);
  std::map<std::string, std::int32_t>& counts = volumeFailures_[run.name];
  counts.clear();
  for (const auto& [reason, n] : health.counts) {
    counts[reason] = static_cast<std::int32_t>(n);
  }
  if (health.objects.empty()) {
    volumeFailureObjects_.erase(run.name);
  } else {
    volumeFailureObjects_[run.name] = health.objects;
  }
  if (health.total() > 0) {
    // Claims bound or deleted, pods gone and Events aged out of the window say nothing to the
    // caches: looked at again.
    run.requeueAfter(kClaimRecheck);
  }
  run.observed.volumeHealth = std::move(health);
  co_return std::nullopt;
}

asio::awaitable<ClaimPhase> Reconciler::lookUpClaim(std::string key) {
  const std::size_t slash = key.find('/');
  const std::string ns = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  auto claim =
      co_await kube::attempt(client_.getOpt(kube::resources::persistentvolumeclaims, ns, name));
  if (!claim) {
    co_return ClaimPhase::Unknown;
  }
  if (!claim->has_value()) {
    co_return ClaimPhase::Gone;
  }
  const std::string phase = api::stringField(api::member(**claim, "status"), "phase");
  co_return phase == "Pending" || phase.empty() ? ClaimPhase::Pending : ClaimPhase::Settled;
}

} // namespace csiop::driverdeployment
