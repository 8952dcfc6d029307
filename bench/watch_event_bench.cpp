// What a watch event costs the operator before any reconcile: a node plugin pod's MODIFIED event
// (the pod as the API server sends it: the rendered pod template of examples/hostpath.yaml, with
// the metadata, managedFields and status a running pod has) read by the WatchDecoder with the pod
// cache's field mask and decoded into the cache's entry (CachedPod); and, for comparison, the same
// event parsed whole. A rollout of 100 DaemonSets on 50 nodes is some 20,000 such events. Run:
// build/bench/watch_event_bench (figures: docs/explanation/performance.md).
#include <benchmark/benchmark.h>

#include <fstream>
#include <iterator>
#include <stdexcept>

#include <csiop/api/load.hpp>
#include <csiop/driverdeployment/cached_pod.hpp>
#include <csiop/driverdeployment/caches.hpp>
#include <csiop/kube/field_mask.hpp>
#include <csiop/kube/watch.hpp>
#include <csiop/render/render.hpp>
#include <csiop/runtime/store.hpp>

namespace {

using csiop::api::Json;

std::string example(const char* name) {
  std::ifstream in(std::string(CSIOP_SOURCE_DIR) + "/examples/" + name);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A running node plugin pod of the example, as one line of a watch response.
std::string podEventLine() {
  const auto loaded = csiop::api::loadDriverDeployments(example("hostpath.yaml"));
  if (!loaded.ok()) {
    throw std::runtime_error("examples/hostpath.yaml does not load");
  }
  Json daemonSet;
  for (Json& object : csiop::render::render(loaded.objects.at(0))) {
    if (object["kind"] == "DaemonSet") {
      daemonSet = std::move(object);
    }
  }
  const Json& tmpl = daemonSet["spec"]["template"];
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", tmpl["metadata"]},
              {"spec", tmpl["spec"]}};
  Json& meta = pod["metadata"];
  meta["name"] = daemonSet["metadata"]["name"].get<std::string>() + "-x7k2p";
  meta["namespace"] = daemonSet["metadata"]["namespace"];
  meta["uid"] = "0b3e2c57-6a1f-4f3e-9a52-3c1f2d8e4b71";
  meta["resourceVersion"] = "1843522";
  meta["creationTimestamp"] = "2026-11-27T02:15:18Z";
  meta["generateName"] = daemonSet["metadata"]["name"].get<std::string>() + "-";
  meta["labels"]["controller-revision-hash"] = "6c9d7f8b5";
  meta["labels"]["pod-template-generation"] = "1";
  meta["ownerReferences"] = Json::array({{{"apiVersion", "apps/v1"},
                                          {"kind", "DaemonSet"},
                                          {"name", daemonSet["metadata"]["name"]},
                                          {"uid", "5d0f9e64-1f0b-4c8a-8a1e-0f6b2f9d3c20"},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}});
  meta["managedFields"] =
      Json::array({{{"manager", "kube-controller-manager"},
                    {"operation", "Update"},
                    {"apiVersion", "v1"},
                    {"time", "2026-11-27T02:15:18Z"},
                    {"fieldsType", "FieldsV1"},
                    {"fieldsV1",
                     {{"f:metadata", {{"f:labels", {{"f:app", Json::object()}}}}},
                      {"f:spec", {{"f:containers", Json::object()}}}}}},
                   {{"manager", "kubelet"},
                    {"operation", "Update"},
                    {"subresource", "status"},
                    {"apiVersion", "v1"},
                    {"time", "2026-11-27T02:15:21Z"},
                    {"fieldsType", "FieldsV1"},
                    {"fieldsV1", {{"f:status", {{"f:conditions", Json::object()}}}}}}});
  pod["spec"]["nodeName"] = "kwok-node-17";
  Json containerStatuses = Json::array();
  for (const Json& c : pod["spec"]["containers"]) {
    containerStatuses.push_back(
        {{"name", c["name"]},
         {"image", c["image"]},
         {"imageID", ""},
         {"ready", true},
         {"restartCount", 0},
         {"started", true},
         {"state", {{"running", {{"startedAt", "2026-11-27T02:15:20Z"}}}}}});
  }
  Json conditions = Json::array();
  for (const char* type :
       {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
    conditions.push_back({{"type", type},
                          {"status", "True"},
                          {"lastProbeTime", nullptr},
                          {"lastTransitionTime", "2026-11-27T02:15:20Z"}});
  }
  pod["status"] = {{"phase", "Running"},
                   {"conditions", conditions},
                   {"hostIP", "10.0.0.17"},
                   {"podIP", "10.0.0.17"},
                   {"startTime", "2026-11-27T02:15:18Z"},
                   {"containerStatuses", containerStatuses},
                   {"qosClass", "Burstable"}};
  return Json{{"type", "MODIFIED"}, {"object", pod}}.dump() + "\n";
}

// What the pod cache does with each event: parse with its mask, decode the entry it keeps.
void BM_PodEventMasked(benchmark::State& state) {
  const std::string line = podEventLine();
  const csiop::kube::FieldMask fields = csiop::driverdeployment::podFields();
  csiop::kube::WatchDecoder decoder(csiop::kube::WatchDecoder::kDefaultMaxLineBytes, &fields);
  for (auto _ : state) {
    auto events = decoder.feed(line);
    const Json& pod = events.at(0).object;
    if (csiop::driverdeployment::keptInPodCache(pod)) {
      csiop::driverdeployment::CachedPod cached = csiop::driverdeployment::decodePod(pod);
      benchmark::DoNotOptimize(cached);
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * line.size()));
  state.counters["event_bytes"] = static_cast<double>(line.size());
}
BENCHMARK(BM_PodEventMasked);

// The same event built whole, then decoded (what the operator did before field masks).
void BM_PodEventWhole(benchmark::State& state) {
  const std::string line = podEventLine();
  csiop::kube::WatchDecoder decoder;
  for (auto _ : state) {
    auto events = decoder.feed(line);
    const Json& pod = events.at(0).object;
    if (csiop::driverdeployment::keptInPodCache(pod)) {
      csiop::driverdeployment::CachedPod cached = csiop::driverdeployment::decodePod(pod);
      benchmark::DoNotOptimize(cached);
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * line.size()));
}
BENCHMARK(BM_PodEventWhole);

} // namespace

BENCHMARK_MAIN();
