// The chart's alerts evaluated on a real run: promtool's rule unit tests (`promtool test rules`)
// over the series this suite scraped, once a second, from the operator's /metrics and the API
// server's, while the conditions each alert is about held and while they did not. One operator,
// its webhook called by the API server; three phases:
//   healthy  two DriverDeployments Ready (their drivers registered on kwok's nodes by the
//            registration stand-in): no alert fires;
//   broken   one of them loses its registration (its stand-in stops), its verified rollout then
//            fails the canary's Registered gate, and a volume of its driver fails to mount in a
//            pod; a third DriverDeployment is refused its DaemonSet by a ResourceQuota (the
//            reconciles fail); an invalid DriverDeployment is denied; an unreadable review is
//            sent to the webhook: each alert fires, for what is wrong and nothing else;
//   down     the operator stopped: the API server cannot call the webhook, no replica leads, and
//            the per-driver alerts end with the operator's series.
// The rules are the chart's, rendered by helm with test-sized durations (`for` 5 s where an alert
// has one, a 60 s error window). Each series carries the labels Prometheus gives it: the
// operator's those of the chart's ServiceMonitor (namespace, and the metrics Service as job),
// which the rules select by default; the API server's job "apiserver", as kube-prometheus-stack
// scrapes it. A series that leaves a scrape gets a staleness marker, as in Prometheus
// (metrics_recording.hpp). Also checked: every metric a rule or a dashboard panel reads was
// served in this run. kwok runs no kubelet: the FailedMount Event is written as a kubelet writes
// it (operator_process.hpp). One ordered suite (one ctest test): the cases build on each other.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <csiop/api/yaml.hpp>
#include <csiop/testsupport/metrics_recording.hpp>
#include <csiop/testsupport/promql_metrics.hpp>

#include "harness.hpp"
#include "operator_process.hpp"
#include "registration_stand_in.hpp"

namespace csiop::e2e {
namespace {

using testsupport::ExpectedAlerts;
using testsupport::Labels;
using testsupport::MetricsRecording;
using testsupport::Series;

const std::string kConfig = "csiop-e2e-alerts";
const std::string kLabel = "csiop.dev/e2e-alerts";
// The chart's webhook name, which CSIOperatorWebhookUnreachable reads in the API server's metrics.
const std::string kWebhook = "validate.driverdeployments.csiop.dev";
// The release the rules are rendered for, and the target labels its ServiceMonitor gives.
const std::string kRelease = "csiop";
const std::string kReleaseNamespace = "csiop-system";
const Labels kOperatorTarget = {{"namespace", kReleaseNamespace},
                                {"job", "csiop-csi-operator-metrics"}};
const Labels kApiServerTarget = {{"job", "apiserver"}};
const std::string kRejections = "apiserver_admission_webhook_rejection_count";

const std::string kHealthy = "alerts-ok";
const std::string kBroken = "alerts-broken";
const std::string kRefused = "alerts-refused";
const std::string kApps = "alerts-apps";
const std::string kRefusedNamespace = "csi-alerts-refused";
const std::string kVolume = "pv-alerts-broken";
// A spec only the webhook refuses (the schema allows it): a flag the registrar does not have.
const std::string kOldFlag = "  node: {registrar: {args: [--v=2, --logtostderr]}}\n";

std::string driverDeployment(const std::string& name, const std::string& extra = "") {
  return "apiVersion: csiop.dev/v1alpha1\n"
         "kind: DriverDeployment\n"
         "metadata:\n"
         "  name: " +
         name + "\n  labels: {" + kLabel +
         ": \"true\"}\n"
         "spec:\n"
         "  driverName: " +
         name + ".csi.example.com\n  namespace: csi-" + name +
         "\n"
         "  driver: {image: registry.k8s.io/sig-storage/hostpathplugin:v1.17.0}\n" +
         extra;
}

// The lines of the API server's /metrics that are this webhook's rejections (2 MB a scrape,
// most of it irrelevant here).
std::string webhookRejections(const std::string& metrics) {
  std::string out;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(kRejections + "{", 0) == 0 &&
        line.find("name=\"" + kWebhook + "\"") != std::string::npos) {
      out += line + "\n";
    }
  }
  return out;
}

// Scrapes once a second, from its construction to its destruction: the operator set with
// scrape() (none, or one that does not answer: the scrape fails and its series go stale) and
// the API server. Keeps the operator's csiop_* series (those of a DriverDeployment only for
// `driverDeployments`: other suites' may linger) and this webhook's rejections.
class Recorder {
public:
  explicit Recorder(std::set<std::string> driverDeployments)
      : ours_(std::move(driverDeployments)),
        recording_({}, [this](const Series& s) { return keep(s); }),
        thread_([this](std::stop_token stop) { loop(stop); }) {}

