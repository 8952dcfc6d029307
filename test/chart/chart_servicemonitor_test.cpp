// The chart's prometheus-operator ServiceMonitor: off by default; rendered only where the
// cluster serves its API (helm's capabilities: --api-versions here) or when forced; it selects
// the metrics Service, which comes with it, and no other; NOTES.txt says when it was skipped;
// the values schema refuses what prometheus-operator would refuse.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <csiop/api/yaml.hpp>

#include "helm_template.hpp"

namespace csiop {
namespace {

using api::Json;

const std::string kApi = "--api-versions monitoring.coreos.com/v1/ServiceMonitor";
const std::string kEnabled = "--set metrics.serviceMonitor.enabled=true";

std::vector<Json> ofKind(const std::vector<Json>& objects, const std::string& kind) {
  std::vector<Json> found;
  for (const Json& o : objects) {
    if (o["kind"] == kind) {
      found.push_back(o);
    }
  }
  return found;
}

const Json* named(const std::vector<Json>& objects, const std::string& kind,
                  const std::string& name) {
  for (const Json& o : objects) {
    if (o["kind"] == kind && o["metadata"]["name"] == name) {
      return &o;
    }
  }
  return nullptr;
}

const std::string kMetricsService = "csiop-csi-operator-metrics";

// The Services of the release that a ServiceMonitor's selector picks (in the namespaces of its
// namespaceSelector).
std::vector<std::string> selectedServices(const Json& monitor, const std::vector<Json>& objects) {
  std::vector<std::string> names;
  const Json& matchNames = monitor["spec"]["namespaceSelector"]["matchNames"];
  for (const Json& service : ofKind(objects, "Service")) {
    bool inNamespace = false;
    for (const Json& ns : matchNames) {
      inNamespace = inNamespace || ns == service["metadata"]["namespace"];
    }
    bool matches = inNamespace;
    for (const auto& [key, value] : monitor["spec"]["selector"]["matchLabels"].items()) {
      const Json& labels = service["metadata"]["labels"];
      matches = matches && labels.contains(key) && labels[key] == value;
    }
    if (matches) {
      names.push_back(service["metadata"]["name"]);
    }
  }
  return names;
}

TEST(ChartServiceMonitor, OffByDefault) {
  for (const std::string& flags : {std::string(), kApi}) {
    const auto chart = test::helmTemplate(flags);
    EXPECT_TRUE(ofKind(chart, "ServiceMonitor").empty()) << flags;
    EXPECT_EQ(named(chart, "Service", kMetricsService), nullptr) << flags;
  }
  EXPECT_EQ(test::helmNotes(kApi).find("ServiceMonitor"), std::string::npos);
}

TEST(ChartServiceMonitor, SelectsTheMetricsServiceWhichComesWithIt) {
  const auto chart = test::helmTemplate(kEnabled + " " + kApi);
  const auto monitors = ofKind(chart, "ServiceMonitor");
  ASSERT_EQ(monitors.size(), 1u);
  const Json& monitor = monitors[0];
  EXPECT_EQ(monitor["apiVersion"], "monitoring.coreos.com/v1");
  EXPECT_EQ(monitor["metadata"]["name"], "csiop-csi-operator");
  EXPECT_EQ(monitor["metadata"]["namespace"], test::kNamespace);

  // metrics.service.enabled is false: the ServiceMonitor brings its Service, and selects it
  // alone (not the webhook's Service, which has the same name and instance labels).
  EXPECT_EQ(selectedServices(monitor, chart), std::vector<std::string>{kMetricsService});
  ASSERT_NE(named(chart, "Service", "csiop-csi-operator-webhook"), nullptr);

  // Its endpoint is the Service's port named metrics, which is the container's metrics port.
  const Json& endpoints = monitor["spec"]["endpoints"];
  ASSERT_EQ(endpoints.size(), 1u);
  EXPECT_EQ(endpoints[0]["port"], "metrics");
  EXPECT_EQ(endpoints[0]["path"], "/metrics");
  EXPECT_EQ(endpoints[0]["scheme"], "http");
  EXPECT_EQ(endpoints[0]["interval"], "30s");
  EXPECT_FALSE(endpoints[0].contains("scrapeTimeout"));
  const Json* service = named(chart, "Service", kMetricsService);
  ASSERT_NE(service, nullptr);
  ASSERT_EQ((*service)["spec"]["ports"].size(), 1u);
  const Json& port = (*service)["spec"]["ports"][0];
  EXPECT_EQ(port["name"], "metrics");
  EXPECT_EQ(port["targetPort"], "metrics");
  const Json* deployment = named(chart, "Deployment", "csiop-csi-operator");
  ASSERT_NE(deployment, nullptr);
  bool containerPort = false;
  for (const Json& p : (*deployment)["spec"]["template"]["spec"]["containers"][0]["ports"]) {
    containerPort = containerPort || (p["name"] == "metrics" && p["containerPort"] == port["port"]);
  }
  EXPECT_TRUE(containerPort) << (*deployment)["spec"]["template"].dump(2);
  // The Service selects the operator's pods.
  for (const auto& [key, value] : (*service)["spec"]["selector"].items()) {
    EXPECT_EQ((*deployment)["spec"]["template"]["metadata"]["labels"][key], value) << key;
  }

  // A component label in commonLabels does not take the metrics Service from it.
  const auto relabelled = test::helmTemplate(
      kEnabled + " " + kApi + " --set 'commonLabels.app\\.kubernetes\\.io/component=storage'");
  const auto relabelledMonitors = ofKind(relabelled, "ServiceMonitor");
  ASSERT_EQ(relabelledMonitors.size(), 1u);
  EXPECT_EQ(selectedServices(relabelledMonitors[0], relabelled),
            std::vector<std::string>{kMetricsService});

  const std::string notes = test::helmNotes(kEnabled + " " + kApi);
  EXPECT_NE(notes.find("Metrics: the ServiceMonitor csiop-system/csiop-csi-operator"),
            std::string::npos)
      << notes;
  EXPECT_EQ(notes.find("WARNING"), std::string::npos) << notes;
}

TEST(ChartServiceMonitor, SkippedWithoutTheApiAndNotesSaySo) {
  const auto chart = test::helmTemplate(kEnabled);
  EXPECT_TRUE(ofKind(chart, "ServiceMonitor").empty());
  EXPECT_EQ(named(chart, "Service", kMetricsService), nullptr)
      << "no ServiceMonitor, so none of the Service it implies";
  const std::string notes = test::helmNotes(kEnabled);
  EXPECT_NE(notes.find("WARNING: metrics.serviceMonitor.enabled is true, but this cluster does "
                       "not serve the\nmonitoring.coreos.com/v1 ServiceMonitor API"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("metrics.serviceMonitor.force=true"), std::string::npos) << notes;
  EXPECT_NE(notes.find("nor the metrics Service it implies"), std::string::npos) << notes;

  // An explicit metrics Service stays, and NOTES.txt does not pretend it was skipped.
  const std::string withService = kEnabled + " --set metrics.service.enabled=true";
  EXPECT_NE(named(test::helmTemplate(withService), "Service", kMetricsService), nullptr);
  EXPECT_EQ(test::helmNotes(withService).find("it implies"), std::string::npos);
}

TEST(ChartServiceMonitor, ForcedWithoutTheApi) {
  const auto chart = test::helmTemplate(kEnabled + " --set metrics.serviceMonitor.force=true");
  const auto monitors = ofKind(chart, "ServiceMonitor");
  ASSERT_EQ(monitors.size(), 1u);
  EXPECT_EQ(selectedServices(monitors[0], chart), std::vector<std::string>{kMetricsService});
  // force alone renders nothing.
  EXPECT_TRUE(
      ofKind(test::helmTemplate("--set metrics.serviceMonitor.force=true"), "ServiceMonitor")
          .empty());
}

TEST(ChartServiceMonitor, ValuesReachTheServiceMonitor) {
  const auto chart =
      test::helmTemplate(kApi + " -f '" CSIOP_SOURCE_DIR "/test/chart/values/servicemonitor.yaml'");
  const auto monitors = ofKind(chart, "ServiceMonitor");
  ASSERT_EQ(monitors.size(), 1u);
  const Json& monitor = monitors[0];
  // In another namespace, it still selects the Service in the release's.
  EXPECT_EQ(monitor["metadata"]["namespace"], "monitoring");
  EXPECT_EQ(monitor["spec"]["namespaceSelector"]["matchNames"], Json::array({test::kNamespace}));
  EXPECT_EQ(selectedServices(monitor, chart), std::vector<std::string>{kMetricsService});
  EXPECT_EQ(monitor["metadata"]["labels"]["release"], "kube-prometheus-stack");
  EXPECT_EQ(monitor["metadata"]["labels"]["app.kubernetes.io/managed-by"], "Helm");
  EXPECT_EQ(monitor["metadata"]["annotations"]["example.com/owner"], "storage");
  EXPECT_EQ(monitor["spec"]["jobLabel"], "app.kubernetes.io/name");
  EXPECT_EQ(monitor["spec"]["targetLabels"], Json::array({"app.kubernetes.io/instance"}));
  const Json& endpoint = monitor["spec"]["endpoints"][0];
  EXPECT_EQ(endpoint["interval"], "1m");
  EXPECT_EQ(endpoint["scrapeTimeout"], "20s");
  EXPECT_EQ(endpoint["honorLabels"], true);
  EXPECT_EQ(endpoint["relabelings"][0]["targetLabel"], "node");
  EXPECT_EQ(endpoint["metricRelabelings"][0]["action"], "drop");
  EXPECT_EQ(endpoint["metricRelabelings"][0]["sourceLabels"], Json::array({"__name__"}));
}

TEST(ChartServiceMonitor, SchemaRefusesWhatPrometheusOperatorWould) {
  const std::string sm = "metrics.serviceMonitor.";
  for (const auto& [flags, says] : std::vector<std::pair<std::string, std::string>>{
           {"--set " + sm + "interval=soon", "/metrics/serviceMonitor/interval"},
           {"--set " + sm + "scrapeTimeout=10", "/metrics/serviceMonitor/scrapeTimeout"},
           {"--set " + sm + "intervall=30s", "additional properties 'intervall' not allowed"},
           {"--set " + sm + "enabled=yes", "/metrics/serviceMonitor/enabled"},
           {"--set " + sm + "namespace=Monitoring_NS", "/metrics/serviceMonitor/namespace"},
           {"--set-json '" + sm + "labels={\"release\":1}'", "/metrics/serviceMonitor/labels"},
           {"--set-json '" + sm + "relabelings=[{\"action\":\"rename\"}]'",
            "/metrics/serviceMonitor/relabelings/0/action"},
           {"--set-json '" + sm + "metricRelabelings=[{\"source_labels\":[\"__name__\"]}]'",
            "additional properties 'source_labels' not allowed"},
           {"--set-json '" + sm + "relabelings=[{\"sourceLabels\":[\"not-a-label\"]}]'",
            "/metrics/serviceMonitor/relabelings/0/sourceLabels/0"},
           {"--set-json '" + sm + "relabelings={\"action\":\"drop\"}'",
            "/metrics/serviceMonitor/relabelings"},
       }) {
    const std::string error = test::helmTemplateError(kEnabled + " " + kApi + " " + flags);
    EXPECT_NE(error.find("values don't meet the specifications of the schema"), std::string::npos)
        << flags << ": " << error;
    EXPECT_NE(error.find(says), std::string::npos) << flags << ": " << error;
  }
  // Valid durations of prometheus-operator's pattern.
  EXPECT_EQ(test::helmTemplateError(kEnabled + " " + kApi + " --set " + sm +
                                    "interval=1m30s --set " + sm + "scrapeTimeout=500ms"),
            "");
}

} // namespace
} // namespace csiop
