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

// The API server's version (/version), logged with its minor version; nullopt, with a warning,
// when it cannot be read (the operator then assumes a current server).
boost::asio::awaitable<std::optional<kube::VersionInfo>> serverVersion(kube::Client& client);
// Its minor version; nullopt when unknown or not a number.
std::optional<int> serverMinor(const std::optional<kube::VersionInfo>& version);

// On a server of another version than the built-in schema's (api::embeddedKubeSchema), reads
// the server's own (its OpenAPI v3 documents, which every authenticated client may read) and
// checks the embedded objects against it from then on (api::useKubeSchema): a field the server
// does not have is then an unknown field (pruned, refused by kubectl's default), not one sent for
// the server to refuse. Falls back to the built-in schema, with a warning, when it cannot.
boost::asio::awaitable<void> useServedKubeSchema(kube::Client& client,
                                                 const std::optional<kube::VersionInfo>& version);

} // namespace csiop::app
