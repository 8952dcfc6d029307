// A small Prometheus registry: counters, gauges and histograms, with labels,
// rendered in the text exposition format 0.0.4.
//
// Rendering is deterministic: families sorted by name; within a family, label
// pairs in label-name order (histograms' `le` last) and series sorted by their
// label values. A family without labels always shows its one series (0 until
// touched); a labelled family shows the series that were created with with().
// Numbers print as client_golang prints them (shortest round-trip form, Go's
// %g rules: 1, 0.005, 1e+06; +Inf, -Inf, NaN).
//
// Thread-safety: none. Update and render from the io_context's thread only.
// References returned by the registry and by with() stay valid for the
// registry's lifetime.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace csiop::runtime {

class Counter {
public:
  // Throws std::invalid_argument for a negative amount (counters only go up).
  void inc(double amount = 1);
  double value() const { return value_; }

private:
  double value_ = 0;
};

class Gauge {
public:
  void set(double value) { value_ = value; }
  void inc(double amount = 1) { value_ += amount; }
  void dec(double amount = 1) { value_ -= amount; }
  double value() const { return value_; }

private:
  double value_ = 0;
};

class Histogram {
public:
  // `upperBounds`: strictly increasing, finite; +Inf is implied.
  explicit Histogram(std::vector<double> upperBounds);
  void observe(double value);

  const std::vector<double>& upperBounds() const { return upperBounds_; }
  // Per bucket (not cumulative); one more entry than upperBounds (the +Inf bucket).
  const std::vector<std::uint64_t>& bucketCounts() const { return counts_; }
  double sum() const { return sum_; }
  std::uint64_t count() const { return count_; }

private:
  std::vector<double> upperBounds_;
  std::vector<std::uint64_t> counts_;
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

// controller-runtime's controller_runtime_reconcile_time_seconds buckets
// (5ms .. 60s).
const std::vector<double>& defaultReconcileBuckets();

enum class MetricType { counter, gauge, histogram };

// All series of one metric name.
template <class Metric> class Family {
public:
  // The series with these label values (in the order the label names were
  // declared), created on first use. Throws std::invalid_argument when the
  // number of values does not match the label names.
  Metric& with(const std::vector<std::string>& labelValues);
  // The only series of a family without labels.
  Metric& get() { return with({}); }

  const std::string& name() const { return name_; }
  void render(std::string& out) const;

private:
  friend class Registry;
  Family(std::string name, std::string help, std::vector<std::string> labelNames,
         std::function<std::unique_ptr<Metric>()> make);

  std::string name_;
  std::string help_;
  std::vector<std::string> labelNames_;   // as declared
  std::vector<std::size_t> sortedLabels_; // indices into labelNames_, by name
  std::function<std::unique_ptr<Metric>()> make_;
  // Keyed by label values in label-name order, so iteration is render order.
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> series_;
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

class Registry {
public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Declares a metric family. Throws std::invalid_argument for an invalid or
  // already registered name, an invalid/duplicate/reserved label name (`__*`;
  // `le` on histograms), or bad buckets.
  CounterFamily& counter(std::string name, std::string help,
                         std::vector<std::string> labelNames = {});
  GaugeFamily& gauge(std::string name, std::string help, std::vector<std::string> labelNames = {});
  HistogramFamily& histogram(std::string name, std::string help,
                             std::vector<std::string> labelNames = {},
                             std::vector<double> buckets = defaultReconcileBuckets());

  // Runs before every render, to refresh values sampled at scrape time (e.g.
  // the work queue depth).
  void onCollect(std::function<void()> hook);

  // The text exposition format 0.0.4.
  std::string render();

private:
  void checkNewFamily(const std::string& name, const std::vector<std::string>& labelNames,
                      MetricType type) const;

  struct Entry {
    MetricType type;
    std::unique_ptr<CounterFamily> counter;
    std::unique_ptr<GaugeFamily> gauge;
    std::unique_ptr<HistogramFamily> histogram;
  };
  std::map<std::string, Entry> families_;
  std::vector<std::function<void()>> collectHooks_;
};

// Content-Type of the text format.
inline constexpr std::string_view kPrometheusTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// The operator's metrics, declared in one place.
enum class ReconcileResult { success, error, requeue };

struct OperatorMetrics {
  explicit OperatorMetrics(Registry& registry);

  // csiop_reconcile_total{result="success|error|requeue"}; all three exist from the start.
  CounterFamily& reconcileTotal;
  // csiop_reconcile_duration_seconds (defaultReconcileBuckets()).
  Histogram& reconcileDuration;
  // csiop_workqueue_depth: WorkQueue::len().
  Gauge& workqueueDepth;
  // csiop_api_requests_total{verb,code}: every request to the API server.
  CounterFamily& apiRequestsTotal;
  // csiop_api_mutating_requests_total: create/update/patch/apply/delete/
  // deletecollection requests (any outcome); flat at steady state.
  Counter& apiMutatingRequestsTotal;
  // csiop_leader: 1 while this replica holds the lease, else 0.
  Gauge& leader;
  // csiop_driverdeployments: DriverDeployments in the informer cache.
  Gauge& driverDeployments;

  // csiop_webhook_reviews_total{result="allowed|denied|rejected"}: AdmissionReviews
  // answered (rejected: not a usable AdmissionReview, HTTP 4xx).
  CounterFamily& webhookReviewsTotal;
  // csiop_webhook_review_duration_seconds: from the request read to the answer built.
  Histogram& webhookReviewDuration;

  void observeReconcile(ReconcileResult result, double seconds);
  void observeReview(std::string_view result, double seconds);
  // `verb`: the Kubernetes verb, lower case (get, list, watch, create, update,
  // patch, apply, delete, deletecollection). `httpStatus` <= 0 means no response
  // (connection error) and is recorded as code="<error>", as client-go does.
  void observeApiRequest(std::string_view verb, int httpStatus);
  static bool isMutatingVerb(std::string_view verb);
};

} // namespace csiop::runtime
