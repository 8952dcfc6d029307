// The helm chart, installed with the real helm into a real control plane, then used the way a
// pod of the chart would use it: the operator binary runs with the chart's arguments, the
// chart's ServiceAccount token and the chart's webhook certificate, and the API server calls
// its webhook through the chart's ValidatingWebhookConfiguration and Service.
//
// kwok nodes run no containers, so the chart's own pods only look Running. To put the real
// binary behind the chart's Service, the suite scales the chart's Deployment to zero and adds
// an EndpointSlice for the Service pointing at this machine; the API server is started with
// --enable-aggregator-routing, so it calls Service endpoints (it cannot reach ClusterIPs
// without kube-proxy). The suite starts its own control plane, `e2e-helm`, and stops it at the
// end (CSIOP_E2E_KEEP_CLUSTER=1 keeps it): the chart's webhook configuration fails closed and
// must not meet the other suites.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "harness.hpp"
#include "operator_process.hpp"
#include "own_cluster.hpp"

namespace csiop::e2e {
namespace {

const std::string kClusterName = "e2e-helm";
const std::string kNamespace = "csiop-system";
const std::string kRelease = "csiop";
const std::string kFullname = "csiop-csi-operator";
const std::string kServiceName = kFullname + "-webhook";
const std::string kServiceDns = kServiceName + "." + kNamespace + ".svc";
const std::string kSecretName = kFullname + "-webhook-tls";

// An IPv4 address of this machine the API server may use as an endpoint (Kubernetes refuses
// loopback and link-local endpoint addresses).
std::string endpointAddress() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0)
    throw E2EError("getifaddrs failed");
  std::string found;
  for (const ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET)
      continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    const std::uint32_t a = ntohl(in->sin_addr.s_addr);
    if ((a >> 24) == 127 || (a >> 16) == 0xA9FE) // 127/8, 169.254/16
      continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    found = text;
  }
  ::freeifaddrs(list);
  if (found.empty())
    throw E2EError("no non-loopback IPv4 address on this machine for the webhook endpoint");
  return found;
}

class HelmChart : public OwnClusterTest {
protected:
  static void SetUpTestSuite() {
    start(kClusterName, 2, {"--enable-aggregator-routing=true"});
    if (!started)
      return;
    binDir = cluster().binDir;
    work = writeArtifact("helm-chart.txt", "files of e2e.helm: helm/\n").parent_path() / "helm";
    std::filesystem::create_directories(work);
  }
  static void TearDownTestSuite() { finish(kClusterName); }

  static RunResult helm(std::vector<std::string> args, std::chrono::milliseconds timeout = 300s) {
    args.insert(args.begin(), (binDir / "helm").string());
    args.insert(args.end(), {"--kubeconfig", cluster().kubeconfig.string()});
    return run(args, {.timeout = timeout});
  }

  static std::filesystem::path chart() { return sourceDir() / "charts/csi-operator"; }

  // The release's objects: its manifest, as kubectl reads it back from the cluster.
  static std::filesystem::path manifestFile() {
    const auto manifest = helm({"get", "manifest", kRelease, "-n", kNamespace});
    if (!manifest.ok())
      throw E2EError(manifest.command() + " failed: " + manifest.err);
    return writeArtifact("helm-manifest.yaml", manifest.out);
  }

  static std::string secretData(const std::string& key) {
    std::string escaped = key;
    for (auto at = escaped.find('.'); at != std::string::npos; at = escaped.find('.', at + 2))
      escaped.replace(at, 1, "\\.");
    return kubectl({"get", "secret", kSecretName, "-n", kNamespace, "-o",
                    "jsonpath={.data." + escaped + "}"})
        .out;
  }
  static std::string caBundle() {
    return kubectl({"get", "validatingwebhookconfiguration", kFullname, "-o",
                    "jsonpath={.webhooks[0].clientConfig.caBundle}"})
        .out;
  }
  static std::string decoded(const std::string& base64) {
    const auto r = run({"base64", "-d"}, {.input = base64});
    if (!r.ok())
      throw E2EError("base64 -d failed: " + r.err);
    return r.out;
  }

