#include <cmath>
#include <limits>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include <csiop/runtime/metrics.hpp>

namespace csiop::runtime {
namespace {

TEST(MetricsTest, RendersFamiliesSortedWithHelpTypeAndSortedSeries) {
  Registry registry;
  auto& requests = registry.counter("b_requests_total", "B things.", {"verb", "code"});
  auto& gauge = registry.gauge("a_gauge", "A gauge.").get();
  requests.with({"get", "404"}).inc(0.5);
  requests.with({"create", "201"}).inc(2);
  requests.with({"get", "200"}).inc();
  gauge.set(-3.25);
  EXPECT_EQ(registry.render(), "# HELP a_gauge A gauge.\n"
                               "# TYPE a_gauge gauge\n"
                               "a_gauge -3.25\n"
                               "# HELP b_requests_total B things.\n"
                               "# TYPE b_requests_total counter\n"
                               "b_requests_total{code=\"200\",verb=\"get\"} 1\n"
                               "b_requests_total{code=\"201\",verb=\"create\"} 2\n"
                               "b_requests_total{code=\"404\",verb=\"get\"} 0.5\n");
}

TEST(MetricsTest, LabelFreeFamiliesShowZeroAndUnusedLabelledFamiliesNothing) {
  Registry registry;
  registry.counter("unused_total", "Never touched.", {"result"});
  registry.counter("plain_total", "No labels.");
  EXPECT_EQ(registry.render(), "# HELP plain_total No labels.\n"
                               "# TYPE plain_total counter\n"
                               "plain_total 0\n");
}

TEST(MetricsTest, EscapesLabelValuesAndHelp) {
  Registry registry;
  registry.gauge("escaped", "Line one\nback\\slash \"quotes\" stay.", {"path"})
      .with({"a\\b\"c\nd"})
      .set(1);
  EXPECT_EQ(registry.render(), "# HELP escaped Line one\\nback\\\\slash \"quotes\" stay.\n"
                               "# TYPE escaped gauge\n"
                               "escaped{path=\"a\\\\b\\\"c\\nd\"} 1\n");
}

TEST(MetricsTest, HistogramHasCumulativeBucketsInfSumAndCount) {
  Registry registry;
  auto& histogram = registry.histogram("h_seconds", "H.", {"kind"}, {0.125, 0.5, 1});
  auto& x = histogram.with({"x"});
  x.observe(0.125); // le is inclusive
  x.observe(0.25);
  x.observe(2);
  histogram.with({"a"});
  EXPECT_EQ(registry.render(), "# HELP h_seconds H.\n"
                               "# TYPE h_seconds histogram\n"
                               "h_seconds_bucket{kind=\"a\",le=\"0.125\"} 0\n"
                               "h_seconds_bucket{kind=\"a\",le=\"0.5\"} 0\n"
                               "h_seconds_bucket{kind=\"a\",le=\"1\"} 0\n"
                               "h_seconds_bucket{kind=\"a\",le=\"+Inf\"} 0\n"
                               "h_seconds_sum{kind=\"a\"} 0\n"
                               "h_seconds_count{kind=\"a\"} 0\n"
                               "h_seconds_bucket{kind=\"x\",le=\"0.125\"} 1\n"
                               "h_seconds_bucket{kind=\"x\",le=\"0.5\"} 2\n"
                               "h_seconds_bucket{kind=\"x\",le=\"1\"} 2\n"
                               "h_seconds_bucket{kind=\"x\",le=\"+Inf\"} 3\n"
                               "h_seconds_sum{kind=\"x\"} 2.375\n"
                               "h_seconds_count{kind=\"x\"} 3\n");
}

TEST(MetricsTest, HistogramWithoutLabelsAndExplicitInfBucket) {
  Registry registry;
  auto& histogram =
      registry.histogram("h", "", {}, {1, std::numeric_limits<double>::infinity()}).get();
  histogram.observe(std::nan(""));
  EXPECT_EQ(histogram.bucketCounts(), (std::vector<std::uint64_t>{0, 1})) << "NaN counts in +Inf";
  EXPECT_EQ(registry.render(), "# HELP h\n"
                               "# TYPE h histogram\n"
                               "h_bucket{le=\"1\"} 0\n"
                               "h_bucket{le=\"+Inf\"} 1\n"
                               "h_sum NaN\n"
                               "h_count 1\n");
}

TEST(MetricsTest, NumbersPrintLikeClientGolang) {
  Registry registry;
  auto& family = registry.gauge("g", "G.", {"n"});
  const std::pair<const char*, double> cases[] = {{"a", 0},
                                                  {"b", 1},
                                                  {"c", 0.005},
                                                  {"d", 123456},
                                                  {"e", 1e6},
                                                  {"f", 1234567},
                                                  {"g", 0.0001},
                                                  {"h", 0.00001},
                                                  {"i", -2.5},
                                                  {"j", 1e21},
                                                  {"k", 0.1 + 0.2},
                                                  {"l", std::numeric_limits<double>::infinity()},
                                                  {"m", -std::numeric_limits<double>::infinity()}};
  for (const auto& [label, value] : cases) {
    family.with({label}).set(value);
  }
  EXPECT_EQ(registry.render(), "# HELP g G.\n"
                               "# TYPE g gauge\n"
                               "g{n=\"a\"} 0\n"
                               "g{n=\"b\"} 1\n"
                               "g{n=\"c\"} 0.005\n"
                               "g{n=\"d\"} 123456\n"
                               "g{n=\"e\"} 1e+06\n"
                               "g{n=\"f\"} 1.234567e+06\n"
                               "g{n=\"g\"} 0.0001\n"
                               "g{n=\"h\"} 1e-05\n"
                               "g{n=\"i\"} -2.5\n"
                               "g{n=\"j\"} 1e+21\n"
                               "g{n=\"k\"} 0.30000000000000004\n"
                               "g{n=\"l\"} +Inf\n"
                               "g{n=\"m\"} -Inf\n");
}

TEST(MetricsTest, SameLabelValuesReturnTheSameSeries) {
  Registry registry;
  auto& family = registry.counter("c_total", "C.", {"a", "b"});
  Counter& first = family.with({"1", "2"});
  first.inc();
  EXPECT_EQ(&family.with({"1", "2"}), &first);
  EXPECT_NE(&family.with({"2", "1"}), &first);
  EXPECT_EQ(family.with({"1", "2"}).value(), 1);
}

TEST(MetricsTest, GaugeGoesBothWaysCounterOnlyUp) {
  Registry registry;
  auto& gauge = registry.gauge("g", "G.").get();
  gauge.inc(3);
  gauge.dec();
  EXPECT_EQ(gauge.value(), 2);
  auto& counter = registry.counter("c_total", "C.").get();
  EXPECT_THROW(counter.inc(-1), std::invalid_argument);
  EXPECT_EQ(counter.value(), 0);
}

TEST(MetricsTest, RejectsInvalidDeclarationsAndUse) {
  Registry registry;
  registry.counter("taken_total", "T.");
  EXPECT_THROW(registry.gauge("taken_total", "again"), std::invalid_argument);
  EXPECT_THROW(registry.counter("", "empty"), std::invalid_argument);
  EXPECT_THROW(registry.counter("1abc", "digit first"), std::invalid_argument);
  EXPECT_THROW(registry.counter("a-b", "dash"), std::invalid_argument);
  EXPECT_THROW(registry.counter("ok_total", "L.", {"bad-label"}), std::invalid_argument);
  EXPECT_THROW(registry.counter("ok_total", "L.", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(registry.counter("ok_total", "L.", {"x", "x"}), std::invalid_argument);
  EXPECT_THROW(registry.histogram("h", "H.", {"le"}), std::invalid_argument);
  EXPECT_THROW(registry.histogram("h", "H.", {}, {1, 1}), std::invalid_argument);
  EXPECT_THROW(registry.histogram("h", "H.", {}, {2, 1}), std::invalid_argument);
  EXPECT_THROW(registry.histogram("h", "H.", {}, {std::nan("")}), std::invalid_argument);
  EXPECT_NO_THROW(registry.counter("ok:colon_total", "colons are allowed in names"));
  auto& family = registry.counter("two_total", "T.", {"a", "b"});
  EXPECT_THROW(family.with({"only one"}), std::invalid_argument);
  EXPECT_THROW(registry.counter("plain_total", "P.").with({"x"}), std::invalid_argument);
}

TEST(MetricsTest, CollectHooksRunBeforeEachRender) {
  Registry registry;
  auto& depth = registry.gauge("depth", "D.").get();
  int length = 0;
  registry.onCollect([&] { depth.set(length); });
  length = 7;
  EXPECT_EQ(registry.render(), "# HELP depth D.\n# TYPE depth gauge\ndepth 7\n");
  length = 3;
  EXPECT_EQ(registry.render(), "# HELP depth D.\n# TYPE depth gauge\ndepth 3\n");
}

TEST(MetricsTest, DefaultBucketsAreControllerRuntimes) {
  const auto& buckets = defaultReconcileBuckets();
  ASSERT_EQ(buckets.size(), 40u);
  EXPECT_EQ(buckets.front(), 0.005);
  EXPECT_EQ(buckets[17], 1.0);
  EXPECT_EQ(buckets.back(), 60);
}

std::string bucketLines(const std::string& name, std::uint64_t count) {
  std::string lines;
  for (const char* le :
       {"0.005", "0.01", "0.025", "0.05", "0.1", "0.15", "0.2", "0.25", "0.3", "0.35", "0.4",
        "0.45",  "0.5",  "0.6",   "0.7",  "0.8", "0.9",  "1",   "1.25", "1.5", "1.75", "2",
        "2.5",   "3",    "3.5",   "4",    "4.5", "5",    "6",   "7",    "8",   "9",    "10",
        "15",    "20",   "25",    "30",   "40",  "50",   "60",  "+Inf"}) {
    lines += name + "_bucket{le=\"" + le + "\"} " + std::to_string(count) + "\n";
  }
  return lines;
}

std::string webhookBucketLines(std::uint64_t count) {
  std::string lines;
  for (const char* le : {"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025",
                         "0.1", "+Inf"}) {
    lines += "csiop_webhook_review_duration_seconds_bucket{le=\"" + std::string(le) + "\"} " +
             std::to_string(count) + "\n";
  }
  return lines;
}

TEST(OperatorMetricsTest, RendersEveryOperatorMetricFromTheStart) {
  Registry registry;
  OperatorMetrics metrics(registry);
  EXPECT_EQ(registry.render(),
            "# HELP csiop_api_mutating_requests_total Writes to the Kubernetes API server (create, "
            "update, patch, apply, delete, deletecollection), whatever their outcome; flat when "
            "nothing changes.\n"
            "# TYPE csiop_api_mutating_requests_total counter\n"
            "csiop_api_mutating_requests_total 0\n"
            "# HELP csiop_driverdeployments DriverDeployment objects known to the operator.\n"
            "# TYPE csiop_driverdeployments gauge\n"
            "csiop_driverdeployments 0\n"
            "# HELP csiop_leader 1 while this replica holds the leader lease, else 0.\n"
            "# TYPE csiop_leader gauge\n"
            "csiop_leader 0\n"
            "# HELP csiop_reconcile_duration_seconds Time spent in one reconciliation of a "
            "DriverDeployment, in seconds.\n"
            "# TYPE csiop_reconcile_duration_seconds histogram\n" +
                bucketLines("csiop_reconcile_duration_seconds", 0) +
                "csiop_reconcile_duration_seconds_sum 0\n"
                "csiop_reconcile_duration_seconds_count 0\n"
                "# HELP csiop_reconcile_total Reconciliations of DriverDeployments, by result.\n"
                "# TYPE csiop_reconcile_total counter\n"
                "csiop_reconcile_total{result=\"error\"} 0\n"
                "csiop_reconcile_total{result=\"requeue\"} 0\n"
                "csiop_reconcile_total{result=\"success\"} 0\n"
                "# HELP csiop_webhook_review_duration_seconds Time to decide one AdmissionReview, "
                "in seconds.\n"
                "# TYPE csiop_webhook_review_duration_seconds histogram\n" +
                webhookBucketLines(0) +
                "csiop_webhook_review_duration_seconds_sum 0\n"
                "csiop_webhook_review_duration_seconds_count 0\n"
                "# HELP csiop_webhook_reviews_total AdmissionReviews answered by the webhook, by "
                "result (rejected: not a usable AdmissionReview).\n"
                "# TYPE csiop_webhook_reviews_total counter\n"
                "csiop_webhook_reviews_total{result=\"allowed\"} 0\n"
                "csiop_webhook_reviews_total{result=\"denied\"} 0\n"
                "csiop_webhook_reviews_total{result=\"rejected\"} 0\n"
                "# HELP csiop_workqueue_depth DriverDeployment keys waiting in the work queue.\n"
                "# TYPE csiop_workqueue_depth gauge\n"
                "csiop_workqueue_depth 0\n");
}

TEST(OperatorMetricsTest, RecordsReconcilesAndApiRequests) {
  Registry registry;
  OperatorMetrics metrics(registry);
  metrics.observeReconcile(ReconcileResult::success, 0.5);
  metrics.observeReconcile(ReconcileResult::error, 0.25);
  metrics.observeReconcile(ReconcileResult::requeue, 100);
  metrics.observeReconcile(ReconcileResult::success, 0.001);
  metrics.observeReview("denied", 0.0003);
  metrics.observeApiRequest("get", 200);
  metrics.observeApiRequest("get", 200);
  metrics.observeApiRequest("list", 200);
  metrics.observeApiRequest("apply", 200);
  metrics.observeApiRequest("patch", 409);
  metrics.observeApiRequest("delete", 0);
  metrics.leader.set(1);
  metrics.driverDeployments.set(2);
  metrics.workqueueDepth.set(1);
  EXPECT_EQ(metrics.reconcileTotal.with({"success"}).value(), 2);
  EXPECT_EQ(metrics.reconcileDuration.count(), 4u);
  EXPECT_DOUBLE_EQ(metrics.reconcileDuration.sum(), 100.751);
  EXPECT_EQ(metrics.apiMutatingRequestsTotal.value(), 3) << "apply, patch, delete";

  const std::string text = registry.render();
  for (const char* line : {"csiop_api_requests_total{code=\"200\",verb=\"get\"} 2\n",
                           "csiop_api_requests_total{code=\"200\",verb=\"list\"} 1\n",
                           "csiop_api_requests_total{code=\"409\",verb=\"patch\"} 1\n",
                           "csiop_api_requests_total{code=\"<error>\",verb=\"delete\"} 1\n",
                           "csiop_api_mutating_requests_total 3\n",
                           "csiop_leader 1\n",
                           "csiop_driverdeployments 2\n",
                           "csiop_workqueue_depth 1\n",
                           "csiop_reconcile_total{result=\"error\"} 1\n",
                           "csiop_reconcile_total{result=\"requeue\"} 1\n",
                           "csiop_reconcile_total{result=\"success\"} 2\n",
                           "csiop_reconcile_duration_seconds_bucket{le=\"0.005\"} 1\n",
                           "csiop_reconcile_duration_seconds_bucket{le=\"0.25\"} 2\n",
                           "csiop_reconcile_duration_seconds_bucket{le=\"0.5\"} 3\n",
                           "csiop_reconcile_duration_seconds_bucket{le=\"60\"} 3\n",
                           "csiop_reconcile_duration_seconds_bucket{le=\"+Inf\"} 4\n",
                           "csiop_reconcile_duration_seconds_count 4\n",
                           "csiop_webhook_reviews_total{result=\"denied\"} 1\n",
                           "csiop_webhook_review_duration_seconds_bucket{le=\"0.00025\"} 0\n",
                           "csiop_webhook_review_duration_seconds_bucket{le=\"0.0005\"} 1\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line;
  }

  // Every line follows the 0.0.4 grammar: comment lines, or a sample.
  const std::regex comment(R"(# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* )"
                           R"((counter|gauge|histogram)))");
  const std::regex sample(
      R"([a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")"
      R"((,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})? \S+)");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(std::regex_match(line, comment) || std::regex_match(line, sample)) << line;
  }
  EXPECT_EQ(text.back(), '\n');
}

TEST(OperatorMetricsTest, MutatingVerbs) {
  for (const char* verb : {"create", "update", "patch", "apply", "delete", "deletecollection"}) {
    EXPECT_TRUE(OperatorMetrics::isMutatingVerb(verb)) << verb;
  }
  for (const char* verb : {"get", "list", "watch", ""}) {
    EXPECT_FALSE(OperatorMetrics::isMutatingVerb(verb)) << verb;
  }
}

} // namespace
} // namespace csiop::runtime
