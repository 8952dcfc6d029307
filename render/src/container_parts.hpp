// Pieces of the containers the operator renders (Linux and Windows pods alike).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "meta.hpp"

namespace csiop::render {

// The generated args, then the user's.
Json argsOf(std::initializer_list<std::string> generated, const std::vector<std::string>& extra);
void setResources(Json& c, const Json& resources);
// A container's name, image, pull policy and command (if it replaces the image's).
Json containerHead(const char* name, const std::string& image, const std::string& pullPolicy,
                   const std::optional<std::vector<std::string>>& command);
Json sidecarBase(const char* name, const api::EffectiveContainer& settings);

// How a sidecar reaches the driver's socket in its pod.
struct SocketAccess {
  std::string address; // its --csi-address
  Json mount;          // of the socket's directory; null: none
  // A Windows HostProcess container: it sees the host's paths without mounts, and starts its
  // command on the host, where the image's entrypoint path means nothing.
  bool hostProcess = false;
};
// sidecarBase; in a HostProcess container the command names `hostProcessBinary` (it is on the
// PATH of the container's sandbox) unless the user gives one.
Json sidecarHead(const char* name, const api::EffectiveContainer& settings,
                 const SocketAccess& socket, const char* hostProcessBinary);
// A sidecar's env: the generated variables, then the user's.
void setEnv(Json& c, const api::EffectiveContainer& settings, Json env);
// The securityContext (if any) and resources of a sidecar.
void setSecurityAndResources(Json& c, const api::EffectiveContainer& settings);
Json fieldRef(const char* name, const char* path);
// An HTTP GET probe of `endpoint`'s named port; a loopback endpoint is probed there (the
// kubelet reaches it only in a pod on the host's network, which validation ensures).
Json httpProbe(const char* path, const api::HttpEndpoint& endpoint, const char* port,
               int initialDelay, int timeout, int period, int failures);
Json tcpPort(const char* name, std::int32_t port);
// The driver container up to its lifecycle hooks: name, image, command, args, CSI_ENDPOINT
// (`endpoint`) and KUBE_NODE_NAME before the user's env, the healthz port and liveness probe of
// livenessprobe's endpoint, the readiness and startup probes. Its pod adds the rest.
Json driverContainerBase(const api::EffectiveDriver& d, const api::EffectiveProbe& probe,
                         const std::string& endpoint);
// The whole driver container: driverContainerBase, its securityContext (its own, else
// `fallbackSecurity` unless null), resources, and volumeMounts: the pod's `mounts`, then its own
// (none: no volumeMounts).
Json driverContainer(const api::EffectiveDriver& d, const api::EffectiveProbe& probe,
                     const std::string& endpoint, const Json& fallbackSecurity, Json mounts);
// A sidecar's livenessProbe on its own endpoint.
Json sidecarProbe(const char* path, const api::HttpEndpoint& endpoint, const char* port,
                  const api::EffectiveSidecarProbe& timings);

} // namespace csiop::render