  // kubectl as the chart's ServiceAccount.
  static RunResult asOperator(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {cluster().kubectl.string(), "--kubeconfig",
                                     saKubeconfig.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  }

  // The chart as a previous version could have been: its CRD lacks the `csi` category.
  static std::filesystem::path previousChart() {
    const auto dir = work / "previous-chart";
    std::filesystem::remove_all(dir);
    std::filesystem::copy(chart(), dir, std::filesystem::copy_options::recursive);
    const auto crd = dir / "files/crds/csiop.dev_driverdeployments.yaml";
    std::string text = readFile(crd);
    const std::string line = "    categories: [csi]\n";
    const auto at = text.find(line);
    if (at == std::string::npos)
      throw E2EError("no categories line in " + crd.string());
    text.erase(at, line.size());
    std::ofstream(crd) << text;
    return dir;
  }

  static std::string crdCategories() {
    return kubectl({"get", "crd", "driverdeployments.csiop.dev", "-o",
                    "jsonpath={.spec.names.categories}"})
        .out;
  }

  static inline std::filesystem::path binDir;
  static inline std::filesystem::path work;
  static inline std::filesystem::path saKubeconfig;
  static inline std::string webhookAddress; // host:port of the operator's webhook
  static inline std::string installedCert;  // the Secret's tls.crt after install
};

TEST_F(HelmChart, InstallCreatesEveryObjectOfTheChart) {
  const auto install = helm({"install", kRelease, previousChart().string(), "-n", kNamespace,
                             "--create-namespace", "--wait", "--timeout", "3m"});
  ASSERT_TRUE(install.ok()) << install;
  EXPECT_NE(install.out.find("kubectl apply -f examples/hostpath.yaml"), std::string::npos)
      << "NOTES.txt tells what to do next:\n"
      << install.out;

  // Every object of the release's manifest exists in the cluster.
  const Json objects = kubectlJson({"get", "-f", manifestFile().string()});
  std::multiset<std::string> kinds;
  for (const auto& o : objects["items"]) {
    kinds.insert(o["kind"].get<std::string>());
  }
  const std::multiset<std::string> expected = {"ClusterRole",
                                               "ClusterRole",
                                               "ClusterRoleBinding",
                                               "ClusterRoleBinding",
                                               "CustomResourceDefinition",
                                               "Deployment",
                                               "PodDisruptionBudget",
                                               "Role",
                                               "RoleBinding",
                                               "Secret",
                                               "Service",
                                               "ServiceAccount",
                                               "ValidatingWebhookConfiguration"};
  EXPECT_EQ(kinds, expected) << objects.dump(2).substr(0, 4000);

  // Both replicas rolled out (kwok runs them), spread over the two nodes.
  const auto rollout =
      kubectl({"rollout", "status", "deployment/" + kFullname, "-n", kNamespace, "--timeout=120s"});
  EXPECT_TRUE(rollout.ok()) << rollout;
  const Json pods = kubectlJson(
      {"get", "pods", "-n", kNamespace, "-l", "app.kubernetes.io/instance=" + kRelease});
  std::set<std::string> nodes;
  for (const auto& p : pods["items"]) {
    nodes.insert(p["spec"].value("nodeName", ""));
  }
  EXPECT_EQ(pods["items"].size(), 2u);
  EXPECT_EQ(nodes.size(), 2u) << "the topology spread puts one replica on each node";
  EXPECT_EQ(kubectl({"get", "crd", "driverdeployments.csiop.dev", "-o",
                     "jsonpath={.metadata.annotations.helm\\.sh/resource-policy}"})
                .out,
            "keep");
}

TEST_F(HelmChart, UpgradeBringsTheCrdUpToDate) {
  EXPECT_EQ(crdCategories(), "");
  const auto upgrade = helm({"upgrade", kRelease, chart().string(), "-n", kNamespace,
                             "--reuse-values", "--wait", "--timeout", "3m"});
  ASSERT_TRUE(upgrade.ok()) << upgrade;
  EXPECT_EQ(crdCategories(), R"(["csi"])");
}

TEST_F(HelmChart, WebhookCaBundleVerifiesTheServingCertificate) {
  installedCert = secretData("tls.crt");
  ASSERT_FALSE(installedCert.empty());
  ASSERT_EQ(caBundle(), secretData("ca.crt"));
  std::ofstream(work / "bundle.crt") << decoded(caBundle());
  std::ofstream(work / "serving.crt") << decoded(installedCert);
  const auto verify = run({"openssl", "verify", "-CAfile", (work / "bundle.crt").string(),
                           (work / "serving.crt").string()});
  EXPECT_TRUE(verify.ok()) << verify;
  const auto host = run({"openssl", "x509", "-noout", "-in", (work / "serving.crt").string(),
                         "-checkhost", kServiceDns});
  EXPECT_NE(host.out.find("does match certificate"), std::string::npos) << host;
}

TEST_F(HelmChart, OperatorWithTheChartsCredentialsReconcilesHostpathToReady) {
  // The chart's pods stand aside for the real binary, reached through the Service.
  ASSERT_TRUE(kubectl({"scale", "deployment/" + kFullname, "-n", kNamespace, "--replicas=0"}).ok());

  // Credentials: a token of the chart's ServiceAccount, the chart's serving certificate.
  const auto token = kubectl({"create", "token", kFullname, "-n", kNamespace, "--duration=2h"});
  ASSERT_TRUE(token.ok()) << token;
  const Json admin = kubectlJson({"config", "view", "--raw", "--minify"});
  const Json& clusterEntry = admin["clusters"][0]["cluster"];
  saKubeconfig = work / "operator.kubeconfig";
  std::ofstream(saKubeconfig) << Json{
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", Json::array({{{"name", "c"}, {"cluster", clusterEntry}}})},
      {"users", Json::array({{{"name", "sa"}, {"user", {{"token", trimmed(token.out)}}}}})},
      {"contexts",
       Json::array({{{"name", "sa"}, {"context", {{"cluster", "c"}, {"user", "sa"}}}}})},
      {"current-context", "sa"}}.dump(2);
  const auto certDir = work / "serving-certs";
  std::filesystem::create_directories(certDir);
  for (const std::string key : {"tls.crt", "tls.key", "ca.crt"}) {
    std::ofstream(certDir / key) << decoded(secretData(key));
  }

  // The chart's arguments, with this machine's ports and paths.
  const Json container = kubectlJson({"get", "deployment", kFullname, "-n",
                                      kNamespace})["spec"]["template"]["spec"]["containers"][0];
  const int webhookPort = freeLoopbackPort();
  OperatorInvocation invocation;
  invocation.kubeconfig = saKubeconfig;
  for (const auto& a : container["args"]) {
    const std::string arg = a;
    const bool local = arg.starts_with("--metrics-bind-address=") ||
                       arg.starts_with("--health-probe-bind-address=") ||
                       arg.starts_with("--webhook-port=") || arg.starts_with("--webhook-cert-dir=");
    if (!local)
      invocation.args.push_back(arg);
  }
  ASSERT_EQ(invocation.args.front(), "run");
  invocation.args.insert(invocation.args.end(), {"--webhook-port=" + std::to_string(webhookPort),
                                                 "--webhook-cert-dir=" + certDir.string()});
  op = std::make_unique<OperatorProcess>("helm-operator.log", invocation);
  ASSERT_TRUE(op->waitReady(60s));
  // The chart's (fake) pods are out of the Service before anything calls the webhook.
  ASSERT_TRUE(waitFor("no ready endpoint of the chart's pods", 60s, [](std::string& seen) {
    const Json slices = kubectlJson(
        {"get", "endpointslices", "-n", kNamespace, "-l",
         "kubernetes.io/service-name=" + kServiceName +
             ",endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io"});
    seen = slices.dump();
    for (const auto& slice : slices["items"]) {
      for (const auto& e : slice.value("endpoints", Json::array())) {
        if (e.value("conditions", Json::object()).value("ready", true))
          return false;
      }
    }
    return true;
  }));

  // The Service's endpoint: this machine.
  const std::string address = endpointAddress();
  webhookAddress = address + ":" + std::to_string(webhookPort);
  const Json slice = {
      {"apiVersion", "discovery.k8s.io/v1"},
      {"kind", "EndpointSlice"},
      {"metadata",
       {{"name", kServiceName + "-e2e"},
        {"namespace", kNamespace},
        {"labels",
         {{"kubernetes.io/service-name", kServiceName},
          {"endpointslice.kubernetes.io/managed-by", "e2e.csiop.dev"}}}}},
      {"addressType", "IPv4"},
      {"ports", Json::array({{{"name", "webhook"}, {"port", webhookPort}, {"protocol", "TCP"}}})},
      {"endpoints",
       Json::array({{{"addresses", Json::array({address})}, {"conditions", {{"ready", true}}}}})}};
  const auto applied = kubectl({"apply", "-f", "-"}, slice.dump());
  ASSERT_TRUE(applied.ok()) << applied;

  const auto dd = kubectl({"apply", "-f", (sourceDir() / "examples/hostpath.yaml").string()});
  ASSERT_TRUE(dd.ok()) << dd;
  registerDriverOnNodes("hostpath.csi.k8s.io");
  EXPECT_TRUE(waitFor("hostpath is Ready", 120s, [](std::string& seen) {
    seen = kubectl({"get", "dd", "hostpath", "-o", "jsonpath={.status}"}).out;
    return ddCondition("hostpath", "Ready") == "True";
  }));
  EXPECT_EQ(ddCondition("hostpath", "Degraded"), "False");
  EXPECT_EQ(op->log().find("forbidden"), std::string::npos)
      << "the chart's RBAC lacks something the operator does";
}

TEST_F(HelmChart, ApiServerCallsTheWebhookThroughTheChartsConfiguration) {
  ASSERT_TRUE(op) << "needs the operator of the previous test";
  // A second DriverDeployment for the same driver: the API server asks the webhook (chart's
  // configuration, Service, caBundle), which refuses it.
  std::string duplicate = readFile(sourceDir() / "examples/hostpath.yaml");
  duplicate.replace(duplicate.find("name: hostpath\n"), 15, "name: hostpath-again\n");
  const auto denied = kubectl({"apply", "-f", "-"}, duplicate);
  EXPECT_FALSE(denied.ok()) << denied;
  EXPECT_NE(denied.err.find("admission webhook \"validate.driverdeployments.csiop.dev\" denied"),
            std::string::npos)
      << denied;
  EXPECT_NE(denied.err.find("already used by DriverDeployment \"hostpath\""), std::string::npos)
      << denied;
  // The denial is counted where the chart's ServiceMonitor scrapes (the queries of
  // docs/how-to/metrics.md).
  EXPECT_GE(op->metric("csiop_webhook_reviews_total{result=\"denied\"}"), 1);
  writeArtifact("helm-operator-metrics.txt", op->metrics());
  // The API server counts it where the chart's CSIOperatorWebhookUnreachable alert reads the
  // failures to call the webhook (the operator's own metrics are checked by the chart tests).
  const auto apiServer = kubectl({"get", "--raw", "/metrics"});
  ASSERT_TRUE(apiServer.ok()) << apiServer.err;
  EXPECT_NE(
      apiServer.out.find("apiserver_admission_webhook_rejection_count{error_type=\"no_error\","
                         "name=\"validate.driverdeployments.csiop.dev\""),
      std::string::npos)
      << "the API server serves no apiserver_admission_webhook_rejection_count for the webhook";
}

TEST_F(HelmChart, HelmTestHookCommandSucceedsAgainstTheWebhook) {
  ASSERT_TRUE(op) << "needs the operator of the previous tests";
  // kwok runs no containers, so `helm test` cannot run the hook's pod; run its command here,
  // against the same endpoint the Service resolves to, verifying the certificate for the
  // Service's name with the CA file the pod mounts.
  const auto hooks = helm({"get", "hooks", kRelease, "-n", kNamespace});
  ASSERT_TRUE(hooks.ok()) << hooks;
  const Json pod = kubectlJson({"create", "--dry-run=client", "-f", "-"}, hooks.out);
  ASSERT_EQ(pod["kind"], "Pod");
  EXPECT_EQ(pod["metadata"]["annotations"]["helm.sh/hook"], "test");
  std::vector<std::string> args;
  for (const auto& a : pod["spec"]["containers"][0]["args"]) {
    args.push_back(a);
  }
  ASSERT_GE(args.size(), 2u);
  ASSERT_EQ(args[0], "probe");
  const std::string url = args[1];
  const std::string serviceUrl = "https://" + kServiceDns + ":443/";
  ASSERT_TRUE(url.starts_with(serviceUrl)) << url;
  std::vector<std::string> argv = {operatorBinary().string(), "probe",
                                   "https://" + webhookAddress + "/" +
                                       url.substr(serviceUrl.size()),
                                   "--tls-server-name", kServiceDns};
  for (std::size_t i = 2; i < args.size(); ++i) {
    argv.push_back(args[i].starts_with("--ca-file=")
                       ? "--ca-file=" + (work / "serving-certs/ca.crt").string()
                       : args[i]);
  }
  const auto probe = run(argv);
  EXPECT_TRUE(probe.ok()) << probe;
  // And it fails for a name the certificate does not carry.
  argv[4] = "csi-operator.example.com";
  EXPECT_FALSE(run(argv).ok());
}

TEST_F(HelmChart, ActionsOutsideTheChartsRulesAreDenied) {
  ASSERT_FALSE(saKubeconfig.empty()) << "needs the credentials of the previous tests";
  const std::string forbidden = "forbidden";
  // No escalate: it cannot write itself a role with more than it holds.
  auto r = asOperator({"create", "clusterrole", "e2e-anything", "--verb=*", "--resource=*"});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.err.find("attempting to grant RBAC permissions not currently held"),
            std::string::npos)
      << r;
  // No bind: it cannot bind itself to cluster-admin.
  r = asOperator({"create", "clusterrolebinding", "e2e-admin", "--clusterrole=cluster-admin",
                  "--serviceaccount=" + kNamespace + ":" + kFullname});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.err.find(forbidden), std::string::npos) << r;
  // Secrets: get by name only (to grant it to sidecars), never list.
  r = asOperator({"get", "secrets", "-A"});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.err.find(forbidden), std::string::npos) << r;
  // Nothing it does not manage.
  r = asOperator({"delete", "node", "--all", "--dry-run=server"});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.err.find(forbidden), std::string::npos) << r;
  r = asOperator({"create", "deployment", "e2e", "--image=x", "-n", "default", "--dry-run=server"});
  EXPECT_TRUE(r.ok()) << "it manages Deployments: " << r;
  for (const auto& [verb, resource] : std::vector<std::pair<std::string, std::string>>{
           {"update", "customresourcedefinitions"},
           {"patch", "customresourcedefinitions/othercrd.example.com"},
           {"delete", "namespaces"},
           {"escalate", "clusterroles"},
           {"bind", "clusterroles"},
           {"impersonate", "serviceaccounts"},
           {"create", "mutatingwebhookconfigurations"}}) {
    r = asOperator({"auth", "can-i", verb, resource, "-A"});
    EXPECT_EQ(trimmed(r.out), "no") << verb << " " << resource << ": " << r;
  }
  // It creates pods (a verified rollout's smoke tests: no more than the Deployments it manages
  // can), but never runs a command in one nor attaches to one.
  for (const char* subresource : {"exec", "attach"}) {
    r = asOperator(
        {"auth", "can-i", "create", "pods", std::string("--subresource=") + subresource, "-A"});
    EXPECT_EQ(trimmed(r.out), "no") << "create pods/" << subresource << ": " << r;
  }
}