  void scrape(const OperatorProcess* op) {
    std::lock_guard lock(mutex_);
    op_ = op;
  }
  // The steps recorded so far; the last one was at (steps() - 1) s.
  int steps() const {
    std::lock_guard lock(mutex_);
    return recording_.steps();
  }
  // Waits until `n` more steps are recorded; the last one's time, as promtool's eval_time.
  std::string waitSteps(int n) {
    std::unique_lock lock(mutex_);
    const int until = recording_.steps() + n;
    stepped_.wait(lock, [&] { return recording_.steps() >= until || !error_.empty(); });
    return std::to_string(recording_.steps() - 1) + "s";
  }
  MetricsRecording recording() const {
    std::lock_guard lock(mutex_);
    return recording_;
  }
  std::string error() const {
    std::lock_guard lock(mutex_);
    return error_;
  }

private:
  bool keep(const Series& s) const {
    if (s.name.rfind("csiop_", 0) == 0) {
      const auto dd = s.labels.find("driverdeployment");
      return dd == s.labels.end() || ours_.contains(dd->second);
    }
    return s.name == kRejections;
  }

  void loop(const std::stop_token& stop) {
    auto next = std::chrono::steady_clock::now();
    while (!stop.stop_requested()) {
      const std::string apiServer = webhookRejections(kubectl({"get", "--raw", "/metrics"}).out);
      {
        std::lock_guard lock(mutex_);
        try {
          recording_.add(op_ != nullptr ? op_->metrics() : "", false, kOperatorTarget);
          recording_.add(apiServer, true, kApiServerTarget);
        } catch (const std::exception& e) {
          error_ = e.what();
          return;
        }
      }
      stepped_.notify_all();
      next = std::max(next + 1s, std::chrono::steady_clock::now());
      std::this_thread::sleep_until(next);
    }
  }

  const std::set<std::string> ours_;
  mutable std::mutex mutex_;
  std::condition_variable stepped_;
  const OperatorProcess* op_ = nullptr;
  MetricsRecording recording_;
  std::string error_;
  std::jthread thread_; // last: it starts once the rest is there
};

class Alerts : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    applyCrds();
    certDir = artifactDirectory("alerts-certs");
    ASSERT_TRUE(issueServingCertificate(certDir, "alerts-ca"));
    port = freeLoopbackPort();
    op = std::make_unique<OperatorProcess>(
        "alerts-operator.log",
        std::vector<std::string>{"--webhook-port", std::to_string(port), "--webhook-host",
                                 "127.0.0.1", "--webhook-cert-dir", certDir.string()});
    ASSERT_TRUE(op->waitReady(60s));
    registerLocalWebhook(kConfig, port, readFile(certDir / "alerts-ca.crt"), kLabel,
                         {"CREATE", "UPDATE"}, "Fail", kWebhook);
    std::vector<std::string> nodes;
    const Json listed = kubectlJson({"get", "nodes", "-l", "type=kwok"});
    for (const Json& node : listed["items"]) {
      nodes.push_back(node["metadata"]["name"]);
    }
    ASSERT_GE(nodes.size(), 2u) << "a canary and another node";
    healthyRegistration.emplace(nodes, std::set<std::string>{kHealthy});
    brokenRegistration.emplace(nodes, std::set<std::string>{kBroken});
  }

  static void TearDownTestSuite() {
    recorder.reset();
    kubectl({"delete", "validatingwebhookconfiguration", kConfig, "--ignore-not-found"});
    if (!op) { // the down phase stopped it: one to take the finalizers off
      op = std::make_unique<OperatorProcess>("alerts-operator-teardown.log");
      op->waitReady(60s);
    }
    kubectl({"delete", "namespace", kApps, "--ignore-not-found", "--wait=true", "--timeout=60s"});
    kubectl({"delete", "pv", kVolume, "--ignore-not-found"});
    for (const std::string& dd : {kHealthy, kBroken, kRefused}) {
      deleteDd(dd);
    }
    kubectl({"delete", "namespace", "csi-" + kHealthy, "csi-" + kBroken, kRefusedNamespace,
             "--ignore-not-found", "--wait=false"});
    op->stop();
    op.reset();
    healthyRegistration.reset();
    brokenRegistration.reset();
  }

  void TearDown() override {
    if (HasFailure() && op) {
      std::cerr << "operator log:\n" << op->log() << "\n";
    }
  }

  static void expect(const std::string& evalTime, const std::string& alert,
                     std::vector<Labels> firing = {}) {
    expected.push_back({evalTime, alert, std::move(firing)});
  }
  static Labels operatorAlert(const std::string& severity) {
    Labels labels = kOperatorTarget;
    labels["severity"] = severity;
    return labels;
  }
  static Labels driverAlert(const std::string& dd, const std::string& reason = "") {
    Labels labels = {{"driverdeployment", dd}, {"severity", "warning"}};
    if (!reason.empty()) {
      labels["reason"] = reason;
    }
    return labels;
  }

  static inline std::filesystem::path certDir;
  static inline int port = 0;
  static inline std::unique_ptr<OperatorProcess> op;
  static inline std::optional<RegistrationStandIn> healthyRegistration;
  static inline std::optional<RegistrationStandIn> brokenRegistration;
  static inline std::unique_ptr<Recorder> recorder;
  static inline std::vector<ExpectedAlerts> expected;
};

