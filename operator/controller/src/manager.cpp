#include <csiop/controller/manager.hpp>

#include <csiop/controller/compare.hpp>

#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/api/yaml.hpp>
#include <csiop/controller/caches.hpp>
#include <csiop/controller/events.hpp>
#include <csiop/controller/leader.hpp>
#include <csiop/controller/reconciler.hpp>
#include <csiop/controller/volume_usage.hpp>
#include <csiop/crds.hpp>
#include <csiop/runtime/http_server.hpp>
#include <csiop/runtime/operator_metrics.hpp>
#include <csiop/runtime/probes.hpp>
#include <csiop/runtime/resync.hpp>
#include <csiop/runtime/signals.hpp>
#include <csiop/runtime/workqueue.hpp>
#include <csiop/webhook/server.hpp>

namespace csiop::controller {
namespace {

namespace asio = boost::asio;
using api::Json;

asio::awaitable<void> sleepFor(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  boost::system::error_code ec;
  co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

// Installs or upgrades the CRDs in `yaml` (server-side apply) and waits until
// the API server serves them.
asio::awaitable<void> installCrds(kube::Client& client, std::string_view yaml) {
  for (Json crd : api::parseYaml(yaml)) {
    const std::string name = crd["metadata"]["name"];
    co_await client.apply(kube::resources::customresourcedefinitions, std::move(crd));
    for (int i = 0; i < 300; ++i) {
      const Json live = co_await client.get(kube::resources::customresourcedefinitions, "", name);
      bool established = false;
      for (const auto& c :
           live.value("status", Json::object()).value("conditions", Json::array())) {
        established |= c.value("type", "") == "Established" && c.value("status", "") == "True";
      }
      if (established) {
        spdlog::info("CRD {} installed and established", name);
        break;
      }
      co_await sleepFor(std::chrono::milliseconds(100));
    }
  }
}

// The CSIDriver API to use: storage.k8s.io/v1 where served (Kubernetes 1.18+),
// else the csi.storage.k8s.io/v1alpha1 CRD of 1.12-1.13, installed if allowed.
asio::awaitable<const kube::ResourceRef*> discoverCsiDriverApi(kube::Client& client,
                                                               bool mayInstall) {
  namespace r = kube::resources;
  if (co_await client.serves(r::csidrivers.group, r::csidrivers.version, r::csidrivers.resource)) {
    co_return &r::csidrivers;
  }
  const auto& legacy = r::legacyCsidrivers;
  if (!co_await client.serves(legacy.group, legacy.version, legacy.resource)) {
    if (!mayInstall) {
      throw std::runtime_error(
          "the cluster serves neither storage.k8s.io/v1 nor csi.storage.k8s.io/v1alpha1 "
          "CSIDriver; install crds/legacy/csidrivers.csi.storage.k8s.io.yaml or run without "
          "--no-install-crds");
    }
    spdlog::warn("storage.k8s.io/v1 CSIDriver is not served; installing the legacy "
                 "csidrivers.csi.storage.k8s.io (v1alpha1) CRD");
    co_await installCrds(client, embedded::legacyCsiDriverCrdYaml());
  }
  spdlog::info("using the legacy csi.storage.k8s.io/v1alpha1 CSIDriver API");
  co_return &legacy;
}

// How long a change of a workload pod waits for others before its DriverDeployment is
// reconciled.
constexpr std::chrono::seconds kPodChangeBatch{1};

// What reconciles: the caches, the event recorder and the reconciler, built
// once discovery has chosen the CSIDriver API. Every cache change queues the
// DriverDeployments it concerns.
struct Controllers {
  Controllers(kube::Client& client, const kube::ResourceRef& csiDriverApi,
              runtime::WorkQueue& queue, std::chrono::milliseconds configPollPeriod)
      : caches(client, csiDriverApi), events(client, nowRfc3339),
        reconciler(client, caches, events, nowRfc3339, configPollPeriod) {
    for (Informer* informer : caches.all()) {
      // The workloads' pods change one by one through a rollout (each becoming ready is a
      // change): their DriverDeployment is reconciled once for the changes of a second, not
      // once per pod.
      const bool batched = informer == &caches.pods;
      const bool ownStatusEchoes = informer == &caches.driverDeployments;
      informer->onChange(
          [this, &queue, batched, ownStatusEchoes](const Json* old, const Json* updated) {
            if (ownStatusEchoes && old != nullptr && updated != nullptr &&
                onlyStatusDiffers(*old, *updated)) {
              return; // the echo of a status write: nothing the reconciler reads changed
            }
            for (const Json* o : {old, updated}) {
              if (o != nullptr) {
                for (const auto& name : reconciler.ownersOf(*o)) {
                  if (batched) {
                    queue.addAfter(name, kPodChangeBatch);
                  } else {
                    queue.add(name);
                  }
                }
              }
            }
          });
    }
  }

  Caches caches;
  EventRecorder events;
  Reconciler reconciler;
};

// The webhook's view of the cluster: the operator's own caches.
webhook::ClusterView clusterView(Caches& caches) {
  return webhook::ClusterView{
      [&caches](const std::string& driverName) {
        std::vector<std::string> names;
        for (const Json* dd : caches.driverDeploymentsOf(driverName)) {
          names.push_back(api::metadataField(*dd, "name"));
        }
        return names;
      },
      [&caches](const std::string& driverName) { return caches.csiDrivers.get("", driverName); },
      [&caches](const std::string& driverName) { return describe(caches.volumesOf(driverName)); }};
}

std::string podNamespace() {
  std::ifstream in("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::string ns;
  std::getline(in, ns);
  return ns.empty() ? "default" : ns;
}

std::string identity() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + "_" + std::to_string(getpid());
}

} // namespace

int runManager(const ManagerOptions& options) {
  asio::io_context io;
  runtime::OperatorMetrics metrics;
  std::unique_ptr<kube::Client> client;
  try {
    kube::ClientOptions clientOptions;
    clientOptions.observer = [&metrics](std::string_view verb, std::string_view, int code,
                                        std::chrono::nanoseconds) {
      metrics.observeApiRequest(verb, code);
    };
    client = std::make_unique<kube::Client>(io.get_executor(),
                                            kube::loadDefault(options.kubeconfig, options.context),
                                            std::move(clientOptions));
  } catch (const std::exception& e) {
    spdlog::error("cannot configure the Kubernetes client: {}", e.what());
    return 1;
  }

  runtime::WorkQueue queue(io.get_executor());
  std::unique_ptr<Controllers> ctl; // once start-up (CRDs, discovery) is done
  std::unique_ptr<webhook::WebhookServer> admission;

  runtime::HealthChecks healthz("healthz");
  runtime::HealthChecks readyz("readyz");
  readyz.add("informers", [&ctl] {
    return ctl && ctl->caches.synced() ? runtime::CheckResult::passed()
                                       : runtime::CheckResult::failed("caches not synced yet");
  });
  std::vector<std::unique_ptr<runtime::HttpServer>> servers;
  try {
    if (runtime::parseBindAddress(options.healthProbeBindAddress)) {
      auto s =
          std::make_unique<runtime::HttpServer>(io.get_executor(), options.healthProbeBindAddress);
      s->handle("/healthz", healthz.handler());
      s->handle("/readyz", readyz.handler());
      servers.push_back(std::move(s));
    }
    if (runtime::parseBindAddress(options.metricsBindAddress)) {
      auto s = std::make_unique<runtime::HttpServer>(io.get_executor(), options.metricsBindAddress);
      // The queue depth as of the scrape, not only as of the last reconcile's end.
      s->handle("/metrics", [&queue, &metrics, serve = runtime::metricsHandler(metrics)](
                                const runtime::HttpRequest& request) {
        metrics.setWorkqueueDepth(queue.len());
        return serve(request);
      });
      servers.push_back(std::move(s));
    }
    for (auto& s : servers) {
      s->start();
    }
  } catch (const std::exception& e) {
    spdlog::error("cannot serve probes/metrics: {}", e.what());
    return 1;
  }

  LeaderElector elector(*client, {.namespace_ = options.leaderElectionNamespace.empty()
                                                    ? podNamespace()
                                                    : options.leaderElectionNamespace,
                                  .name = options.leaderElectionId,
                                  .identity = identity()});
  runtime::PeriodicResync resync(io.get_executor(), runtime::steadyClock(), queue,
                                 [&ctl] {
                                   std::vector<std::string> keys;
                                   for (const Json* dd : ctl->caches.driverDeployments.list()) {
                                     keys.push_back((*dd)["metadata"]["name"]);
                                   }
                                   return keys;
                                 },
                                 {.period = options.resyncPeriod});
  int exitCode = 0;
  bool stopping = false;
  std::unique_ptr<runtime::SignalHandler> signals;

  const auto shutdown = [&] {
    if (stopping) {
      return;
    }
    stopping = true;
    if (ctl) {
      for (Informer* informer : ctl->caches.all()) {
        informer->stop();
      }
    }
    resync.stop();
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          co_await queue.shutDownWithDrain();
          co_await elector.release();
          for (auto& s : servers) {
            s->stop();
          }
          if (admission) {
            admission->stop();
          }
          if (signals) {
            signals->cancel();
          }
        },
        asio::detached);
  };
  signals = std::make_unique<runtime::SignalHandler>(io.get_executor(), [&](int sig) {
    spdlog::info("signal {}: draining", sig);
    shutdown();
  });