TEST_F(HelmChart, DeletingADriverDeploymentWorksWithTheChartsRules) {
  ASSERT_TRUE(op) << "needs the operator of the previous tests";
  deleteDd("hostpath");
  EXPECT_FALSE(exists({"dd", "hostpath"}));
  EXPECT_FALSE(exists({"csidriver", "hostpath.csi.k8s.io"}));
  EXPECT_FALSE(exists({"daemonset", "-n", "csi-hostpath", "hostpath-node"}));

  // One DriverDeployment stays, to show what `helm uninstall` leaves.
  const auto kept = kubectl({"apply", "-f", "-"}, hostpathAs("kept"));
  ASSERT_TRUE(kept.ok()) << kept;
  EXPECT_TRUE(waitFor("kept's children exist", 60s, [](std::string& seen) {
    seen = kubectl({"get", "dd", "kept", "-o", "jsonpath={.status}"}).out;
    return exists({"csidriver", "kept.csi.k8s.io"}) &&
           exists({"daemonset", "-n", "csi-kept", "kept-node"});
  }));
  EXPECT_EQ(op->log().find("forbidden"), std::string::npos) << "the chart's RBAC lacks something";
  stopOperator();
  ASSERT_TRUE(kubectl({"delete", "endpointslice", kServiceName + "-e2e", "-n", kNamespace}).ok());
}