TEST_F(Alerts, SilentWhileEveryDriverDeploymentIsHealthy) {
  // The webhook in effect (the API server reads its configuration from a watch).
  ASSERT_TRUE(waitFor("the webhook answers", 30s, [&](std::string& seen) {
    const auto r =
        kubectl({"apply", "--dry-run=server", "-f", "-"}, driverDeployment(kHealthy, kOldFlag));
    seen = r.out + r.err;
    return seen.find("admission webhook \"" + kWebhook + "\" denied") != std::string::npos;
  }));
  const std::string verified = "  rollout: {type: Verified, soakSeconds: 0, prePullImages: false,"
                               " gateTimeoutSeconds: 5}\n";
  for (const std::string& dd : {kHealthy, kBroken}) {
    const auto r = kubectl({"apply", "-f", "-"}, driverDeployment(dd, verified));
    ASSERT_TRUE(r.ok()) << r;
  }
  for (const std::string& dd : {kHealthy, kBroken}) {
    ASSERT_TRUE(waitFor(dd + " is Ready", 60s, [&](std::string& seen) {
      seen = ddStatus(dd);
      return ddCondition(dd, "Ready") == "True";
    }));
  }
  recorder = std::make_unique<Recorder>(std::set<std::string>{kHealthy, kBroken, kRefused});
  recorder->scrape(op.get());
  const std::string at = recorder->waitSteps(12);
  ASSERT_EQ(recorder->error(), "");
  for (const char* alert :
       {"CSIDriverDeploymentNotReady", "CSIDriverNodesNotRegistered", "CSIDriverVolumesFailing",
        "CSIDriverRolloutFailed", "CSIOperatorReconcileErrors", "CSIOperatorWebhookDenials",
        "CSIOperatorWebhookErrors", "CSIOperatorWebhookUnreachable", "CSIOperatorNoLeader"}) {
    expect(at, alert);
  }
}

