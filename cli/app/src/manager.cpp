#include <csiop/app/manager.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
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
#include <csiop/crds.hpp>
#include <csiop/driverdeployment/cache_start.hpp>
#include <csiop/driverdeployment/caches.hpp>
#include <csiop/driverdeployment/condition_states.hpp>
#include <csiop/driverdeployment/reconciler.hpp>
#include <csiop/driverdeployment/volume_usage.hpp>
#include <csiop/driverdeployment/watches.hpp>
#include <csiop/http/server.hpp>
#include <csiop/runtime/events.hpp>
#include <csiop/runtime/leader.hpp>
#include <csiop/runtime/memory_release.hpp>
#include <csiop/runtime/operator_metrics.hpp>
#include <csiop/runtime/probes.hpp>
#include <csiop/runtime/resync.hpp>
#include <csiop/runtime/signals.hpp>
#include <csiop/runtime/supervised.hpp>
#include <csiop/runtime/workers.hpp>
#include <csiop/runtime/workqueue.hpp>
#include <csiop/webhook/server.hpp>

namespace csiop::app {
namespace {

namespace asio = boost::asio;
using api::Json;
using driverdeployment::Caches;
using driverdeployment::Reconciler;
using runtime::EventRecorder;
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

// How long a DELETE's review waits for the pods with volumes to be listed (the API server gives
// the webhook 10 s by default); after it, the review answers with what it knows.
constexpr std::chrono::seconds kWebhookPodsWait{5};

// How often the start of the informers and of the workers looks whether the caches are synced.
constexpr std::chrono::milliseconds kSyncPoll{50};

// What reconciles DriverDeployments: the caches, the event recorder and the reconciler, built
// once discovery has chosen the CSIDriver API. Every cache change queues the DriverDeployments
// it concerns (watches.hpp).
struct Reconciling {
  Reconciling(kube::Client& client, const kube::ResourceRef& csiDriverApi,
              runtime::WorkQueue& queue, std::chrono::milliseconds configPollPeriod,
              const std::vector<api::ObjectKind>& objectKinds)
      : caches(client, csiDriverApi, objectKinds), events(client, nowRfc3339),
        reconciler(client, caches, events, nowRfc3339, configPollPeriod) {
    driverdeployment::queueReconcilesOnChange(caches, reconciler, queue);
  }

