#include <csiop/runtime/operator_metrics.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace csiop::runtime {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

// controller-runtime's controller_runtime_reconcile_time_seconds buckets.
const Histogram::BucketBoundaries& reconcileBuckets() {
  static const Histogram::BucketBoundaries buckets = {
      0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
      0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
      6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60};
  return buckets;
}

const Histogram::BucketBoundaries& reviewBuckets() {
  static const Histogram::BucketBoundaries buckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                      0.005,  0.01,    0.025,  0.1};
  return buckets;
}

Family<Counter>& counter(prometheus::Registry& registry, const char* name, const char* help) {
  return BuildCounter().Name(name).Help(help).Register(registry);
}

Gauge& gauge(prometheus::Registry& registry, const char* name, const char* help) {
  return BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

Histogram& histogram(prometheus::Registry& registry, const char* name, const char* help,
                     const Histogram::BucketBoundaries& buckets) {
  return BuildHistogram().Name(name).Help(help).Register(registry).Add({}, buckets);
}

} // namespace

struct OperatorMetrics::Metrics {
  prometheus::Registry registry;

  Family<Counter>& reconcileTotal = counter(registry, "csiop_reconcile_total",
                                            "Reconciliations of DriverDeployments, by result.");
  Counter& reconcileSuccess = reconcileTotal.Add({{"result", "success"}});
  Counter& reconcileError = reconcileTotal.Add({{"result", "error"}});
  Counter& reconcileRequeue = reconcileTotal.Add({{"result", "requeue"}});
  Histogram& reconcileDuration = histogram(
      registry, "csiop_reconcile_duration_seconds",
      "Time spent in one reconciliation of a DriverDeployment, in seconds.", reconcileBuckets());
  Gauge& workqueueDepth =
      gauge(registry, "csiop_workqueue_depth", "DriverDeployment keys waiting in the work queue.");
  Family<Counter>& apiRequestsTotal =
      counter(registry, "csiop_api_requests_total",
              "Requests to the Kubernetes API server, by verb and HTTP status code (\"<error>\": "
              "no response).");
  Family<Counter>& apiMutatingRequestsTotal =
      counter(registry, "csiop_api_mutating_requests_total",
              "Writes to the Kubernetes API server (create, update, patch, apply, delete, "
              "deletecollection), whatever their outcome, by resource; flat when nothing "
              "changes.");
  Family<Counter>& apiWarningsTotal =
      counter(registry, "csiop_api_warnings_total",
              "Warnings the Kubernetes API server answered requests with, by the resource of the "
              "request.");
  Gauge& leader =
      gauge(registry, "csiop_leader", "1 while this replica holds the leader lease, else 0.");
  Gauge& driverDeployments =
      gauge(registry, "csiop_driverdeployments", "DriverDeployment objects known to the operator.");
  Family<Gauge>& cacheObjects = BuildGauge()
                                    .Name("csiop_cache_objects")
                                    .Help("Objects in each informer cache, by resource.")
                                    .Register(registry);
  Family<Gauge>& cacheHeapBytes =
      BuildGauge()
          .Name("csiop_cache_heap_bytes")
          .Help("About how much heap the objects of each informer cache hold, by resource (an "
                "estimate from their parsed form: nodes, strings and vectors with the "
                "allocator's chunk overhead).")
          .Register(registry);
  Family<Counter>& webhookReviewsTotal =
      counter(registry, "csiop_webhook_reviews_total",
              "AdmissionReviews answered by the webhook, by result (rejected: not a usable "
              "AdmissionReview).");
  Histogram& webhookReviewDuration =
      histogram(registry, "csiop_webhook_review_duration_seconds",
                "Time to decide one AdmissionReview, in seconds.", reviewBuckets());

  Family<Gauge>& unregisteredNodes =
      BuildGauge()
          .Name("csiop_driver_nodes_unregistered")
          .Help("Nodes where a DriverDeployment's node plugin runs and its driver is not "
                "registered in the node's CSINode, by reason (status.nodes.waiting says why).")
          .Register(registry);
  std::map<std::map<std::string, std::string>, Gauge*> unregisteredSeries;
  Family<Gauge>& volumeFailures =
      BuildGauge()
          .Name("csiop_driver_volume_failures")
          .Help("Volumes of a DriverDeployment's driver that fail, by reason: ProvisioningFailed "
                "(claims its provisioner refuses), AttachFailed, DetachFailed, MountFailed.")
          .Register(registry);
  std::map<std::map<std::string, std::string>, Gauge*> volumeFailureSeries;
  Family<Gauge>& conditions =
      BuildGauge()
          .Name("csiop_driverdeployment_status_condition")
          .Help("The conditions of each DriverDeployment's status: 1 for the condition's status "
                "(True, False, Unknown), 0 for the other two.")
          .Register(registry);
  std::map<std::map<std::string, std::string>, Gauge*> conditionSeries;

  Metrics() {
    for (const char* result : {"allowed", "denied", "rejected"}) {
      webhookReviewsTotal.Add({{"result", result}});
    }
  }
};

OperatorMetrics::OperatorMetrics() : metrics_(std::make_unique<Metrics>()) {}

OperatorMetrics::~OperatorMetrics() = default;

