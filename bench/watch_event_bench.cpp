// What a watch event costs the operator before any reconcile: a node plugin pod's MODIFIED event
// (the pod as the API server sends it: the rendered pod template of examples/hostpath.yaml, with
// the metadata, managedFields and status a running pod has) read by the WatchDecoder with the pod
// cache's field mask and decoded into the cache's entry (CachedPod); and, for comparison, the same
// event parsed whole. A rollout of 100 DaemonSets on 50 nodes is some 20,000 such events. Run:
// build/bench/watch_event_bench (figures: docs/explanation/performance.md).
#include <benchmark/benchmark.h>

#include <string>

#include <csiop/driverdeployment/cached_pod.hpp>
#include <csiop/driverdeployment/caches.hpp>
#include <csiop/kube/field_mask.hpp>
#include <csiop/kube/watch.hpp>
#include <csiop/runtime/store.hpp>

#include "node_plugin_pod.hpp"

namespace {

using csiop::api::Json;

// A running node plugin pod of the example, as one line of a watch response.
std::string podEventLine() {
  return Json{{"type", "MODIFIED"}, {"object", csiop::bench::runningNodePluginPod()}}.dump() + "\n";
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
