// Start-up of the operator, before its caches: the CRDs it serves, which CSIDriver API the
// cluster has, and the API server's version.
#pragma once

#include <optional>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include <csiop/kube/client.hpp>

namespace csiop::app {

// Installs or upgrades the CRDs in `yaml` (server-side apply) and waits until the API server
// serves them (Established).
boost::asio::awaitable<void> installCrds(kube::Client& client, std::string_view yaml);

// The CSIDriver API to use: storage.k8s.io/v1 where served (Kubernetes 1.18+), else the
// csi.storage.k8s.io/v1alpha1 CRD of 1.12-1.13, installed if `mayInstall`.
boost::asio::awaitable<const kube::ResourceRef*> discoverCsiDriverApi(kube::Client& client,
                                                                      bool mayInstall);

// The API server's minor version (/version), logged with its gitVersion; nullopt, with a
// warning, when it cannot be read or is not a number (the operator then assumes a current
// server).
boost::asio::awaitable<std::optional<int>> serverMinor(kube::Client& client);

} // namespace csiop::app
