// The composition root of `csi-operator run` and `csi-operator webhook`: wires the client, the
// caches, the work queue and its workers (runtime::Workers) around the reconciler, leader
// election, the admission webhook, the probe/metrics server and signal handling, on one
// single-threaded io_context. Nothing else includes both the controller and the webhook.
#pragma once

#include <vector>

#include <csiop/api/object_kinds.hpp>

#include <chrono>
#include <string>

namespace csiop::app {

struct ManagerOptions {
  std::string kubeconfig; // "" : $KUBECONFIG, in-cluster, ~/.kube/config
  std::string context;    // kubeconfig context, "" : current
  bool leaderElect = false;
  std::string leaderElectionNamespace; // "" : the pod's namespace, else "default"
  std::string leaderElectionId = "csi-operator";
  std::string metricsBindAddress = ":8080"; // "0": off
  std::string healthProbeBindAddress = ":8081";
  int workers = 4; // reconciles in flight (different keys)
  std::chrono::seconds resyncPeriod{600};
  // How often the ConfigMaps and Secrets the workloads reference are read (by GET) again.
  std::chrono::seconds configPollPeriod{10};
  bool installCrds = true;
  // The validating admission webhook, served by every replica (leader or not)
  // on HTTPS port `webhookPort` (0: off) with tls.crt/tls.key from
  // `webhookCertDir`, reloaded when they change.
  int webhookPort = 0;
  std::string webhookHost; // "" : every interface
  std::string webhookCertDir = "/tmp/k8s-webhook-server/serving-certs";
  // false: only the webhook and the caches it reads (`csi-operator webhook`).
  bool reconcile = true;
  // Kinds spec.objects may hold beyond api::builtinObjectKinds() (--object-kind).
  std::vector<api::ObjectKind> objectKinds;
  // The namespaces drivers may go into (--driver-namespace); empty: any.
  std::vector<std::string> driverNamespaces;
  // The image the smoke tests of verified rollouts run in (the operator's own; the chart sets
  // it), and its pull policy. "": no smoke test can run, and one asked for fails, saying so.
  std::string smokeImage;
  std::string smokeImagePullPolicy = "IfNotPresent";
  // Stamped on each workload it writes (spec.operatorUpdates tells its changes by it).
  std::string operatorVersion = "unknown";
};

// Runs until SIGTERM/SIGINT (exit code 0) or a fatal error (1). Losing the
// leader lease ends the process at once (exit code 1), as controller-runtime
// does: a replica that stopped leading must not write again.
int runManager(const ManagerOptions& options);

} // namespace csiop::app