TEST_F(HelmChart, UpgradeKeepsTheCertificateAndRollsTheDeployment) {
  ASSERT_FALSE(installedCert.empty());
  const std::string bundle = caBundle();
  const std::string key = secretData("tls.key");
  const Json before = kubectlJson({"get", "deployment", kFullname, "-n", kNamespace});
  const std::string template0 = before["spec"]["template"].dump();

  const auto upgrade =
      helm({"upgrade", kRelease, chart().string(), "-n", kNamespace, "--reuse-values", "--set",
            "operator.logVerbosity=2", "--wait", "--timeout", "3m"});
  ASSERT_TRUE(upgrade.ok()) << upgrade;

  EXPECT_EQ(secretData("tls.crt"), installedCert) << "the serving certificate was regenerated";
  EXPECT_EQ(secretData("tls.key"), key);
  EXPECT_EQ(caBundle(), bundle);
  const Json after = kubectlJson({"get", "deployment", kFullname, "-n", kNamespace});
  EXPECT_NE(after["spec"]["template"].dump(), template0);
  const std::string args = after["spec"]["template"]["spec"]["containers"][0]["args"].dump();
  EXPECT_NE(args.find("--v=2"), std::string::npos) << args;
  EXPECT_GT(after["metadata"]["generation"].get<int>(),
            before["metadata"]["generation"].get<int>());
  const auto rollout =
      kubectl({"rollout", "status", "deployment/" + kFullname, "-n", kNamespace, "--timeout=120s"});
  EXPECT_TRUE(rollout.ok()) << rollout;
  // The new pods come from a new ReplicaSet.
  const Json sets = kubectlJson(
      {"get", "replicasets", "-n", kNamespace, "-l", "app.kubernetes.io/instance=" + kRelease});
  int active = 0;
  for (const auto& s : sets["items"]) {
    active += s["spec"].value("replicas", 0) > 0 ? 1 : 0;
  }
  EXPECT_GE(sets["items"].size(), 2u);
  EXPECT_EQ(active, 1);
}