TEST_F(Alerts, EachAlertFiresForWhatIsWrongAndNothingElse) {
  ASSERT_TRUE(recorder);
  // Registration lost, then a rollout whose canary is never registered again (its pods now
  // select the deprecated beta OS label too: the API server warns, csiop_api_warnings_total).
  brokenRegistration.reset();
  auto r = kubectl({"patch", "dd", kBroken, "--type=merge", "-p",
                    R"({"spec": {"driver": {"args": ["--v=4"]},
                                 "node": {"nodeSelector": {"beta.kubernetes.io/os": "linux"}}}})"});
  ASSERT_TRUE(r.ok()) << r;
  // A namespace whose quota allows no DaemonSet.
  r = kubectl({"apply", "-f", "-"},
              "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + kRefusedNamespace +
                  "}\n---\n"
                  "apiVersion: v1\nkind: ResourceQuota\n"
                  "metadata: {name: no-daemonsets, namespace: " +
                  kRefusedNamespace +
                  "}\n"
                  "spec: {hard: {count/daemonsets.apps: \"0\"}}\n");
  ASSERT_TRUE(r.ok()) << r;
  r = kubectl({"apply", "-f", "-"}, driverDeployment(kRefused, "  createNamespace: false\n"));
  ASSERT_TRUE(r.ok()) << r;
  // A volume of the broken driver that fails to mount in a pod that waits for it.
  ASSERT_TRUE(kubectl({"create", "namespace", kApps}).ok());
  r = kubectl({"apply", "-f", "-"},
              "apiVersion: v1\nkind: PersistentVolume\n"
              "metadata: {name: " +
                  kVolume +
                  "}\n"
                  "spec:\n  capacity: {storage: 1Gi}\n"
                  "  accessModes: [ReadWriteOnce]\n"
                  "  persistentVolumeReclaimPolicy: Retain\n"
                  "  csi: {driver: " +
                  kBroken +
                  ".csi.example.com, volumeHandle: h1}\n"
                  "---\napiVersion: v1\nkind: Pod\n"
                  "metadata: {name: waits, namespace: " +
                  kApps +
                  "}\n"
                  "spec:\n  nodeSelector: {csiop.dev/no-such-node: \"true\"}\n"
                  "  containers: [{name: app, image: registry.example.com/app:v1}]\n"
                  "  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]\n");
  ASSERT_TRUE(r.ok()) << r;
  ASSERT_TRUE(waitFor("the pod exists", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "pod", "waits", "-n", kApps, "-o", "name"}).out;
    return !seen.empty();
  }));
  r = kubectl({"apply", "-f", "-"},
              failedMount(kApps, "waits", "waits.1", kVolume,
                          "rpc error: code = Internal desc = mount failed: exit status 32"));
  ASSERT_TRUE(r.ok()) << r;
  // A DriverDeployment the webhook denies, and a review it cannot read.
  r = kubectl({"apply", "-f", "-"}, driverDeployment("alerts-denied", kOldFlag));
  EXPECT_NE(r.err.find("admission webhook \"" + kWebhook + "\" denied"), std::string::npos) << r;
  r = run({"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert",
           (certDir / "alerts-ca.crt").string(), "-H", "Content-Type: application/json", "--data",
           "not a review",
           "https://127.0.0.1:" + std::to_string(port) + "/validate-driverdeployment"});
  EXPECT_EQ(r.out.substr(0, 1), "4") << r;

  EXPECT_TRUE(waitFor("each condition holds", 90s, [&](std::string& seen) {
    seen = ddStatus(kBroken) + "\n" + ddStatus(kRefused);
    return ddCondition(kBroken, "Ready") == "False" &&
           ddCondition(kBroken, "RolloutFailed") == "True" &&
           ddCondition(kBroken, "VolumesFailing") == "True" &&
           op->metric("csiop_driver_nodes_unregistered{driverdeployment=\"" + kBroken +
                      "\",reason=\"NotRegistered\"}") > 0 &&
           ddCondition(kRefused, "Ready") == "False" &&
           op->metric("csiop_reconcile_total{result=\"error\"}") > 0;
  }));
  const std::string at = recorder->waitSteps(8);
  ASSERT_EQ(recorder->error(), "");
  EXPECT_EQ(ddCondition(kHealthy, "Ready"), "True") << ddStatus(kHealthy);
  expect(at, "CSIDriverDeploymentNotReady", {driverAlert(kBroken), driverAlert(kRefused)});
  expect(at, "CSIDriverNodesNotRegistered", {driverAlert(kBroken, "NotRegistered")});
  expect(at, "CSIDriverVolumesFailing", {driverAlert(kBroken, "MountFailed")});
  expect(at, "CSIDriverRolloutFailed", {driverAlert(kBroken)});
  expect(at, "CSIOperatorReconcileErrors", {operatorAlert("warning")});
  expect(at, "CSIOperatorWebhookDenials", {operatorAlert("info")});
  expect(at, "CSIOperatorWebhookErrors", {operatorAlert("warning")});
  expect(at, "CSIOperatorWebhookUnreachable");
  expect(at, "CSIOperatorNoLeader");
}

TEST_F(Alerts, WithTheOperatorDownTheWebhookAndLeaderAlertsFire) {
  ASSERT_TRUE(recorder);
  ASSERT_EQ(op->stop(), 0);
  // Changes refused while no replica answers, as a pipeline retries them.
  for (int i = 0; i < 5; ++i) {
    const auto r = kubectl({"apply", "-f", "-"}, driverDeployment("alerts-late"));
    EXPECT_NE(r.err.find("failed calling webhook \"" + kWebhook + "\""), std::string::npos) << r;
    recorder->waitSteps(1);
  }
  const std::string at = recorder->waitSteps(7);
  recorder->scrape(nullptr);
  op.reset();
  ASSERT_EQ(recorder->error(), "");
  expect(at, "CSIOperatorWebhookUnreachable", {{{"name", kWebhook}, {"severity", "critical"}}});
  expect(at, "CSIOperatorNoLeader", {operatorAlert("critical")});
  for (const char* alert : {"CSIDriverDeploymentNotReady", "CSIDriverNodesNotRegistered",
                            "CSIDriverVolumesFailing", "CSIDriverRolloutFailed"}) {
    expect(at, alert);
  }
}

