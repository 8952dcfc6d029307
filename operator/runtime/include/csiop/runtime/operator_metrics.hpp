// The operator's Prometheus metrics, declared in one place (on prometheus-cpp), and their
// text exposition as /metrics serves it.
//
// Every metric exists from the start, the labelled ones with the label values listed below,
// so that a scrape shows them at 0 before anything happened. The exposition is deterministic:
// families sorted by name, series by their labels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <csiop/runtime/reconcile_result.hpp>

namespace csiop::runtime {

// Content-Type of the text format.
inline constexpr std::string_view kPrometheusTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

class OperatorMetrics {
public:
  OperatorMetrics();
  ~OperatorMetrics();
  OperatorMetrics(const OperatorMetrics&) = delete;
  OperatorMetrics& operator=(const OperatorMetrics&) = delete;

  // csiop_reconcile_total{result="success|error|requeue"} (Done is success) and
  // csiop_reconcile_duration_seconds (controller-runtime's buckets, 5ms .. 60s).
  void observeReconcile(ReconcileResult::Outcome outcome, double seconds);
  // csiop_webhook_reviews_total{result="allowed|denied|rejected"}: AdmissionReviews answered
  // (rejected: not a usable AdmissionReview, HTTP 4xx), and
  // csiop_webhook_review_duration_seconds: from the request read to the answer built.
  void observeReview(std::string_view result, double seconds);
  // csiop_api_requests_total{verb,code}: every request to the API server; `verb` is the
  // Kubernetes verb, lower case (get, list, watch, create, update, patch, apply, delete,
  // deletecollection). `httpStatus` <= 0 means no response (connection error) and is recorded
  // as code="<error>", as client-go does. Writes (isMutatingVerb, any outcome, but the creates
  // of reviews, which store nothing: the webhook's SubjectAccessReviews) also count in
  // csiop_api_mutating_requests_total{resource} (the plural, "daemonsets"), which is flat at
  // steady state.
  void observeApiRequest(std::string_view verb, std::string_view resource, int httpStatus);
  // csiop_api_warnings_total{resource}: the warnings the API server answered requests with (a
  // field it dropped or did not know, a deprecated API, a value it took but doubts), by the
  // resource (plural) of the request; flat while the operator writes what the server expects.
  void observeApiWarning(std::string_view resource);
  // csiop_workqueue_depth: WorkQueue::len().
  void setWorkqueueDepth(std::size_t keys);
  // csiop_driverdeployments: DriverDeployments in the informer cache.
  void setDriverDeployments(std::size_t objects);
  // csiop_leader: 1 while this replica holds the lease, else 0.
  void setLeader(bool leader);
  // csiop_cache_objects{resource} and csiop_cache_heap_bytes{resource}: the objects an informer
  // cache holds and about how much heap they take (Store::heapBytes), as of the scrape.
  void setCache(std::string_view resource, std::size_t objects, std::size_t heapBytes);

  // csiop_driver_nodes_unregistered{driverdeployment,reason}: nodes where a DriverDeployment's
  // plugin runs and its driver is not registered, by reason (RegistrarRestarting, NoCSINode,
  // NotRegistered), as of each one's last reconcile; `counts` replaces every series (one that
  // is no longer there is gone, not 0, as with kube-state-metrics' per-object series).
  using CountsByDriverDeployment = std::map<std::string, std::map<std::string, std::int32_t>>;
  void setUnregisteredNodes(const CountsByDriverDeployment& counts);
  // csiop_driver_volume_failures{driverdeployment,reason}: the driver's volumes that fail, by
  // reason (ProvisioningFailed, AttachFailed, DetachFailed, MountFailed), replaced the same way.
  void setVolumeFailures(const CountsByDriverDeployment& counts);
  // csiop_driverdeployment_status_condition{driverdeployment,condition,status}: for each
  // condition of each DriverDeployment (name -> type -> "True", "False" or "Unknown"), 1 for its
  // status and 0 for the other two, as kube-state-metrics' *_status_condition; replaced the
  // same way.
  using ConditionsByDriverDeployment = std::map<std::string, std::map<std::string, std::string>>;
  void setConditions(const ConditionsByDriverDeployment& conditions);

  // The text exposition format 0.0.4.
  std::string exposition() const;

  static bool isMutatingVerb(std::string_view verb);

private:
  struct Metrics;
  std::unique_ptr<Metrics> metrics_;
};

} // namespace csiop::runtime