TEST_F(HelmChart, ServiceMonitorOnceThePrometheusOperatorApiIsServed) {
  const std::string monitor = "servicemonitor/" + kFullname;
  const std::string metricsService = kFullname + "-metrics";
  // Without prometheus-operator's CRD, helm finds no ServiceMonitor API: the chart skips the
  // ServiceMonitor (and the metrics Service it implies) and its notes say so.
  auto upgrade =
      helm({"upgrade", kRelease, chart().string(), "-n", kNamespace, "--reuse-values", "--set",
            "metrics.serviceMonitor.enabled=true", "--wait", "--timeout", "3m"});
  ASSERT_TRUE(upgrade.ok()) << upgrade;
  EXPECT_NE(upgrade.out.find("WARNING: metrics.serviceMonitor.enabled is true"), std::string::npos)
      << upgrade.out;
  EXPECT_FALSE(exists({"service", "-n", kNamespace, metricsService}));
  // Forced, it is rendered all the same, and helm cannot map it to an API of this cluster.
  const auto forced =
      helm({"upgrade", kRelease, chart().string(), "-n", kNamespace, "--reuse-values", "--set",
            "metrics.serviceMonitor.force=true", "--dry-run=server"});
  EXPECT_FALSE(forced.ok()) << forced;
  EXPECT_NE(forced.err.find("no matches for kind \"ServiceMonitor\""), std::string::npos) << forced;

  // prometheus-operator's pinned CRD (test/cluster/monitoring-crd); the API server then
  // validates the ServiceMonitor against its schema.
  const auto crd = run({(sourceDir() / "test/cluster/monitoring-crd").string()}, {.timeout = 600s});
  ASSERT_TRUE(crd.ok()) << crd;
  auto applied = kubectl({"apply", "--server-side", "-f", trimmed(crd.out)});
  ASSERT_TRUE(applied.ok()) << applied;
  const auto established = kubectl({"wait", "--for=condition=Established", "--timeout=60s",
                                    "crd/servicemonitors.monitoring.coreos.com"});
  ASSERT_TRUE(established.ok()) << established;

  upgrade = helm({"upgrade", kRelease, chart().string(), "-n", kNamespace, "--reuse-values",
                  "--wait", "--timeout", "3m"});
  ASSERT_TRUE(upgrade.ok()) << upgrade;
  EXPECT_NE(upgrade.out.find("Metrics: the ServiceMonitor " + kNamespace + "/" + kFullname),
            std::string::npos)
      << upgrade.out;
  const Json sm = kubectlJson({"get", monitor, "-n", kNamespace});
  const Json& endpoint = sm["spec"]["endpoints"][0];
  EXPECT_EQ(endpoint["port"], "metrics");
  EXPECT_EQ(endpoint["path"], "/metrics");
  EXPECT_EQ(sm["spec"]["namespaceSelector"]["matchNames"], Json::array({kNamespace}));
  // Its selector picks the metrics Service alone, whose port `metrics` is the pods'.
  std::string selector;
  for (const auto& [key, value] : sm["spec"]["selector"]["matchLabels"].items()) {
    selector += (selector.empty() ? "" : ",") + key + "=" + value.get<std::string>();
  }
  const Json services = kubectlJson({"get", "services", "-n", kNamespace, "-l", selector});
  ASSERT_EQ(services["items"].size(), 1u) << services.dump(2).substr(0, 4000);
  const Json& service = services["items"][0];
  EXPECT_EQ(service["metadata"]["name"], metricsService);
  ASSERT_EQ(service["spec"]["ports"].size(), 1u);
  EXPECT_EQ(service["spec"]["ports"][0]["name"], "metrics");
  EXPECT_EQ(service["spec"]["ports"][0]["targetPort"], "metrics");

  // Every value of metrics.serviceMonitor (the golden file's) passes the CRD's schema (another
  // release name: the release's own ServiceMonitor exists).
  const auto rendered = helm({"template", "e2e-values", chart().string(), "-n", kNamespace, "-f",
                              (sourceDir() / "test/chart/values/servicemonitor.yaml").string(),
                              "--set", "metrics.serviceMonitor.namespace=" + kNamespace,
                              "--api-versions", "monitoring.coreos.com/v1/ServiceMonitor",
                              "--show-only", "templates/servicemonitor.yaml"});
  ASSERT_TRUE(rendered.ok()) << rendered;
  const auto dryRun = kubectl({"create", "--dry-run=server", "-f", "-"}, rendered.out);
  EXPECT_TRUE(dryRun.ok()) << dryRun;
  // The API server refuses what the values schema refuses, e.g. a duration prometheus-operator
  // does not know: the two agree.
  std::string invalid = rendered.out;
  invalid.replace(invalid.find("interval: 1m"), 12, "interval: 1 minute");
  const auto refused = kubectl({"create", "--dry-run=server", "-f", "-"}, invalid);
  EXPECT_FALSE(refused.ok()) << refused;
  EXPECT_NE(refused.err.find("spec.endpoints[0].interval"), std::string::npos) << refused;
}