  Caches caches;
  EventRecorder events;
  Reconciler reconciler;
};

// The webhook's view of the cluster: the operator's own caches.
webhook::ClusterView clusterView(Caches& caches, const std::vector<std::string>& driverNamespaces,
                                 std::optional<int> serverMinor) {
  return webhook::ClusterView{
      [&caches](const std::string& driverName) {
        std::vector<std::string> names;
        for (const Json* dd : caches.driverDeploymentsOf(driverName)) {
          names.push_back(api::metadataField(*dd, "name"));
        }
        return names;
      },
      [&caches](const std::string& driverName) { return caches.csiDrivers.get("", driverName); },
      [&caches](const std::string& driverName, const std::string& name, const std::string& ns) {
        return driverdeployment::describe(
            caches.volumesOf(driverName, driverdeployment::SmokeTestOwner{name, ns}));
      },
      caches.objectKinds(),
      driverNamespaces,
      serverMinor};
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

// The Kubernetes client, reporting every request to `metrics`; nullptr (logged) when the
// configuration cannot be loaded.
std::unique_ptr<kube::Client> connect(asio::io_context& io, const ManagerOptions& options,
                                      runtime::OperatorMetrics& metrics) {
  try {
    kube::ClientOptions clientOptions;
    // A pass sends each wave of a DriverDeployment's children at once (a dozen requests), and
    // the workers run side by side: keeping that many connections open saves a TCP and TLS
    // handshake per request when they come again.
    clientOptions.http.maxIdleConnections = kIdleConnectionsPerWorker * options.workers;
    clientOptions.observer = [&metrics](std::string_view verb, std::string_view resource, int code,
                                        std::chrono::nanoseconds) {
      metrics.observeApiRequest(verb, resource, code);
    };
    clientOptions.warnings = [&metrics](std::string_view verb, std::string_view resource,
                                        std::string_view ns, std::string_view name,
                                        std::string_view text) {
      metrics.observeApiWarning(resource);
      spdlog::warn("the API server warns about {} {} {}{}{}: {}", verb, resource, ns,
                   ns.empty() ? "" : "/", name, text);
    };
    return std::make_unique<kube::Client>(io.get_executor(),
                                          kube::loadDefault(options.kubeconfig, options.context),
                                          std::move(clientOptions));
  } catch (const std::exception& e) {
    spdlog::error("cannot configure the Kubernetes client: {}", e.what());
    return nullptr;
  }
}

// The admission webhook's log: a failed handshake is the client's problem (e.g. an old CA).
void logWebhook(std::string_view message) {
  const bool handshake = message.find("handshake") != std::string_view::npos;
  spdlog::log(handshake ? spdlog::level::debug : spdlog::level::info, "webhook: {}", message);
}

// One process of `csi-operator run` or `webhook`, in the order it comes up: the probe and
// metrics servers; start-up (CRDs, discovery, then the caches and the webhook); the informers on
// every replica; the workers on the leader only. Any supervised task's failure, or a signal,
// drains it (shutdown).
class Manager {
public:
  Manager(asio::io_context& io, const ManagerOptions& options, kube::Client& client,
          runtime::OperatorMetrics& metrics)
      : io_(io), options_(options), client_(client), metrics_(metrics), queue_(io.get_executor()),
        elector_(client, {.namespace_ = options.leaderElectionNamespace.empty()
                                            ? podNamespace()
                                            : options.leaderElectionNamespace,
                          .name = options.leaderElectionId,
                          .identity = identity()}),
        resync_(io.get_executor(), runtime::steadyClock(), queue_,
                [this] { return driverDeploymentNames(); }, {.period = options.resyncPeriod}),
        workers_(queue_, metrics_,
                 [this](std::string name) { return reconciling_->reconciler.reconcile(name); }),
        idleRelease_(io.get_executor(), runtime::steadyClock(), kQuietRelease),
        prerequisitePoll_(io) {
    addHealthChecks();
    workers_.afterEach([this] {
      metrics_.setDriverDeployments(reconciling_->caches.driverDeployments.size());
      idleRelease_.activity();
    });
    supervisor_.onFailure([this](const std::string&, const std::string&) {
      exitCode_ = 1;
      runtime::hardExitAfter(kFatalDrainDeadline, 1);
      shutdown();
    });
  }

  // The probe and metrics endpoints (those not off), listening; false (logged) if one cannot be.
  bool serveProbesAndMetrics();
  // Spawns start-up, and handles SIGTERM and SIGINT; io.run() then runs the process.
  void start();
  // 0 after a signal's drain, 1 after a failure.
  int exitCode() const { return exitCode_; }

private:
  void addHealthChecks();
  http::HttpHandler metricsEndpoint();
  std::vector<std::string> driverDeploymentNames() const;
  // CRDs, discovery, the caches and the webhook; then the informers, and (on the leader) the
  // workers.
  asio::awaitable<void> startUp();
  std::unique_ptr<webhook::WebhookServer> makeWebhookServer();
  // Every replica keeps warm caches (readiness, a fast take-over, the webhook's duplicate
  // check); only the leader runs the workers that write.
  asio::awaitable<void> startInformers();
  // What the webhook asks the API server, and readies of the caches before a DELETE.
  webhook::AuthorityApi webhookApi(Caches& caches);
  asio::awaitable<void> lead();
  // The workers, once the caches are synced; then the prerequisites poll until shutdown.
  asio::awaitable<void> startWorkers();
  // Stops the caches and timers, drains the queue, releases the lease, stops the servers.
  void shutdown();

  asio::io_context& io_;
  const ManagerOptions& options_;
  kube::Client& client_;
  runtime::OperatorMetrics& metrics_;
  runtime::WorkQueue queue_;
  std::unique_ptr<Reconciling> reconciling_; // once start-up (CRDs, discovery) is done
  std::optional<int> serverMinor_; // the API server's minor version, once start-up read it
  std::unique_ptr<webhook::WebhookServer> admission_;
  // The long-lived coroutines (informers, workers, start-up, leader's work, drain): one that
  // ends with an unexpected exception fails both probes and ends the process.
  runtime::TaskSupervisor supervisor_;
  runtime::HealthChecks healthz_{"healthz"};
  runtime::HealthChecks readyz_{"readyz"};
  std::vector<std::unique_ptr<http::HttpServer>> servers_;
  LeaderElector elector_;
  runtime::PeriodicResync resync_;
  // One reconcile per DriverDeployment at a time, then what its result asks.
  runtime::Workers workers_;
  // Once the reconciles stop (a rollout converged), the heap's freed chunks go back to the system.
  runtime::IdleMemoryRelease idleRelease_;
  // What a driver needs but the operator does not create (CRDs, PriorityClasses): asked for
  // again every requeue::kPrerequisitesMissing while some DriverDeployment lacks it.
  asio::steady_timer prerequisitePoll_;
  std::unique_ptr<runtime::SignalHandler> signals_;
  int exitCode_ = 0;
  bool stopping_ = false;
  bool working_ = false; // the workers run: this replica leads
};

void Manager::addHealthChecks() {
  healthz_.add("tasks", supervisor_.check());
  readyz_.add("tasks", supervisor_.check());
  readyz_.add("informers", [this] {
    return reconciling_ && reconciling_->caches.synced()
               ? runtime::CheckResult::passed()
               : runtime::CheckResult::failed("caches not synced yet");
  });
}

// The queue depth as of the scrape, not only as of the last reconcile's end. The caches' sizes
// walk every cached object: at most every kCacheSizesPeriod.
http::HttpHandler Manager::metricsEndpoint() {
  return [this, measured = std::chrono::steady_clock::time_point(),
          serve = runtime::metricsHandler(metrics_)](const http::HttpRequest& request) mutable {
    metrics_.setWorkqueueDepth(queue_.len());
    if (reconciling_) {
      metrics_.setUnregisteredNodes(reconciling_->reconciler.unregisteredNodes());
      metrics_.setVolumeFailures(reconciling_->reconciler.volumeFailures());
    }
    if (reconciling_ && working_) { // the leader, as the two above
      metrics_.setConditions(
          driverdeployment::conditionStates(reconciling_->caches.driverDeployments.list()));
    }
    if (const auto now = std::chrono::steady_clock::now();
        reconciling_ && now - measured >= kCacheSizesPeriod) {
      measured = now;
      // Several caches may hold one resource (the Events of each reason): summed.
      std::map<std::string, std::pair<std::size_t, std::size_t>> byResource;
      std::vector<runtime::RunnableCache*> caches = reconciling_->caches.all();
      for (runtime::RunnableCache* pods : reconciling_->caches.podCaches()) {
        caches.push_back(pods);
      }
      for (const runtime::RunnableCache* cache : caches) {
        auto& [objects, heapBytes] = byResource[cache->cachedResource().resource];
        objects += cache->cachedObjects();
        heapBytes += cache->cachedHeapBytes();
      }
      for (const auto& [resource, sizes] : byResource) {
        metrics_.setCache(resource, sizes.first, sizes.second);
      }
    }
    return serve(request);
  };
}

bool Manager::serveProbesAndMetrics() {
  try {
    if (http::parseBindAddress(options_.healthProbeBindAddress)) {
      auto s =
          std::make_unique<http::HttpServer>(io_.get_executor(), options_.healthProbeBindAddress);
      s->handle("/healthz", healthz_.handler());
      s->handle("/readyz", readyz_.handler());
      servers_.push_back(std::move(s));
    }
    if (http::parseBindAddress(options_.metricsBindAddress)) {
      auto s = std::make_unique<http::HttpServer>(io_.get_executor(), options_.metricsBindAddress);
      s->handle("/metrics", metricsEndpoint());
      servers_.push_back(std::move(s));
    }
    for (auto& s : servers_) {
      s->start();
    }
    return true;
  } catch (const std::exception& e) {
    spdlog::error("cannot serve probes/metrics: {}", e.what());
    return false;
  }
}

std::vector<std::string> Manager::driverDeploymentNames() const {
  std::vector<std::string> keys;
  for (const Json* dd : reconciling_->caches.driverDeployments.list()) {
    keys.push_back((*dd)["metadata"]["name"]);
  }
  return keys;
}

void Manager::start() {
  signals_ = std::make_unique<runtime::SignalHandler>(io_.get_executor(), [this](int sig) {
    spdlog::info("signal {}: draining", sig);
    shutdown();
  });
  asio::co_spawn(io_, startUp(), supervisor_.supervise("start-up"));
}

void Manager::shutdown() {
  if (stopping_) {
    return;
  }
  stopping_ = true;
  if (reconciling_) {
    for (runtime::RunnableCache* cache : reconciling_->caches.all()) {
      cache->stop();
    }
    for (runtime::OnDemandCache* cache : reconciling_->caches.onDemand()) {
      cache->stop();
    }
    reconciling_->caches.podLookups.stop();
  }
  resync_.stop();
  idleRelease_.stop();
  prerequisitePoll_.cancel();
  asio::co_spawn(
      io_,
      [this]() -> asio::awaitable<void> {
        co_await queue_.shutDownWithDrain();
        co_await elector_.release();
        for (auto& s : servers_) {
          s->stop();
        }
        if (admission_) {
          admission_->stop();
        }
        if (signals_) {
          signals_->cancel();
        }
      },
      supervisor_.supervise("shutdown"));
}

std::unique_ptr<webhook::WebhookServer> Manager::makeWebhookServer() {
  const std::string host = options_.webhookHost.find(':') != std::string::npos
                               ? "[" + options_.webhookHost + "]"
                               : options_.webhookHost;
  return std::make_unique<webhook::WebhookServer>(
      io_.get_executor(),
      webhook::WebhookOptions{
          .bindAddress = host + ":" + std::to_string(options_.webhookPort),
          .certDir = options_.webhookCertDir,
          .log = logWebhook,
          .observe = [this](std::string_view outcome,
                            double seconds) { metrics_.observeReview(outcome, seconds); }},
      clusterView(reconciling_->caches, options_.driverNamespaces, serverMinor_),
      webhookApi(reconciling_->caches), [this] { return reconciling_->caches.synced(); });
}

webhook::AuthorityApi Manager::webhookApi(Caches& caches) {
  webhook::AuthorityApi api = kubeAuthority(client_);
  api.readyVolumesInUse = [&caches](std::string driverName) -> asio::awaitable<bool> {
    if (!caches.servesInlineVolumes(driverName)) {
      co_return true; // no pod can have an inline volume of it: the rest is always cached
    }
    co_return co_await caches.demandVolumeUsers(kWebhookPodsWait);
  };
  return api;
}

asio::awaitable<void> Manager::startUp() {
  try {
    if (options_.installCrds) {
      co_await installCrds(client_, embedded::crdYaml());
    }
    const kube::ResourceRef* csiDriverApi =
        co_await discoverCsiDriverApi(client_, options_.installCrds);
    reconciling_ = std::make_unique<Reconciling>(client_, *csiDriverApi, queue_,
                                                 options_.configPollPeriod, options_.objectKinds);
    reconciling_->reconciler.setSmokeImage(options_.smokeImage, options_.smokeImagePullPolicy);
    reconciling_->reconciler.setOperatorVersion(options_.operatorVersion);
    const std::optional<kube::VersionInfo> version = co_await serverVersion(client_);
    serverMinor_ = serverMinor(version);
    reconciling_->reconciler.setServerMinor(serverMinor_);
    co_await useServedKubeSchema(client_, version);
    if (options_.webhookPort > 0) {
      admission_ = makeWebhookServer();
      admission_->start();
      spdlog::info("admission webhook listening on port {} (certificates from {})",
                   admission_->port(), options_.webhookCertDir);
    }
  } catch (const std::exception& e) {
    spdlog::error("start-up: {}", e.what());
    exitCode_ = 1;
    shutdown();
    co_return;
  }
  asio::co_spawn(io_, startInformers(), supervisor_.supervise("informers' start"));
  if (!options_.reconcile) {
    co_return; // `csi-operator webhook`: caches and the webhook only
  }
  co_await lead();
}

asio::awaitable<void> Manager::startInformers() {
  for (runtime::OnDemandCache* cache : reconciling_->caches.onDemand()) {
    cache->setSpawn([this, cache](asio::awaitable<void> task) {
      asio::co_spawn(io_, std::move(task), supervisor_.supervise("informer for " + cache->what()));
    });
  }
  const auto groups = driverdeployment::cacheStartGroups(reconciling_->caches);
  for (const auto& group : groups) {
    for (runtime::RunnableCache* cache : group) {
      asio::co_spawn(io_, cache->run(),
                     supervisor_.supervise("informer for " + cache->cachedResource().resource));
    }
    while (!driverdeployment::groupSynced(group) && !stopping_) {
      co_await sleepFor(kSyncPoll);
    }
    if (stopping_) {
      co_return;
    }
  }
  spdlog::info("caches synced: {} DriverDeployments",
               reconciling_->caches.driverDeployments.size());
}

asio::awaitable<void> Manager::lead() {
  if (!options_.leaderElect) {
    metrics_.setLeader(true);
    co_await startWorkers();
    co_return;
  }
  co_await elector_.run(
      [this] {
        metrics_.setLeader(true);
        asio::co_spawn(io_, startWorkers(), supervisor_.supervise("leader's work"));
      },
      [this] {
        // Stop at once: nothing of this replica may write any more.
        metrics_.setLeader(false);
        spdlog::error("leadership lost; exiting");
        std::_Exit(1);
      });
}

asio::awaitable<void> Manager::startWorkers() {
  while (!reconciling_->caches.synced() && !stopping_) {
    co_await sleepFor(kSyncPoll);
  }
  if (stopping_) {
    co_return;
  }
  resync_.start();
  workers_.start(io_.get_executor(), options_.workers, supervisor_);
  working_ = true;
  while (!stopping_) {
    prerequisitePoll_.expires_after(driverdeployment::requeue::kPrerequisitesMissing);
    boost::system::error_code ec;
    co_await prerequisitePoll_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (stopping_) {
      break;
    }
    for (const std::string& name : co_await reconciling_->reconciler.prerequisitesAppeared()) {
      queue_.add(name);
    }
  }
}

} // namespace

int runManager(const ManagerOptions& options) {
  asio::io_context io;
  runtime::OperatorMetrics metrics;
  const std::unique_ptr<kube::Client> client = connect(io, options, metrics);
  if (!client) {
    return 1;
  }
  Manager manager(io, options, *client, metrics);
  if (!manager.serveProbesAndMetrics()) {
    return 1;
  }
  manager.start();
  io.run();
  return manager.exitCode();
}

} // namespace csiop::app
