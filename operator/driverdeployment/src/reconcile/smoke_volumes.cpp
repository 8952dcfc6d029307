// spec.rollout.smokeVolume: the smoke tests of a verified rollout's canaries (smoke_volume.hpp
// builds their objects and reads how far they got). Each pass of a rollout in its canary phase
// reads the tests by name (a GET of the pod, its claim, the claim's volume and VolumeAttachment,
// and while the pod waits, its events); the plan names the nodes whose tests must run, and the
// tests not started yet are created. Objects of no running test are swept, by their label:
// after a test ends, when smoke volumes are no longer asked for, and once per revision (and after
// the operator's restart) while tests run.
#include <csiop/driverdeployment/reconciler.hpp>

#include <array>
#include <random>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/smoke_volume.hpp>
#include <csiop/kube/attempt.hpp>
#include <csiop/runtime/concurrently.hpp>

#include "reconcile_run.hpp"
#include "requests.hpp"

namespace csiop::driverdeployment {

namespace asio = boost::asio;
using api::Json;
using api::member;
using api::metadataField;
using api::stringField;

namespace {

std::string randomNonce() {
  std::random_device device;
  std::uniform_int_distribution<unsigned> digit(0, 15);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 24; ++i) {
    out += kHex[digit(device)];
  }
  return out;
}

// The value the sweep records once every smoke object of a DriverDeployment is gone.
const std::string kNoneLeft;

} // namespace

void Reconciler::setSmokeImage(std::string image, std::string pullPolicy) {
  smokeImage_ = std::move(image);
  smokePullPolicy_ = std::move(pullPolicy);
}

SmokeTarget Reconciler::smokeTarget(const ReconcileRun& run, const RolloutRecord& record,
                                    const std::string& node) const {
  const api::Effective& effective = *run.effective;
  SmokeTarget t;
  t.owner = effective.name;
  t.ownerUid = run.uid;
  t.namespace_ = effective.namespace_;
  t.driverName = effective.driverName;
  t.node = node;
  t.revision = record.revision;
  t.image = smokeImage_;
  if (!smokePullPolicy_.empty()) {
    t.pullPolicy = smokePullPolicy_; // else SmokeTarget's default, IfNotPresent
  }
  t.deadlineSeconds = effective.rollout.gateTimeoutSeconds;
  t.volume = effective.rollout.smokeVolume.value_or(api::EffectiveRollout::SmokeVolume{});
  return t;
}

asio::awaitable<SmokeResult> Reconciler::readSmokeTest(ReconcileRun& run, const SmokeTarget& t) {
  const std::string name = smokeName(t.owner, t.node, t.revision);
  const std::string& ns = t.namespace_;
  SmokeObserved observed;
  auto pod = co_await kube::attempt(client_.getOpt(kube::resources::pods, ns, name));
  if (!pod) {
    run.addError(ErrorLine::of("reading the smoke pod " + name + ": ", pod));
    co_return SmokeResult{SmokeResult::State::Running, "", ""};
  }
  if (!*pod) {
    if (smokeImage_.empty()) {
      co_return SmokeResult{SmokeResult::State::Failed, "Start",
                            "the operator runs without --smoke-image: it has no image to run the "
                            "smoke test in"};
    }
    co_return SmokeResult{};
  }
  observed.pod = std::move(**pod);
  if (!t.volume.storageClassName.empty()) {
    auto claim =
        co_await kube::attempt(client_.getOpt(kube::resources::persistentvolumeclaims, ns, name));
    if (claim && *claim) {
      observed.claim = std::move(**claim);
    }
  }
  const std::string volumeName =
      observed.claim ? stringField(member(*observed.claim, "spec"), "volumeName") : "";
  if (run.effective->csiDriver.attachRequired && !volumeName.empty()) {
    auto pv =
        co_await kube::attempt(client_.getOpt(kube::resources::persistentvolumes, "", volumeName));
    const std::string handle =
        pv && *pv ? stringField(member(member(**pv, "spec"), "csi"), "volumeHandle") : "";
    if (!handle.empty()) {
      auto va = co_await kube::attempt(
          client_.getOpt(kube::resources::volumeattachments, "",
                         volumeAttachmentName(handle, t.driverName, t.node)));
      if (va && *va) {
        observed.attachment = std::move(**va);
      }
    }
  }
  SmokeResult result = readSmoke(observed);
  if (result.state == SmokeResult::State::Running && result.stage != "Write") {
    // Waiting before the container ran: the events say why (the pod's and the claim's: they
    // share the name).
    const std::string selector = "involvedObject.name=" + name;
    auto events = co_await kube::attempt(
        client_.listAll(kube::resources::events, ns, {.fieldSelector = selector}));
    if (events) {
      observed.events = std::move(events->items);
      result = readSmoke(observed);
    }
  }
  co_return result;
}

asio::awaitable<std::map<std::string, SmokeResult>>
Reconciler::readSmokeTests(ReconcileRun& run, const RolloutRecord& record) {
  std::map<std::string, SmokeResult> out;
  for (const std::string& node : record.canaries) {
    // Named: GCC 12 destroys an aggregate temporary inside a co_await expression twice.
    const SmokeTarget target = smokeTarget(run, record, node);
    out[node] = co_await readSmokeTest(run, target);
  }
  co_return out;
}

