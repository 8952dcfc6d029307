#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <csiop/runtime/operator_metrics.hpp>

namespace csiop::runtime {
namespace {

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

// The names, types, labels, help texts and buckets docs/reference/metrics.md documents, families
// sorted by name and series by their labels, every one without labels of its own there from
// the start.
TEST(OperatorMetricsTest, ExposesEveryOperatorMetricFromTheStart) {
  const OperatorMetrics metrics;
  EXPECT_EQ(metrics.exposition(),
            "# HELP csiop_driverdeployments DriverDeployment objects known to the operator.\n"
            "# TYPE csiop_driverdeployments gauge\n"
            "csiop_driverdeployments 0\n"
            "# HELP csiop_leader 1 while this replica holds the leader lease, else 0.\n"
            "# TYPE csiop_leader gauge\n"
            "csiop_leader 0\n"
            "# HELP csiop_reconcile_duration_seconds Time spent in one reconciliation of a "
            "DriverDeployment, in seconds.\n"
            "# TYPE csiop_reconcile_duration_seconds histogram\n"
            "csiop_reconcile_duration_seconds_count 0\n"
            "csiop_reconcile_duration_seconds_sum 0\n" +
                bucketLines("csiop_reconcile_duration_seconds", 0) +
                "# HELP csiop_reconcile_total Reconciliations of DriverDeployments, by result.\n"
                "# TYPE csiop_reconcile_total counter\n"
                "csiop_reconcile_total{result=\"error\"} 0\n"
                "csiop_reconcile_total{result=\"requeue\"} 0\n"
                "csiop_reconcile_total{result=\"success\"} 0\n"
                "# HELP csiop_webhook_review_duration_seconds Time to decide one AdmissionReview, "
                "in seconds.\n"
                "# TYPE csiop_webhook_review_duration_seconds histogram\n"
                "csiop_webhook_review_duration_seconds_count 0\n"
                "csiop_webhook_review_duration_seconds_sum 0\n" +
                webhookBucketLines(0) +
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

TEST(OperatorMetricsTest, RecordsReconcilesReviewsAndApiRequests) {
  OperatorMetrics metrics;
  metrics.observeReconcile(ReconcileResult::Outcome::Done, 0.5);
  metrics.observeReconcile(ReconcileResult::Outcome::Error, 0.25);
  metrics.observeReconcile(ReconcileResult::Outcome::Requeue, 100);
  metrics.observeReconcile(ReconcileResult::Outcome::Done, 0.001);
  metrics.observeReview("denied", 0.0003);
  metrics.observeApiRequest("get", "pods", 200);
  metrics.observeApiRequest("get", "pods", 200);
  metrics.observeApiRequest("list", "nodes", 200);
  metrics.observeApiRequest("apply", "daemonsets", 200);
  metrics.observeApiRequest("patch", "daemonsets", 409);
  metrics.observeApiRequest("delete", "pods", 0);
  metrics.observeApiRequest("create", "subjectaccessreviews", 201); // a question, not a write
  metrics.setLeader(true);
  metrics.setDriverDeployments(2);
  metrics.setWorkqueueDepth(1);
  metrics.setCache("pods", 5100, 2'500'000);

  const std::string text = metrics.exposition();
  EXPECT_EQ(text.find("resource=\"subjectaccessreviews\""), std::string::npos) << text;
  for (const char* line : {"csiop_api_requests_total{code=\"200\",verb=\"get\"} 2\n",
                           "csiop_api_requests_total{code=\"200\",verb=\"list\"} 1\n",
                           "csiop_api_requests_total{code=\"409\",verb=\"patch\"} 1\n",
                           "csiop_api_requests_total{code=\"<error>\",verb=\"delete\"} 1\n",
                           "csiop_api_mutating_requests_total{resource=\"daemonsets\"} 2\n",
                           "csiop_api_mutating_requests_total{resource=\"pods\"} 1\n",
                           "csiop_api_requests_total{code=\"201\",verb=\"create\"} 1\n",
                           "csiop_leader 1\n",
                           "csiop_driverdeployments 2\n",
                           "csiop_workqueue_depth 1\n",
                           "csiop_cache_objects{resource=\"pods\"} 5100\n",
                           "csiop_cache_heap_bytes{resource=\"pods\"} 2500000\n",
                           "csiop_reconcile_total{result=\"error\"} 1\n",
                           "csiop_reconcile_total{result=\"requeue\"} 1\n",
                           "csiop_reconcile_total{result=\"success\"} 2\n",
                           "csiop_reconcile_duration_seconds_bucket{le=\"0.005\"} 1\n",
                           "csiop_reconcile_duration_seconds_bucket{le=\"0.25\"} 2\n",
                           "csiop_reconcile_duration_seconds_bucket{le=\"0.5\"} 3\n",
                           "csiop_reconcile_duration_seconds_bucket{le=\"60\"} 3\n",
                           "csiop_reconcile_duration_seconds_bucket{le=\"+Inf\"} 4\n",
                           "csiop_reconcile_duration_seconds_sum 100.751\n",
                           "csiop_reconcile_duration_seconds_count 4\n",
                           "csiop_webhook_reviews_total{result=\"denied\"} 1\n",
                           "csiop_webhook_review_duration_seconds_bucket{le=\"0.00025\"} 0\n",
                           "csiop_webhook_review_duration_seconds_bucket{le=\"0.0005\"} 1\n",
                           "csiop_webhook_review_duration_seconds_count 1\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line;
  }
  metrics.setLeader(false);
  EXPECT_NE(metrics.exposition().find("\ncsiop_leader 0\n"), std::string::npos);

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

// docs/reference/metrics.md has a row for every family served, with its type.
// One series per DriverDeployment and reason as of the last call; those no longer there are gone.
TEST(OperatorMetricsTest, UnregisteredNodesReplaceTheirSeries) {
  OperatorMetrics metrics;
  metrics.setUnregisteredNodes(
      {{"a", {{"NotRegistered", 2}, {"NoCSINode", 1}}}, {"b", {{"RegistrarRestarting", 1}}}});
  const std::string first = metrics.exposition();
  EXPECT_NE(
      first.find(
          "# TYPE csiop_driver_nodes_unregistered gauge\n"
          "csiop_driver_nodes_unregistered{driverdeployment=\"a\",reason=\"NoCSINode\"} 1\n"
          "csiop_driver_nodes_unregistered{driverdeployment=\"a\",reason=\"NotRegistered\"} 2\n"
          "csiop_driver_nodes_unregistered{driverdeployment=\"b\",reason=\"RegistrarRestarting\"} "
          "1\n"),
      std::string::npos)
      << first;
  metrics.setUnregisteredNodes({{"a", {{"NotRegistered", 1}}}, {"b", {}}});
  const std::string second = metrics.exposition();
  EXPECT_NE(
      second.find(
          "csiop_driver_nodes_unregistered{driverdeployment=\"a\",reason=\"NotRegistered\"} 1\n"),
      std::string::npos)
      << second;
  EXPECT_EQ(second.find("NoCSINode"), std::string::npos) << second;
  EXPECT_EQ(second.find("RegistrarRestarting"), std::string::npos) << second;
  metrics.setUnregisteredNodes({});
  EXPECT_EQ(metrics.exposition().find("csiop_driver_nodes_unregistered{"), std::string::npos);
}

TEST(OperatorMetricsTest, VolumeFailuresReplaceTheirSeries) {
  OperatorMetrics metrics;
  metrics.setVolumeFailures({{"a", {{"ProvisioningFailed", 2}, {"MountFailed", 1}}}});
  const std::string first = metrics.exposition();
  EXPECT_NE(
      first.find("# TYPE csiop_driver_volume_failures gauge\n"
                 "csiop_driver_volume_failures{driverdeployment=\"a\",reason=\"MountFailed\"} "
                 "1\n"
                 "csiop_driver_volume_failures{driverdeployment=\"a\",reason="
                 "\"ProvisioningFailed\"} 2\n"),
      std::string::npos)
      << first;
  metrics.setVolumeFailures({{"a", {{"MountFailed", 1}}}});
  EXPECT_EQ(metrics.exposition().find("reason=\"ProvisioningFailed\""), std::string::npos);
  // The two families' series are replaced each on its own.
  metrics.setUnregisteredNodes({{"a", {{"NotRegistered", 1}}}});
  metrics.setVolumeFailures({});
  const std::string last = metrics.exposition();
  EXPECT_EQ(last.find("csiop_driver_volume_failures{"), std::string::npos) << last;
  EXPECT_NE(last.find("csiop_driver_nodes_unregistered{"), std::string::npos) << last;
}

TEST(OperatorMetricsTest, EachConditionIsOneForItsStatusAndZeroForTheOthers) {
  OperatorMetrics metrics;
  metrics.setConditions({{"a", {{"Ready", "False"}, {"RolloutFailed", "True"}}}});
  const std::string first = metrics.exposition();
  for (
      const char* series : {
          R"(csiop_driverdeployment_status_condition{condition="Ready",driverdeployment="a",status="False"} 1)",
          R"(csiop_driverdeployment_status_condition{condition="Ready",driverdeployment="a",status="True"} 0)",
          R"(csiop_driverdeployment_status_condition{condition="Ready",driverdeployment="a",status="Unknown"} 0)",
          R"(csiop_driverdeployment_status_condition{condition="RolloutFailed",driverdeployment="a",status="True"} 1)",
      }) {
    EXPECT_NE(first.find(std::string(series) + "\n"), std::string::npos) << series << "\n" << first;
  }
  // A DriverDeployment gone, or a condition no longer set: its series go.
  metrics.setConditions({{"b", {{"Ready", "True"}}}});
  const std::string last = metrics.exposition();
  EXPECT_EQ(last.find("driverdeployment=\"a\""), std::string::npos) << last;
  EXPECT_NE(
      last.find(
          R"(csiop_driverdeployment_status_condition{condition="Ready",driverdeployment="b",status="True"} 1)"),
      std::string::npos)
      << last;
}

TEST(Docs, MetricsReferenceListsEveryFamily) {
  std::ifstream in(std::string(CSIOP_SOURCE_DIR) + "/docs/reference/metrics.md");
  ASSERT_TRUE(in) << "docs/reference/metrics.md is missing";
  const std::string page{std::istreambuf_iterator<char>(in), {}};
  OperatorMetrics metrics;
  metrics.observeApiRequest("get", "pods", 200); // the families whose series come with labels
  metrics.observeApiRequest("apply", "pods", 200);
  metrics.observeApiWarning("daemonsets");
  metrics.setCache("pods", 1, 1024);
  metrics.setUnregisteredNodes({{"hostpath", {{"NotRegistered", 1}}}});
  metrics.setVolumeFailures({{"hostpath", {{"MountFailed", 1}}}});
  metrics.setConditions({{"hostpath", {{"Ready", "True"}}}});
  std::istringstream exposition(metrics.exposition());
  int families = 0;
  for (std::string line; std::getline(exposition, line);) {
    std::smatch type;
    if (!std::regex_match(line, type, std::regex(R"(# TYPE (\S+) (\S+))"))) {
      continue;
    }
    ++families;
    const std::string row = "| `" + type[1].str() + "` | " + type[2].str() + " |";
    EXPECT_NE(page.find(row), std::string::npos) << "no row " << row;
  }
  EXPECT_EQ(families, 15);
}

} // namespace
} // namespace csiop::runtime