// The chart's alerts against prometheus-operator's pinned PrometheusRule CRD: rendered with every
// value of metrics.prometheusRule (the golden file's), the API server accepts them; a `for` that
// is no Prometheus duration is refused by the CRD as by the values schema.
TEST_F(HelmChart, PrometheusRuleIsAcceptedByThePrometheusOperatorCrd) {
  const auto crd = run({(sourceDir() / "test/cluster/monitoring-crd").string(), "prometheusrules"},
                       {.timeout = 600s});
  ASSERT_TRUE(crd.ok()) << crd;
  const auto applied = kubectl({"apply", "--server-side", "-f", trimmed(crd.out)});
  ASSERT_TRUE(applied.ok()) << applied;
  const auto established = kubectl({"wait", "--for=condition=Established", "--timeout=60s",
                                    "crd/prometheusrules.monitoring.coreos.com"});
  ASSERT_TRUE(established.ok()) << established;
  const auto rendered = helm({"template", "e2e-values", chart().string(), "-n", kNamespace, "-f",
                              (sourceDir() / "test/chart/values/alerts.yaml").string(), "--set",
                              "metrics.prometheusRule.namespace=" + kNamespace, "--api-versions",
                              "monitoring.coreos.com/v1/PrometheusRule", "--show-only",
                              "templates/prometheusrule.yaml"});
  ASSERT_TRUE(rendered.ok()) << rendered;
  const auto dryRun = kubectl({"create", "--dry-run=server", "-f", "-"}, rendered.out);
  EXPECT_TRUE(dryRun.ok()) << dryRun;
  std::string invalid = rendered.out;
  const std::string duration = "for: 30m";
  ASSERT_NE(invalid.find(duration), std::string::npos) << rendered.out;
  invalid.replace(invalid.find(duration), duration.size(), "for: half an hour");
  const auto refused = kubectl({"create", "--dry-run=server", "-f", "-"}, invalid);
  EXPECT_FALSE(refused.ok()) << refused;
  EXPECT_NE(refused.err.find("for"), std::string::npos) << refused;
}

