// Preparing the cluster for a run and cleaning up after it.
#pragma once

#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <csiop/kube/client.hpp>
#include <csiop/kube/http.hpp>

#include "context.hpp"

namespace csiop::bench {

// Registers `drivers` in the CSINode of every node (server-side apply, one request per node),
// as the kubelet would for node-driver-registrar; drivers empty withdraws the registrations.
// Returns the number of nodes.
boost::asio::awaitable<int> registerDrivers(kube::Client& client, std::vector<std::string> drivers);

// Opens `count` pooled connections to the API server (the client must keep that many idle), so
// that requests sent at once do not each start with a TLS handshake on the benchmark's single
// thread; that would delay reading their responses and so overstate latencies.
boost::asio::awaitable<void> warmConnections(kube::Client& client, int count);

// Polls GET /readyz until 200; false on timeout. Throws if the operator exits.
boost::asio::awaitable<bool> waitOperatorReady(Context& ctx, kube::HttpClient& health);

// Deletes every DriverDeployment labelled csiop-bench and waits until none is left; false on
// timeout. Needs the operator (it removes its finalizer).
boost::asio::awaitable<bool> deleteBenchDriverDeployments(Context& ctx);

// Waits until no namespace in `names` is terminating (a kept cluster's earlier run may have
// deleted them); the operator cannot create children in a terminating namespace.
boost::asio::awaitable<bool> waitNamespacesNotTerminating(Context& ctx,
                                                          std::vector<std::string> names);

// Deletes these namespaces (not waiting), for a cluster that is kept.
boost::asio::awaitable<void> deleteNamespaces(Context& ctx, std::vector<std::string> names);

// Waits until namespace `ns` has no pod left; false on timeout.
boost::asio::awaitable<bool> waitPodsGone(Context& ctx, std::string ns);

} // namespace csiop::bench
