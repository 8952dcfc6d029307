#include <csiop/runtime/metrics.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <numeric>
#include <set>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace csiop::runtime {
namespace {

bool validMetricName(std::string_view name) {
  if (name.empty()) {
    return false;
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) {
      return false;
    }
  }
  return true;
}

bool validLabelName(std::string_view name) {
  if (name.empty() || name.starts_with("__")) {
    return false;
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) {
      return false;
    }
  }
  return true;
}

// Go's strconv.FormatFloat(v, 'g', -1, 64), which client_golang uses: the
// shortest representation that round-trips, in exponent form when the decimal
// exponent is < -4 or >= 6.
void appendNumber(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
    return;
  }
  std::array<char, 64> buffer{};
  auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                              std::chars_format::scientific);
  const std::string_view scientific(buffer.data(),
                                    static_cast<std::size_t>(result.ptr - buffer.data()));
  const auto e = scientific.find('e');
  int exponent = 0;
  std::from_chars(scientific.data() + e + 1 + (scientific[e + 1] == '+' ? 1 : 0),
                  scientific.data() + scientific.size(), exponent);
  if (exponent < -4 || exponent >= 6) {
    out += scientific;
    return;
  }
  result =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed);
  out.append(buffer.data(), static_cast<std::size_t>(result.ptr - buffer.data()));
}

void appendNumber(std::string& out, std::uint64_t value) {
  out += std::to_string(value);
}

// Label values escape backslash, double quote and line feed; HELP text
// escapes backslash and line feed.
void appendEscaped(std::string& out, std::string_view text, bool quotes) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

struct Labels {
  const std::vector<std::string>& names;  // as declared
  const std::vector<std::size_t>& sorted; // render order
  const std::vector<std::string>& values; // in render order
};

void appendLabels(std::string& out, const Labels& labels, std::string_view le = {}) {
  if (labels.values.empty() && le.empty()) {
    return;
  }
  out += '{';
  bool first = true;
  for (std::size_t i = 0; i < labels.values.size(); ++i) {
    if (!first) {
      out += ',';
    }
    first = false;
    out += labels.names[labels.sorted[i]];
    out += "=\"";
    appendEscaped(out, labels.values[i], true);
    out += '"';
  }
  if (!le.empty()) {
    if (!first) {
      out += ',';
    }
    out += "le=\"";
    out += le;
    out += '"';
  }
  out += '}';
}

template <class Value>
void appendSample(std::string& out, std::string_view name, std::string_view suffix,
                  const Labels& labels, Value value, std::string_view le = {}) {
  out += name;
  out += suffix;
  appendLabels(out, labels, le);
  out += ' ';
  appendNumber(out, value);
  out += '\n';
}

constexpr std::string_view typeName(MetricType type) {
  switch (type) {
  case MetricType::counter:
    return "counter";
  case MetricType::gauge:
    return "gauge";
  case MetricType::histogram:
    return "histogram";
  }
  return "untyped";
}

template <class Metric> constexpr MetricType typeOf() {
  if constexpr (std::is_same_v<Metric, Counter>) {
    return MetricType::counter;
  } else if constexpr (std::is_same_v<Metric, Gauge>) {
    return MetricType::gauge;
  } else {
    return MetricType::histogram;
  }
}

} // namespace

void Counter::inc(double amount) {
  if (amount < 0) {
    throw std::invalid_argument("counter cannot decrease");
  }
  value_ += amount;
}

Histogram::Histogram(std::vector<double> upperBounds) : upperBounds_(std::move(upperBounds)) {
  if (!upperBounds_.empty() && std::isinf(upperBounds_.back()) && upperBounds_.back() > 0) {
    upperBounds_.pop_back(); // +Inf is always there
  }
  for (std::size_t i = 0; i < upperBounds_.size(); ++i) {
    if (!std::isfinite(upperBounds_[i]) || (i > 0 && !(upperBounds_[i - 1] < upperBounds_[i]))) {
      throw std::invalid_argument("histogram buckets must be finite and strictly increasing");
    }
  }
  counts_.assign(upperBounds_.size() + 1, 0);
}

