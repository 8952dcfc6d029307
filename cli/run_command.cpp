#include <memory>
#include <ostream>

#include <nlohmann/json.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <csiop/api/formats.hpp>
#include <csiop/app/manager.hpp>

#include "commands.hpp"
#include "operator_version.hpp"

namespace csiop::cli {
namespace {

struct RunOptions {
  app::ManagerOptions manager;
  std::vector<std::string> objectKinds;
  std::string logFormat = "text";
  int verbosity = 0;
  std::string resyncPeriod = "10m";
  std::string configPollPeriod = "10s";
};

// %* in a pattern: the message as a JSON string (quoted and escaped).
class JsonMessage : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string quoted = nlohmann::json(std::string(msg.payload.data(), msg.payload.size()))
                                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(quoted.data(), quoted.data() + quoted.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessage>();
  }
};

void setupLogging(const RunOptions& o) {
  spdlog::set_level(o.verbosity >= 4   ? spdlog::level::trace
                    : o.verbosity >= 2 ? spdlog::level::debug
                                       : spdlog::level::info);
  if (o.logFormat == "json") {
    // One JSON object per line.
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessage>('*').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","msg":%*})");
    spdlog::set_formatter(std::move(formatter));
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%-5l%$ %v", spdlog::pattern_time_type::utc);
  }
}

// Flags `run` and `webhook` share: the connection, probes, metrics, the webhook, logging.
void addCommonFlags(CLI::App* cmd, RunOptions& o) {
  auto& m = o.manager;
  addObjectKindOption(cmd, o.objectKinds);
  cmd->add_option("--kubeconfig", m.kubeconfig,
                  "Path to a kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  cmd->add_option("--context", m.context, "kubeconfig context (default: the current one)");
  cmd->add_option("--metrics-bind-address", m.metricsBindAddress,
                  "Address of the Prometheus /metrics endpoint (0 disables it)")
      ->capture_default_str();
  cmd->add_option("--health-probe-bind-address", m.healthProbeBindAddress,
                  "Address of /healthz and /readyz (0 disables them)")
      ->capture_default_str();
  cmd->add_option("--webhook-host", m.webhookHost,
                  "Address the admission webhook listens on (default: every interface)");
  cmd->add_option("--webhook-cert-dir", m.webhookCertDir,
                  "Directory with the webhook's tls.crt and tls.key (reloaded when they change)")
      ->capture_default_str();
  cmd->add_option("--driver-namespace", m.driverNamespaces,
                  "A namespace drivers may be deployed into; repeatable. Set: the webhook refuses "
                  "a DriverDeployment that would put an object elsewhere (the chart's "
                  "rbac.driverNamespaces, whose Roles grant the operator only these)")
      ->check([](const std::string& ns) {
        const auto errors = api::formats::dns1123Label(ns);
        return errors.empty() ? std::string() : errors.front();
      });
  cmd->add_option("--smoke-image", m.smokeImage,
                  "The image the smoke volume tests of verified rollouts run in: the operator's "
                  "own (spec.rollout.smokeVolume; the chart sets it)");
  cmd->add_option("--smoke-image-pull-policy", m.smokeImagePullPolicy, "Its pull policy")
      ->check(CLI::IsMember({"Always", "IfNotPresent", "Never"}))
      ->capture_default_str();
  cmd->add_option("--log-format", o.logFormat, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("-v,--v", o.verbosity, "Log verbosity (2: debug, 4: trace)")
      ->capture_default_str();
}

} // namespace

Command addWebhook(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand(
      "webhook", "Serve only the admission webhook (and the caches it reads); for testing");
  o->manager.reconcile = false;
  o->manager.installCrds = false;
  o->manager.webhookPort = 9443;
  addCommonFlags(cmd, *o);
  cmd->add_option("--webhook-port", o->manager.webhookPort, "HTTPS port of the admission webhook")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  return [o](Streams& s) {
    setupLogging(*o);
    const auto kinds = objectKinds(o->objectKinds, s.err);
    if (!kinds) {
      return 2;
    }
    o->manager.objectKinds = *kinds;
    return app::runManager(o->manager);
  };
}

Command addRun(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run the operator: reconcile DriverDeployments");
  auto& m = o->manager;
  m.operatorVersion = operatorVersion();
  addCommonFlags(cmd, *o);
  cmd->add_option("--webhook-port", m.webhookPort,
                  "HTTPS port of the admission webhook, served by every replica (0: off)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_flag("--leader-elect", m.leaderElect,
                "Elect a leader with a Lease, so that several replicas can run");
  cmd->add_option("--leader-election-namespace", m.leaderElectionNamespace,
                  "Namespace of the Lease (default: the pod's namespace)");
  cmd->add_option("--leader-election-id", m.leaderElectionId, "Name of the Lease")
      ->capture_default_str();
  cmd->add_option("--workers", m.workers, "DriverDeployments reconciled concurrently")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--resync-period", o->resyncPeriod,
                  "Reconcile every DriverDeployment at least this often (Go duration)")
      ->check([](const std::string& s) {
        const auto d = api::formats::goDuration(s);
        return d && *d >= 1 ? std::string() : "must be a Go duration of at least 1s";
      })
      ->capture_default_str();
  cmd->add_option("--config-poll-period", o->configPollPeriod,
                  "Read the ConfigMaps and Secrets that a driver's pods reference this often, "
                  "rolling the pods when their content changes (Go duration)")
      ->check([](const std::string& s) {
        const auto d = api::formats::goDuration(s);
        return d && *d >= 1 ? std::string() : "must be a Go duration of at least 1s";
      })
      ->capture_default_str();
  cmd->add_flag("!--no-install-crds", m.installCrds,
                "Do not install or upgrade the DriverDeployment CRD at start");
  return [o](Streams& s) {
    setupLogging(*o);
    const auto kinds = objectKinds(o->objectKinds, s.err);
    if (!kinds) {
      return 2;
    }
    o->manager.objectKinds = *kinds;
    o->manager.resyncPeriod =
        std::chrono::seconds(static_cast<long>(*api::formats::goDuration(o->resyncPeriod)));
    o->manager.configPollPeriod =
        std::chrono::seconds(static_cast<long>(*api::formats::goDuration(o->configPollPeriod)));
    return app::runManager(o->manager);
  };
}

} // namespace csiop::cli
