#include "setup.hpp"

#include <set>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <csiop/api/json_access.hpp>

#include "workload.hpp"

namespace csiop::bench {

namespace asio = boost::asio;
namespace r = kube::resources;
using namespace std::chrono_literals;

asio::awaitable<int> registerDrivers(kube::Client& client, std::vector<std::string> drivers) {
  const kube::ListResult nodes = co_await client.listAll(r::nodes, "");
  for (const Json& node : nodes.items) {
    Json body = csiNodeRegistration(node, drivers);
    co_await client.apply(r::csinodes, std::move(body));
  }
  co_return static_cast<int>(nodes.items.size());
}

namespace {

asio::awaitable<void> versionOnce(kube::Client& client, int& pending) {
  try {
    co_await client.version();
  } catch (const std::exception&) {
    // only a warm-up
  }
  --pending;
}

} // namespace

asio::awaitable<void> warmConnections(kube::Client& client, int count) {
  int pending = count;
  for (int i = 0; i < count; ++i) {
    asio::co_spawn(client.executor(), versionOnce(client, pending), asio::detached);
  }
  const auto deadline = Clock::now() + 60s;
  while (pending > 0 && Clock::now() < deadline) {
    co_await pause(10ms);
  }
}

asio::awaitable<bool> waitOperatorReady(Context& ctx, kube::HttpClient& health) {
  const auto deadline = Clock::now() + 120s;
  while (Clock::now() < deadline) {
    if (!ctx.operatorProcess.running()) {
      throw std::runtime_error("the operator exited at start (code " +
                               std::to_string(ctx.operatorProcess.exitCode().value_or(-1)) +
                               "); see " + ctx.operatorLog);
    }
    int status = 0;
    try {
      kube::HttpRequest request(kube::Method::Get, "/readyz");
      request.accept = "text/plain";
      request.timeout = 2s;
      const kube::HttpResponse response = co_await health.send(std::move(request));
      status = response.status;
    } catch (const kube::TransportError&) {
      status = 0; // not listening yet
    }
    if (status == 200) {
      co_return true;
    }
    co_await pause(100ms);
  }
  co_return false;
}

asio::awaitable<bool> deleteBenchDriverDeployments(Context& ctx) {
  kube::ListOptions options;
  options.labelSelector = kBenchLabel;
  const auto deadline = Clock::now() + ctx.timeout();
  std::set<std::string> asked;
  for (;;) {
    const kube::ListResult list = co_await ctx.client.listAll(r::driverdeployments, "", options);
    if (list.items.empty()) {
      co_return true;
    }
    for (const Json& dd : list.items) {
      const std::string name = api::metadataField(dd, "name");
      if (asked.insert(name).second) {
        try {
          co_await ctx.client.remove(r::driverdeployments, "", name);
        } catch (const kube::ApiError& e) {
          if (!e.isNotFound()) {
            throw;
          }
        }
      }
    }
    if (Clock::now() >= deadline || !ctx.operatorProcess.running()) {
      co_return false;
    }
    co_await pause(500ms);
  }
}

asio::awaitable<bool> waitNamespacesNotTerminating(Context& ctx, std::vector<std::string> names) {
  const std::set<std::string> wanted(names.begin(), names.end());
  const auto deadline = Clock::now() + ctx.timeout();
  for (;;) {
    const kube::ListResult list = co_await ctx.client.listAll(r::namespaces, "");
    std::size_t terminating = 0;
    for (const Json& ns : list.items) {
      if (wanted.contains(api::metadataField(ns, "name")) &&
          ns["metadata"].contains("deletionTimestamp")) {
        ++terminating;
      }
    }
    if (terminating == 0) {
      co_return true;
    }
    if (Clock::now() >= deadline) {
      co_return false;
    }
    progress(std::to_string(terminating) + " namespace(s) of an earlier run still terminating");
    co_await pause(2s);
  }
}

asio::awaitable<void> deleteNamespaces(Context& ctx, std::vector<std::string> names) {
  for (const auto& name : names) {
    try {
      co_await ctx.client.remove(r::namespaces, "", name);
    } catch (const kube::ApiError& e) {
      if (!e.isNotFound()) {
        throw;
      }
    }
  }
}

asio::awaitable<bool> waitPodsGone(Context& ctx, std::string ns) {
  const auto deadline = Clock::now() + ctx.timeout();
  for (;;) {
    kube::ListOptions options;
    options.limit = 1;
    const kube::ListResult page = co_await ctx.client.list(r::pods, ns, options);
    if (page.items.empty()) {
      co_return true;
    }
    if (Clock::now() >= deadline) {
      co_return false;
    }
    co_await pause(250ms);
  }
}

} // namespace csiop::bench
