#include <csiop/app/manager.hpp>

#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/app/start_up.hpp>
#include <csiop/app/webhook_authority.hpp>
#include <csiop/controller/caches.hpp>
#include <csiop/controller/reconciler.hpp>
#include <csiop/controller/volume_usage.hpp>
#include <csiop/controller/watches.hpp>
#include <csiop/crds.hpp>
#include <csiop/http/server.hpp>
#include <csiop/runtime/controller.hpp>
#include <csiop/runtime/events.hpp>
#include <csiop/runtime/leader.hpp>
#include <csiop/runtime/memory_release.hpp>
#include <csiop/runtime/operator_metrics.hpp>
#include <csiop/runtime/probes.hpp>
#include <csiop/runtime/resync.hpp>
#include <csiop/runtime/signals.hpp>
#include <csiop/runtime/supervised.hpp>
#include <csiop/runtime/workqueue.hpp>
#include <csiop/webhook/server.hpp>

namespace csiop::app {
namespace {

namespace asio = boost::asio;
using api::Json;
using controller::Caches;
using controller::Reconciler;
using runtime::EventRecorder;
using runtime::Informer;
using runtime::LeaderElector;
using runtime::nowRfc3339;

asio::awaitable<void> sleepFor(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  boost::system::error_code ec;
  co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

// Connections to the API server kept open for the next requests, per worker (HTTP/1.1: one
// request at a time on each).
constexpr int kIdleConnectionsPerWorker = 8;
// How long without a reconcile before the freed memory is handed back (memory_release.hpp):
// longer than the pod change batch (a rollout reconciles every second while pods change).
constexpr std::chrono::seconds kQuietRelease{2};

// How often a scrape of /metrics measures the caches again (Store::heapBytes walks them).
constexpr std::chrono::seconds kCacheSizesPeriod{10};

// How long the drain after a background task's failure may take before the process exits
// anyway (it must never hang: the kubelet restarts it once it has exited).
constexpr std::chrono::seconds kFatalDrainDeadline{10};

// What reconciles: the caches, the event recorder and the reconciler, built
// once discovery has chosen the CSIDriver API. Every cache change queues the
// DriverDeployments it concerns.
struct Controllers {
  Controllers(kube::Client& client, const kube::ResourceRef& csiDriverApi,
              runtime::WorkQueue& queue, std::chrono::milliseconds configPollPeriod,
              const std::vector<api::ObjectKind>& objectKinds)
      : caches(client, csiDriverApi, objectKinds), events(client, nowRfc3339),
        reconciler(client, caches, events, nowRfc3339, configPollPeriod) {
    controller::queueReconcilesOnChange(caches, reconciler, queue);
  }

  Caches caches;
  EventRecorder events;
  Reconciler reconciler;
};

// The webhook's view of the cluster: the operator's own caches.
webhook::ClusterView clusterView(Caches& caches, const std::vector<std::string>& driverNamespaces) {
  return webhook::ClusterView{
      [&caches](const std::string& driverName) {
        std::vector<std::string> names;
        for (const Json* dd : caches.driverDeploymentsOf(driverName)) {
          names.push_back(api::metadataField(*dd, "name"));
        }
        return names;
      },
      [&caches](const std::string& driverName) { return caches.csiDrivers.get("", driverName); },
      [&caches](const std::string& driverName) {
        return controller::describe(caches.volumesOf(driverName));
      },
      caches.objectKinds(), driverNamespaces};
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
    // A pass sends each wave of a DriverDeployment's children at once (a dozen requests), and
    // the workers run side by side: keeping that many connections open saves a TCP and TLS
    // handshake per request when they come again.
    clientOptions.http.maxIdleConnections = kIdleConnectionsPerWorker * options.workers;
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

  // The long-lived coroutines (informers, workers, start-up, leader's work, drain): one that
  // ends with an unexpected exception fails both probes and ends the process (below).
  runtime::TaskSupervisor supervisor;
  runtime::HealthChecks healthz("healthz");
  runtime::HealthChecks readyz("readyz");
  healthz.add("tasks", supervisor.check());
  readyz.add("tasks", supervisor.check());
  readyz.add("informers", [&ctl] {
    return ctl && ctl->caches.synced() ? runtime::CheckResult::passed()
                                       : runtime::CheckResult::failed("caches not synced yet");
  });
  std::vector<std::unique_ptr<http::HttpServer>> servers;
  try {
    if (http::parseBindAddress(options.healthProbeBindAddress)) {
      auto s =
          std::make_unique<http::HttpServer>(io.get_executor(), options.healthProbeBindAddress);
      s->handle("/healthz", healthz.handler());
      s->handle("/readyz", readyz.handler());
      servers.push_back(std::move(s));
    }
    if (http::parseBindAddress(options.metricsBindAddress)) {
      auto s = std::make_unique<http::HttpServer>(io.get_executor(), options.metricsBindAddress);
      // The queue depth as of the scrape, not only as of the last reconcile's end.
      // The caches' sizes walk every cached object: at most every kCacheSizesPeriod.
      s->handle(
          "/metrics",
          [&queue, &metrics, &ctl, measured = std::chrono::steady_clock::time_point(),
           serve = runtime::metricsHandler(metrics)](const http::HttpRequest& request) mutable {
            metrics.setWorkqueueDepth(queue.len());
            if (const auto now = std::chrono::steady_clock::now();
                ctl && now - measured >= kCacheSizesPeriod) {
              measured = now;
              for (const runtime::RunnableCache* cache : ctl->caches.all()) {
                metrics.setCache(cache->cachedResource().resource, cache->cachedObjects(),
                                 cache->cachedHeapBytes());
              }
            }
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
  // The workers: one reconcile per DriverDeployment at a time, then what its result asks.
  runtime::Controller workers(queue, metrics,
                              [&ctl](std::string name) { return ctl->reconciler.reconcile(name); });
  // Once the reconciles stop (a rollout converged), the heap's freed chunks go back to the system.
  runtime::IdleMemoryRelease idleRelease(io.get_executor(), runtime::steadyClock(), kQuietRelease);
  workers.afterEach([&] {
    metrics.setDriverDeployments(ctl->caches.driverDeployments.size());
    idleRelease.activity();
  });
  int exitCode = 0;
  bool stopping = false;
  // What a driver needs but the operator does not create (CRDs, PriorityClasses): asked for
  // again every requeue::kPrerequisitesMissing while some DriverDeployment lacks it.
  asio::steady_timer prerequisitePoll(io);
  std::unique_ptr<runtime::SignalHandler> signals;

  const auto shutdown = [&] {
    if (stopping) {
      return;
    }
    stopping = true;
    if (ctl) {
      for (runtime::RunnableCache* cache : ctl->caches.all()) {
        cache->stop();
      }
    }
    resync.stop();
    idleRelease.stop();
    prerequisitePoll.cancel();
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
        supervisor.supervise("shutdown"));
  };
  supervisor.onFailure([&](const std::string&, const std::string&) {
    exitCode = 1;
    runtime::hardExitAfter(kFatalDrainDeadline, 1);
    shutdown();
  });
  signals = std::make_unique<runtime::SignalHandler>(io.get_executor(), [&](int sig) {
    spdlog::info("signal {}: draining", sig);
    shutdown();
  });

  // Every replica keeps warm caches (readiness, a fast take-over, the
  // webhook's duplicate check); only the leader runs the workers that write.
  const auto startInformers = [&]() -> asio::awaitable<void> {
    for (runtime::RunnableCache* cache : ctl->caches.all()) {
      asio::co_spawn(io, cache->run(),
                     supervisor.supervise("informer for " + cache->cachedResource().resource));
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
    workers.start(io.get_executor(), options.workers, supervisor);
    while (!stopping) {
      prerequisitePoll.expires_after(controller::requeue::kPrerequisitesMissing);
      boost::system::error_code ec;
      co_await prerequisitePoll.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (stopping) {
        break;
      }
      for (const std::string& name : co_await ctl->reconciler.prerequisitesAppeared()) {
        queue.add(name);
      }
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
                                              options.configPollPeriod, options.objectKinds);
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
                clusterView(ctl->caches, options.driverNamespaces), kubeAuthority(*client),
                [&ctl] { return ctl->caches.synced(); });
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
        asio::co_spawn(io, startInformers(), supervisor.supervise("informers' start"));
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
              asio::co_spawn(io, startWorkers(), supervisor.supervise("leader's work"));
            },
            [&] {
              // Stop at once: nothing of this replica may write any more.
              metrics.setLeader(false);
              spdlog::error("leadership lost; exiting");
              std::_Exit(1);
            });
      },
      supervisor.supervise("start-up"));

  io.run();
  return exitCode;
}

} // namespace csiop::app
