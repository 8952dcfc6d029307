#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include <csiop/runtime/operator_metrics.hpp>
#include <csiop/runtime/probes.hpp>

namespace csiop::runtime {
namespace {

HttpRequest get(std::string target) {
  HttpRequest request;
  request.method = "GET";
  request.target = target;
  const auto question = target.find('?');
  request.path = target.substr(0, question);
  request.query = question == std::string::npos ? "" : target.substr(question + 1);
  return request;
}

TEST(HealthChecksTest, NoChecksMeansOk) {
  const HealthChecks healthz("healthz");
  const auto response = healthz.serve(get("/healthz"));
  EXPECT_EQ(response.status, 200u);
  EXPECT_EQ(response.body, "ok");
}

TEST(HealthChecksTest, FailingCheckGives503WithTheReason) {
  HealthChecks readyz("readyz");
  bool synced = false;
  readyz.add("ping", [] { return CheckResult::passed(); });
  readyz.add("informers", [&] {
    return synced ? CheckResult::passed() : CheckResult::failed("caches not synced yet");
  });
  auto response = readyz.serve(get("/readyz"));
  EXPECT_EQ(response.status, 503u);
  EXPECT_EQ(response.body, "[+]ping ok\n"
                           "[-]informers failed: caches not synced yet\n"
                           "readyz check failed\n");
  synced = true;
  response = readyz.serve(get("/readyz"));
  EXPECT_EQ(response.status, 200u);
  EXPECT_EQ(response.body, "ok");
  response = readyz.serve(get("/readyz?verbose"));
  EXPECT_EQ(response.status, 200u);
  EXPECT_EQ(response.body, "[+]ping ok\n[+]informers ok\nreadyz check passed\n");
}

TEST(HealthChecksTest, ThrowingCheckFails) {
  HealthChecks healthz("healthz");
  healthz.add("broken", []() -> CheckResult { throw std::runtime_error("boom"); });
  const auto response = healthz.serve(get("/healthz"));
  EXPECT_EQ(response.status, 503u);
  EXPECT_EQ(response.body, "[-]broken failed: boom\nhealthz check failed\n");
}

TEST(MetricsHandlerTest, ServesTheOperatorMetricsAsPrometheusText) {
  OperatorMetrics metrics;
  metrics.setWorkqueueDepth(3);
  const auto response = metricsHandler(metrics)(get("/metrics"));
  EXPECT_EQ(response.status, 200u);
  EXPECT_EQ(response.contentType, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(response.body, metrics.exposition());
  EXPECT_NE(response.body.find("\ncsiop_workqueue_depth 3\n"), std::string::npos) << response.body;
}

} // namespace
} // namespace csiop::runtime
