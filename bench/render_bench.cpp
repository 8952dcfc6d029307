// Throughput of the pure pipeline the operator runs on every reconcile:
// parse + decode + validate a DriverDeployment, render it, and serialise the
// result; and the webhook's pure answer to a review. Run: build/bench/render_bench (figures:
// docs/explanation/performance.md).
#include <benchmark/benchmark.h>

#include <chrono>
#include <fstream>
#include <iterator>

#include <csiop/api/codec.hpp>
#include <csiop/api/embedded_fields.hpp>
#include <csiop/api/load.hpp>
#include <csiop/api/yaml.hpp>
#include <csiop/render/render.hpp>
#include <csiop/webhook/admission.hpp>

namespace {

using csiop::api::Json;

std::string example(const char* name) {
  std::ifstream in(std::string(CSIOP_SOURCE_DIR) + "/examples/" + name);
  return {std::istreambuf_iterator<char>(in), {}};
}

void BM_LoadYaml(benchmark::State& state) {
  const std::string text = example("hostpath.yaml");
  for (auto _ : state) {
    auto loaded = csiop::api::loadDriverDeployments(text);
    benchmark::DoNotOptimize(loaded);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_LoadYaml);

// What the reconciler does: the object arrives as JSON from the API server. Also for the largest
// example (ceph-rbd: many embedded Kubernetes objects, each checked against Kubernetes' schema).
void BM_LoadJson(benchmark::State& state, const char* name) {
  const Json doc = csiop::api::parseYaml(example(name)).at(0);
  for (auto _ : state) {
    auto loaded = csiop::api::loadDriverDeployment(doc);
    benchmark::DoNotOptimize(loaded);
  }
}
BENCHMARK_CAPTURE(BM_LoadJson, hostpath, "hostpath.yaml");
BENCHMARK_CAPTURE(BM_LoadJson, ceph_rbd, "ceph-rbd.yaml");

// The embedded objects' check alone (part of each load above).
void BM_CheckEmbeddedFields(benchmark::State& state, const char* name) {
  const Json doc = csiop::api::parseYaml(example(name)).at(0);
  for (auto _ : state) {
    auto found = csiop::api::checkEmbeddedFields(doc, csiop::api::embeddedKubeSchema());
    benchmark::DoNotOptimize(found);
  }
}
BENCHMARK_CAPTURE(BM_CheckEmbeddedFields, hostpath, "hostpath.yaml");
BENCHMARK_CAPTURE(BM_CheckEmbeddedFields, ceph_rbd, "ceph-rbd.yaml");

// The webhook's answer to one review of a new DriverDeployment (no author check): the load
// above, then the decision.
void BM_Review(benchmark::State& state) {
  const Json dd = csiop::api::parseYaml(example("hostpath.yaml")).at(0);
  csiop::webhook::ClusterView cluster;
  csiop::webhook::Reservations reservations([] { return std::chrono::steady_clock::now(); });
  int n = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const Json review = {
        {"apiVersion", "admission.k8s.io/v1"},
        {"kind", "AdmissionReview"},
        {"request",
         {{"uid", "review-" + std::to_string(++n)},
          {"kind", {{"group", "csiop.dev"}, {"version", "v1alpha1"}, {"kind", "DriverDeployment"}}},
          {"operation", "CREATE"},
          {"dryRun", true},
          {"userInfo", {{"username", "kubernetes-admin"}}},
          {"object", dd}}}};
    const std::string body = review.dump();
    state.ResumeTiming();
    auto result = csiop::webhook::review(body, cluster, reservations);
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_Review);

void BM_Render(benchmark::State& state) {
  const auto dd = csiop::api::loadDriverDeployments(example("hostpath.yaml")).objects.at(0);
  std::size_t objects = 0;
  for (auto _ : state) {
    auto out = csiop::render::render(dd);
    objects += out.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["objects/s"] =
      benchmark::Counter(static_cast<double>(objects), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Render);

void BM_RenderToYaml(benchmark::State& state) {
  const auto dd = csiop::api::loadDriverDeployments(example("hostpath.yaml")).objects.at(0);
  for (auto _ : state) {
    auto text = csiop::api::toYamlStream(csiop::render::render(dd));
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_RenderToYaml);

} // namespace

BENCHMARK_MAIN();