TEST_F(HelmChart, UninstallRemovesTheOperatorAndLeavesCrdAndDrivers) {
  const auto manifest = manifestFile();
  const auto uninstall = helm({"uninstall", kRelease, "-n", kNamespace, "--wait"});
  ASSERT_TRUE(uninstall.ok()) << uninstall;
  // Of the release's objects only the CRD remains (helm.sh/resource-policy: keep).
  EXPECT_TRUE(waitFor("only the CRD is left", 60s, [&](std::string& seen) {
    const auto left = kubectl({"get", "-f", manifest.string(), "--ignore-not-found", "-o", "name"});
    seen = left.out + left.err;
    return left.ok() && trimmed(left.out) == "customresourcedefinition.apiextensions.k8s.io/"
                                             "driverdeployments.csiop.dev";
  }));
  EXPECT_TRUE(kubectl({"get", "pods", "-n", kNamespace, "-o", "name"}).out.empty());
  // DriverDeployments and what they deployed stay; the driver keeps running.
  EXPECT_TRUE(exists({"dd", "kept"}));
  EXPECT_TRUE(exists({"csidriver", "kept.csi.k8s.io"}));
  EXPECT_TRUE(exists({"daemonset", "-n", "csi-kept", "kept-node"}));
}

} // namespace
} // namespace csiop::e2e