void Histogram::observe(double value) {
  // le is inclusive: a value equal to a bound counts in that bucket. NaN goes
  // to +Inf only, as in client_golang.
  const std::size_t bucket =
      std::isnan(value) ? upperBounds_.size()
                        : static_cast<std::size_t>(
                              std::lower_bound(upperBounds_.begin(), upperBounds_.end(), value) -
                              upperBounds_.begin());
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

const std::vector<double>& defaultReconcileBuckets() {
  static const std::vector<double> buckets = {
      0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
      0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
      6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60};
  return buckets;
}

template <class Metric>
Family<Metric>::Family(std::string name, std::string help, std::vector<std::string> labelNames,
                       std::function<std::unique_ptr<Metric>()> make)
    : name_(std::move(name)), help_(std::move(help)), labelNames_(std::move(labelNames)),
      make_(std::move(make)) {
  sortedLabels_.resize(labelNames_.size());
  std::iota(sortedLabels_.begin(), sortedLabels_.end(), std::size_t{0});
  std::sort(sortedLabels_.begin(), sortedLabels_.end(),
            [&](std::size_t a, std::size_t b) { return labelNames_[a] < labelNames_[b]; });
  if (labelNames_.empty()) {
    series_.emplace(std::vector<std::string>{}, make_());
  }
}

template <class Metric> Metric& Family<Metric>::with(const std::vector<std::string>& labelValues) {
  if (labelValues.size() != labelNames_.size()) {
    throw std::invalid_argument("metric " + name_ + ": expected " +
                                std::to_string(labelNames_.size()) + " label values, got " +
                                std::to_string(labelValues.size()));
  }
  std::vector<std::string> key;
  key.reserve(labelValues.size());
  for (const std::size_t index : sortedLabels_) {
    key.push_back(labelValues[index]);
  }
  auto it = series_.find(key);
  if (it == series_.end()) {
    it = series_.emplace(std::move(key), make_()).first;
  }
  return *it->second;
}

template <class Metric> void Family<Metric>::render(std::string& out) const {
  if (series_.empty()) {
    return; // a labelled family nobody has used yet: nothing to say
  }
  out += "# HELP ";
  out += name_;
  if (!help_.empty()) {
    out += ' ';
    appendEscaped(out, help_, false);
  }
  out += "\n# TYPE ";
  out += name_;
  out += ' ';
  out += typeName(typeOf<Metric>());
  out += '\n';
  for (const auto& [values, metric] : series_) {
    const Labels labels{labelNames_, sortedLabels_, values};
    if constexpr (std::is_same_v<Metric, Histogram>) {
      std::uint64_t cumulative = 0;
      const auto& bounds = metric->upperBounds();
      const auto& counts = metric->bucketCounts();
      for (std::size_t i = 0; i < bounds.size(); ++i) {
        cumulative += counts[i];
        std::string le;
        appendNumber(le, bounds[i]);
        appendSample(out, name_, "_bucket", labels, cumulative, le);
      }
      appendSample(out, name_, "_bucket", labels, metric->count(), "+Inf");
      appendSample(out, name_, "_sum", labels, metric->sum());
      appendSample(out, name_, "_count", labels, metric->count());
    } else {
      appendSample(out, name_, "", labels, metric->value());
    }
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

Registry::Registry() = default;
Registry::~Registry() = default;

void Registry::checkNewFamily(const std::string& name, const std::vector<std::string>& labelNames,
                              MetricType type) const {
  if (!validMetricName(name)) {
    throw std::invalid_argument("invalid metric name: \"" + name + "\"");
  }
  if (families_.contains(name)) {
    throw std::invalid_argument("metric already registered: " + name);
  }
  std::set<std::string> seen;
  for (const auto& label : labelNames) {
    if (!validLabelName(label)) {
      throw std::invalid_argument("metric " + name + ": invalid label name \"" + label + "\"");
    }
    if (type == MetricType::histogram && label == "le") {
      throw std::invalid_argument("metric " + name + ": histograms cannot have a label \"le\"");
    }
    if (!seen.insert(label).second) {
      throw std::invalid_argument("metric " + name + ": duplicate label name \"" + label + "\"");
    }
  }
}

CounterFamily& Registry::counter(std::string name, std::string help,
                                 std::vector<std::string> labelNames) {
  checkNewFamily(name, labelNames, MetricType::counter);
  auto family = std::unique_ptr<CounterFamily>(new CounterFamily(
      name, std::move(help), std::move(labelNames), [] { return std::make_unique<Counter>(); }));
  auto& ref = *family;
  families_.emplace(std::move(name), Entry{MetricType::counter, std::move(family), {}, {}});
  return ref;
}

GaugeFamily& Registry::gauge(std::string name, std::string help,
                             std::vector<std::string> labelNames) {
  checkNewFamily(name, labelNames, MetricType::gauge);
  auto family = std::unique_ptr<GaugeFamily>(new GaugeFamily(
      name, std::move(help), std::move(labelNames), [] { return std::make_unique<Gauge>(); }));
  auto& ref = *family;
  families_.emplace(std::move(name), Entry{MetricType::gauge, {}, std::move(family), {}});
  return ref;
}

HistogramFamily& Registry::histogram(std::string name, std::string help,
                                     std::vector<std::string> labelNames,
                                     std::vector<double> buckets) {
  checkNewFamily(name, labelNames, MetricType::histogram);
  Histogram prototype(std::move(buckets)); // validates the buckets once
  auto family = std::unique_ptr<HistogramFamily>(new HistogramFamily(
      name, std::move(help), std::move(labelNames),
      [bounds = prototype.upperBounds()] { return std::make_unique<Histogram>(bounds); }));
  auto& ref = *family;
  families_.emplace(std::move(name), Entry{MetricType::histogram, {}, {}, std::move(family)});
  return ref;
}

void Registry::onCollect(std::function<void()> hook) {
  collectHooks_.push_back(std::move(hook));
}

std::string Registry::render() {
  for (const auto& hook : collectHooks_) {
    hook();
  }
  std::string out;
  for (const auto& [name, entry] : families_) {
    switch (entry.type) {
    case MetricType::counter:
      entry.counter->render(out);
      break;
    case MetricType::gauge:
      entry.gauge->render(out);
      break;
    case MetricType::histogram:
      entry.histogram->render(out);
      break;
    }
  }
  return out;
}

OperatorMetrics::OperatorMetrics(Registry& registry)
    : reconcileTotal(registry.counter(
          "csiop_reconcile_total", "Reconciliations of DriverDeployments, by result.", {"result"})),
      reconcileDuration(
          registry
              .histogram("csiop_reconcile_duration_seconds",
                         "Time spent in one reconciliation of a DriverDeployment, in seconds.")
              .get()),
      workqueueDepth(
          registry
              .gauge("csiop_workqueue_depth", "DriverDeployment keys waiting in the work queue.")
              .get()),
      apiRequestsTotal(registry.counter("csiop_api_requests_total",
                                        "Requests to the Kubernetes API server, by verb and HTTP "
                                        "status code (\"<error>\": no response).",
                                        {"verb", "code"})),
      apiMutatingRequestsTotal(
          registry
              .counter("csiop_api_mutating_requests_total",
                       "Writes to the Kubernetes API server (create, update, patch, apply, delete, "
                       "deletecollection), whatever their outcome; flat when nothing changes.")
              .get()),
      leader(registry.gauge("csiop_leader", "1 while this replica holds the leader lease, else 0.")
                 .get()),
      driverDeployments(
          registry
              .gauge("csiop_driverdeployments", "DriverDeployment objects known to the operator.")
              .get()),
      webhookReviewsTotal(registry.counter("csiop_webhook_reviews_total",
                                           "AdmissionReviews answered by the webhook, by result "
                                           "(rejected: not a usable AdmissionReview).",
                                           {"result"})),
      webhookReviewDuration(
          registry
              .histogram("csiop_webhook_review_duration_seconds",
                         "Time to decide one AdmissionReview, in seconds.", {},
                         {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1})
              .get()) {
  for (const char* result : {"success", "error", "requeue"}) {
    reconcileTotal.with({result});
  }
  for (const char* result : {"allowed", "denied", "rejected"}) {
    webhookReviewsTotal.with({result});
  }
}

void OperatorMetrics::observeReview(std::string_view result, double seconds) {
  webhookReviewsTotal.with({std::string(result)}).inc();
  webhookReviewDuration.observe(seconds);
}

void OperatorMetrics::observeReconcile(ReconcileResult result, double seconds) {
  switch (result) {
  case ReconcileResult::success:
    reconcileTotal.with({"success"}).inc();
    break;
  case ReconcileResult::error:
    reconcileTotal.with({"error"}).inc();
    break;
  case ReconcileResult::requeue:
    reconcileTotal.with({"requeue"}).inc();
    break;
  }
  reconcileDuration.observe(seconds);
}

void OperatorMetrics::observeApiRequest(std::string_view verb, int httpStatus) {
  apiRequestsTotal
      .with({std::string(verb), httpStatus > 0 ? std::to_string(httpStatus) : "<error>"})
      .inc();
  if (isMutatingVerb(verb)) {
    apiMutatingRequestsTotal.inc();
  }
}

bool OperatorMetrics::isMutatingVerb(std::string_view verb) {
  return verb == "create" || verb == "update" || verb == "patch" || verb == "apply" ||
         verb == "delete" || verb == "deletecollection";
}

} // namespace csiop::runtime