void OperatorMetrics::observeReconcile(ReconcileResult::Outcome outcome, double seconds) {
  switch (outcome) {
  case ReconcileResult::Outcome::Done:
    metrics_->reconcileSuccess.Increment();
    break;
  case ReconcileResult::Outcome::Error:
    metrics_->reconcileError.Increment();
    break;
  case ReconcileResult::Outcome::Requeue:
    metrics_->reconcileRequeue.Increment();
    break;
  }
  metrics_->reconcileDuration.Observe(seconds);
}

void OperatorMetrics::observeReview(std::string_view result, double seconds) {
  metrics_->webhookReviewsTotal.Add({{"result", std::string(result)}}).Increment();
  metrics_->webhookReviewDuration.Observe(seconds);
}

void OperatorMetrics::observeApiRequest(std::string_view verb, std::string_view resource,
                                        int httpStatus) {
  metrics_->apiRequestsTotal
      .Add({{"verb", std::string(verb)},
            {"code", httpStatus > 0 ? std::to_string(httpStatus) : "<error>"}})
      .Increment();
  // A create of a review (SubjectAccessReview, TokenReview) asks a question and stores nothing.
  if (isMutatingVerb(verb) && !resource.ends_with("reviews")) {
    metrics_->apiMutatingRequestsTotal.Add({{"resource", std::string(resource)}}).Increment();
  }
}

void OperatorMetrics::observeApiWarning(std::string_view resource) {
  metrics_->apiWarningsTotal.Add({{"resource", std::string(resource)}}).Increment();
}

void OperatorMetrics::setWorkqueueDepth(std::size_t keys) {
  metrics_->workqueueDepth.Set(static_cast<double>(keys));
}

void OperatorMetrics::setDriverDeployments(std::size_t objects) {
  metrics_->driverDeployments.Set(static_cast<double>(objects));
}

void OperatorMetrics::setCache(std::string_view resource, std::size_t objects,
                               std::size_t heapBytes) {
  const std::map<std::string, std::string> labels = {{"resource", std::string(resource)}};
  metrics_->cacheObjects.Add(labels).Set(static_cast<double>(objects));
  metrics_->cacheHeapBytes.Add(labels).Set(static_cast<double>(heapBytes));
}

namespace {

using Labels = std::map<std::string, std::string>;

// `values` as the series of `family`, replacing those of the last call (`series`): one that is
// no longer there is gone, not 0.
void replaceSeries(prometheus::Family<prometheus::Gauge>& family,
                   std::map<Labels, prometheus::Gauge*>& series,
                   const std::map<Labels, double>& values) {
  std::map<Labels, prometheus::Gauge*> now;
  for (const auto& [labels, value] : values) {
    prometheus::Gauge& gauge = family.Add(labels);
    gauge.Set(value);
    now.emplace(labels, &gauge);
  }
  for (const auto& [labels, gauge] : series) {
    if (!now.contains(labels)) {
      family.Remove(gauge);
    }
  }
  series = std::move(now);
}

// DriverDeployment -> reason -> count, as series labelled driverdeployment and reason.
std::map<Labels, double> byReason(const OperatorMetrics::CountsByDriverDeployment& counts) {
  std::map<Labels, double> out;
  for (const auto& [driverDeployment, reasons] : counts) {
    for (const auto& [reason, value] : reasons) {
      out[{{"driverdeployment", driverDeployment}, {"reason", reason}}] = value;
    }
  }
  return out;
}

} // namespace

void OperatorMetrics::setUnregisteredNodes(const CountsByDriverDeployment& counts) {
  replaceSeries(metrics_->unregisteredNodes, metrics_->unregisteredSeries, byReason(counts));
}

void OperatorMetrics::setVolumeFailures(const CountsByDriverDeployment& counts) {
  replaceSeries(metrics_->volumeFailures, metrics_->volumeFailureSeries, byReason(counts));
}

void OperatorMetrics::setConditions(const ConditionsByDriverDeployment& conditions) {
  std::map<Labels, double> values;
  for (const auto& [driverDeployment, byType] : conditions) {
    for (const auto& [type, status] : byType) {
      for (const char* s : {"True", "False", "Unknown"}) {
        values[{{"driverdeployment", driverDeployment}, {"condition", type}, {"status", s}}] =
            status == s ? 1 : 0;
      }
    }
  }
  replaceSeries(metrics_->conditions, metrics_->conditionSeries, values);
}

void OperatorMetrics::setLeader(bool leader) {
  metrics_->leader.Set(leader ? 1 : 0);
}

std::string OperatorMetrics::exposition() const {
  std::vector<prometheus::MetricFamily> families = metrics_->registry.Collect();
  std::sort(families.begin(), families.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  for (auto& family : families) {
    std::sort(family.metric.begin(), family.metric.end(),
              [](const auto& a, const auto& b) { return a.label < b.label; });
  }
  return prometheus::TextSerializer().Serialize(families);
}

bool OperatorMetrics::isMutatingVerb(std::string_view verb) {
  return verb == "create" || verb == "update" || verb == "patch" || verb == "apply" ||
         verb == "delete" || verb == "deletecollection";
}

} // namespace csiop::runtime