asio::awaitable<void> Reconciler::startSmokeTests(ReconcileRun& run, const RolloutRecord& record,
                                                  const std::vector<std::string>& nodes,
                                                  const std::map<std::string, SmokeResult>& seen) {
  const std::string& dd = run.effective->name;
  std::set<std::string> keep;
  for (const std::string& node : nodes) {
    keep.insert(smokeName(dd, node, record.revision));
  }
  if (const auto swept = smokeSwept_.find(dd);
      swept == smokeSwept_.end() || swept->second != record.revision) {
    // Once per revision (and after a restart): leftovers of other tests go first.
    if (co_await sweepSmokeTests(run, keep)) {
      smokeSwept_[dd] = record.revision;
    }
  }
  for (const std::string& node : nodes) {
    const auto result = seen.find(node);
    if (smokeImage_.empty() ||
        (result != seen.end() && result->second.state != SmokeResult::State::NotStarted)) {
      continue;
    }
    SmokeTarget target = smokeTarget(run, record, node);
    target.nonce = randomNonce();
    const std::string& ns = target.namespace_;
    if (const std::optional<Json> claim = smokeClaim(target)) {
      auto created =
          co_await kube::attempt(client_.create(kube::resources::persistentvolumeclaims, *claim));
      if (!created && !created.alreadyExists()) {
        run.addError(
            ErrorLine::of("creating the smoke volume claim on node " + node + ": ", created));
        continue;
      }
    }
    auto created = co_await kube::attempt(client_.create(kube::resources::pods, smokePod(target)));
    if (!created && !created.alreadyExists()) {
      run.addError(ErrorLine::of("creating the smoke pod on node " + node + ": ", created));
      continue;
    }
    if (created) {
      co_await events_.record(run.dd, false, "SmokeVolumeStarted",
                              "smoke volume test " + smokeName(dd, node, record.revision) +
                                  " of node plugin revision " + record.revision + " on node " +
                                  node + " in namespace " + ns);
    }
  }
}

namespace {

// The objects of `kind` in `ns` that `selector` selects (always set: an Attempt is not
// default-constructible, which runtime::allOf's results must be).
asio::awaitable<std::optional<kube::Attempt<kube::ListResult>>>
listLabelled(kube::Client& client, const kube::ResourceRef& kind, std::string ns,
             std::string selector) {
  co_return co_await kube::attempt(client.listAll(kind, ns, {.labelSelector = selector}));
}

} // namespace

asio::awaitable<bool> Reconciler::sweepSmokeTests(ReconcileRun& run,
                                                  const std::set<std::string>& keep) {
  const SmokeTestOwner owner = run.testOwner();
  const std::string& dd = owner.name;
  const std::string& ns = owner.namespace_;
  const std::string selector = std::string(kSmokeLabel) + "=" + dd;
  bool clean = true;
  const std::array<const kube::ResourceRef*, 2> kinds = {&kube::resources::pods,
                                                         &kube::resources::persistentvolumeclaims};
  // Both lists at once (one round trip).
  std::vector<asio::awaitable<std::optional<kube::Attempt<kube::ListResult>>>> lists;
  for (const kube::ResourceRef* kind : kinds) {
    lists.push_back(listLabelled(client_, *kind, ns, selector));
  }
  auto results = co_await runtime::allOf(std::move(lists));
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const kube::ResourceRef* kind = kinds[i];
    kube::Attempt<kube::ListResult>& listed = *results[i];
    if (!listed) {
      run.addError(ErrorLine::of("listing the smoke " + kind->resource + ": ", listed));
      clean = false;
      continue;
    }
    for (const Json& object : listed->items) {
      const std::string name = metadataField(object, "name");
      if (keep.contains(name) ||
          !member(member(object, "metadata"), "deletionTimestamp").is_null()) {
        continue;
      }
      const std::string uid = metadataField(object, "uid");
      const kube::DeleteOptions options = deleteOnly(uid);
      auto removed = co_await kube::attempt(client_.remove(*kind, ns, name, options));
      if (!removed && !removed.notFound() && !removed.conflict()) {
        run.addError(
            ErrorLine::of("deleting the smoke " + kind->kind + " " + name + ": ", removed));
        clean = false;
      }
    }
  }
  co_return clean;
}

asio::awaitable<void> Reconciler::endSmokeTests(ReconcileRun& run, bool asked) {
  const std::string& dd = run.name;
  const auto swept = smokeSwept_.find(dd);
  // Unknown since the operator started: swept once where smoke volumes are asked for (a test
  // the previous process left), else left to the garbage collector with the DriverDeployment.
  const bool mayBeLeft = swept == smokeSwept_.end() ? asked : swept->second != kNoneLeft;
  if (mayBeLeft && co_await sweepSmokeTests(run, {})) {
    smokeSwept_[dd] = kNoneLeft;
  }
}

} // namespace csiop::driverdeployment