  const auto worker = [&]() -> asio::awaitable<void> {
    while (auto key = co_await queue.get()) {
      const auto start = std::chrono::steady_clock::now();
      ReconcileResult result;
      try {
        result = co_await ctl->reconciler.reconcile(*key);
      } catch (const std::exception& e) {
        result = {ReconcileResult::Outcome::Error, {}, e.what()};
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      switch (result.outcome) {
      case ReconcileResult::Outcome::Done:
        queue.forget(*key);
        metrics.observeReconcile(runtime::ReconcileResult::success, seconds);
        break;
      case ReconcileResult::Outcome::Requeue:
        queue.forget(*key);
        queue.addAfter(*key, result.after);
        metrics.observeReconcile(runtime::ReconcileResult::requeue, seconds);
        break;
      case ReconcileResult::Outcome::Error:
        spdlog::warn("reconcile {}: {}", *key, result.message);
        queue.addRateLimited(*key);
        metrics.observeReconcile(runtime::ReconcileResult::error, seconds);
        break;
      }
      queue.done(*key);
      metrics.setWorkqueueDepth(queue.len());
      metrics.setDriverDeployments(ctl->caches.driverDeployments.size());
    }
  };

  // Every replica keeps warm caches (readiness, a fast take-over, the
  // webhook's duplicate check); only the leader runs the workers that write.
  const auto startInformers = [&]() -> asio::awaitable<void> {
    for (Informer* informer : ctl->caches.all()) {
      asio::co_spawn(io, informer->run(), asio::detached);
    }
    while (!ctl->caches.synced() && !stopping) {
      co_await sleepFor(std::chrono::milliseconds(50));
    }
    spdlog::info("caches synced: {} DriverDeployments", ctl->caches.driverDeployments.size());
  };
  const auto startWorkers = [&]() -> asio::awaitable<void> {
    while (!ctl->caches.synced() && !stopping) {
      co_await sleepFor(std::chrono::milliseconds(50));
    }
    if (stopping) {
      co_return;
    }
    resync.start();
    for (int i = 0; i < options.workers; ++i) {
      asio::co_spawn(io, worker(), asio::detached);
    }
  };

  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        try {
          if (options.installCrds) {
            co_await installCrds(*client, embedded::crdYaml());
          }
          const kube::ResourceRef* csiDriverApi =
              co_await discoverCsiDriverApi(*client, options.installCrds);
          ctl = std::make_unique<Controllers>(*client, *csiDriverApi, queue,
                                              options.configPollPeriod);
          if (options.webhookPort > 0) {
            const std::string host = options.webhookHost.find(':') != std::string::npos
                                         ? "[" + options.webhookHost + "]"
                                         : options.webhookHost;
            admission = std::make_unique<webhook::WebhookServer>(
                io.get_executor(),
                webhook::WebhookOptions{
                    .bindAddress = host + ":" + std::to_string(options.webhookPort),
                    .certDir = options.webhookCertDir,
                    .log =
                        [](std::string_view m) {
                          // A failed handshake is the client's problem (e.g. an old CA).
                          const bool handshake = m.find("handshake") != std::string_view::npos;
                          spdlog::log(handshake ? spdlog::level::debug : spdlog::level::info,
                                      "webhook: {}", m);
                        },
                    .observe =
                        [&metrics](std::string_view outcome, double seconds) {
                          metrics.observeReview(outcome, seconds);
                        }},
                clusterView(ctl->caches), [&ctl] { return ctl->caches.synced(); });
            admission->start();
            spdlog::info("admission webhook listening on port {} (certificates from {})",
                         admission->port(), options.webhookCertDir);
          }
        } catch (const std::exception& e) {
          spdlog::error("start-up: {}", e.what());
          exitCode = 1;
          shutdown();
          co_return;
        }
        asio::co_spawn(io, startInformers(), asio::detached);
        if (!options.reconcile) {
          co_return; // `csi-operator webhook`: caches and the webhook only
        }
        if (!options.leaderElect) {
          metrics.setLeader(true);
          co_await startWorkers();
          co_return;
        }
        co_await elector.run(
            [&] {
              metrics.setLeader(true);
              asio::co_spawn(io, startWorkers(), asio::detached);
            },
            [&] {
              // Stop at once: nothing of this replica may write any more.
              metrics.setLeader(false);
              spdlog::error("leadership lost; exiting");
              std::_Exit(1);
            });
      },
      asio::detached);

  io.run();
  return exitCode;
}

} // namespace csiop::controller