// The chart's PrometheusRule and dashboard for release kRelease, rendered by helm.
std::vector<Json> chartObjects() {
  const std::filesystem::path helm =
      cluster().binDir.empty() ? std::filesystem::path("helm") : cluster().binDir / "helm";
  std::vector<std::string> args = {helm.string(), "template",
                                   kRelease,      (sourceDir() / "charts/csi-operator").string(),
                                   "--namespace", kReleaseNamespace,
                                   "--set",       "metrics.prometheusRule.enabled=true",
                                   "--set",       "metrics.prometheusRule.force=true",
                                   "--set",       "metrics.grafanaDashboard.enabled=true",
                                   "--set",       "metrics.prometheusRule.errorWindow=60s"};
  for (const char* alert :
       {"CSIDriverDeploymentNotReady", "CSIDriverNodesNotRegistered", "CSIDriverVolumesFailing",
        "CSIOperatorReconcileErrors", "CSIOperatorNoLeader"}) {
    args.push_back("--set");
    args.push_back(std::string("metrics.prometheusRule.alerts.") + alert + ".for=5s");
  }
  const RunResult r = run(args);
  EXPECT_TRUE(r.ok()) << r;
  std::vector<Json> out;
  for (Json& o : api::parseYaml(r.out)) {
    if (o.is_object() && (o["kind"] == "PrometheusRule" || o["kind"] == "ConfigMap")) {
      out.push_back(std::move(o));
    }
  }
  return out;
}

const Json& ofKind(const std::vector<Json>& objects, const std::string& kind) {
  static const Json none;
  for (const Json& o : objects) {
    if (o["kind"] == kind && (kind != "ConfigMap" || o["data"].contains("csi-operator.json"))) {
      return o;
    }
  }
  return none;
}

TEST_F(Alerts, PromtoolFindsEachAlertWhereItsConditionHeldAndNowhereElse) {
  ASSERT_TRUE(recorder);
  const auto objects = chartObjects();
  const Json& rule = ofKind(objects, "PrometheusRule");
  ASSERT_TRUE(rule.is_object());
  // Every alert is checked where it fires and where it does not.
  for (const std::string& alert : testsupport::alertNames(rule)) {
    int firing = 0;
    int silent = 0;
    for (const ExpectedAlerts& e : expected) {
      if (e.alertname == alert) {
        (e.firing.empty() ? silent : firing) += 1;
      }
    }
    EXPECT_GT(firing, 0) << alert;
    EXPECT_GT(silent, 0) << alert;
  }
  const auto rules = writeArtifact("alerts-rules.json", testsupport::promtoolRules(rule));
  const auto test =
      writeArtifact("alerts-promtool-test.json",
                    testsupport::promtoolTest(rules.string(), recorder->recording(), expected));
  // The pinned promtool (built on first use; scripts/test builds it before the tests run).
  const RunResult built = run({(sourceDir() / "test/cluster/promtool").string()},
                              {.timeout = std::chrono::minutes(20)});
  ASSERT_TRUE(built.ok()) << built;
  const std::string path = trimmed(built.out);
  const std::string promtool = path.substr(path.rfind('\n') + 1);
  const RunResult r = run({promtool, "test", "rules", test.string()});
  EXPECT_TRUE(r.ok()) << r << "\nthe test: " << test;
  EXPECT_NE(r.out.find("SUCCESS"), std::string::npos) << r;
}

TEST_F(Alerts, EveryMetricARuleOrAPanelReadsWasServed) {
  ASSERT_TRUE(recorder);
  const auto objects = chartObjects();
  const Json& rule = ofKind(objects, "PrometheusRule");
  const Json& dashboard = ofKind(objects, "ConfigMap");
  ASSERT_TRUE(rule.is_object() && dashboard.is_object());
  std::set<std::string> read = testsupport::metricsReadByRules(rule);
  read.merge(testsupport::metricsReadByPanels(
      Json::parse(dashboard["data"]["csi-operator.json"].get<std::string>())));
  std::set<std::string> served;
  const MetricsRecording recording = recorder->recording();
  for (const auto& [series, values] : recording.series()) {
    served.merge(testsupport::metricsIn(series.name));
  }
  for (const std::string& metric : read) {
    EXPECT_TRUE(served.contains(metric)) << metric << " was not served";
  }
}

} // namespace
} // namespace csiop::e2e
