#include "sections.hpp"

#include <csiop/api/json_access.hpp>

namespace csiop::api::validation {

const std::set<std::string> kNodeVolumes = {"socket-dir", "registration-dir", "mountpoint-dir",
                                            "plugins-dir", "dev-dir"};
const std::set<std::string> kControllerVolumes = {"socket-dir"};

namespace {} // namespace

void podContainers(Validator& v, const std::string& path, const PodSettings& pod,
                   const std::set<std::string>& volumes, const std::string& driverName) {
  std::set<std::string> names = ownSidecarNames();
  names.insert(driverName);
  v.containers(path + ".initContainers", pod.initContainers, names, volumes);
  v.containers(path + ".extraContainers", pod.extraContainers, names, volumes);
}

void reservePort(Validator& v, Ports& reserved, const std::string& path,
                 const std::optional<std::string>& text, const char* portField,
                 const HttpEndpoint& endpoint) {
  if (!endpoint.enabled) {
    return;
  }
  const std::string field = path + "." + (text ? "httpEndpoint" : portField);
  if (const auto it = reserved.find(endpoint.port); it != reserved.end()) {
    v.add(invalid(field, endpoint.port, "is used by " + it->second));
    return;
  }
  reserved[endpoint.port] = field;
}

void livenessSidecar(Validator& v, Ports& reserved, const std::string& path,
                     const std::optional<LivenessProbe>& liveness, bool hostNetwork,
                     const std::string& hostNetworkPath) {
  const LivenessProbe probe = liveness.value_or(LivenessProbe{});
  if (probe.enabled.value_or(true)) {
    livenessProbe(v, path, probe);
    reservePort(v, reserved, path, probe.httpEndpoint, "port",
                v.httpEndpoint(path, probe.httpEndpoint, probe.port, "port",
                               defaults::kLivenessPort, false, hostNetwork, hostNetworkPath));
  }
}

void livenessProbe(Validator& v, const std::string& path, const LivenessProbe& probe) {
  v.seconds(path + ".initialDelaySeconds", probe.initialDelaySeconds, 0);
  v.seconds(path + ".timeoutSeconds", probe.timeoutSeconds, 1);
  v.seconds(path + ".periodSeconds", probe.periodSeconds, 1);
  v.seconds(path + ".failureThreshold", probe.failureThreshold, 1);
}

std::string driverName(const DriverDeploymentSpec& spec,
                       const std::optional<DriverContainer>& override) {
  if (override && override->name) {
    return *override->name;
  }
  return spec.driver.name.value_or(defaults::kDriverContainerName);
}

std::set<std::string> driverInPod(Validator& v, const DriverDeploymentSpec& spec,
                                  const std::optional<DriverContainer>& override,
                                  const std::string& overridePath,
                                  const std::set<std::string>& reservedVolumes,
                                  const std::set<std::string>& reservedPaths,
                                  const Ports& reservedPorts) {
  std::set<std::string> volumeNames = reservedVolumes;
  v.driverContainer("spec.driver", spec.driver, volumeNames, reservedVolumes);
  if (override) {
    v.driverContainer(overridePath, *override, volumeNames, reservedVolumes);
  }
  // Mounts and ports as the pod will have them.
  const bool ownMounts = override && override->volumeMounts;
  const auto& mounts = ownMounts ? override->volumeMounts : spec.driver.volumeMounts;
  const std::string mountsPath =
      (ownMounts ? overridePath : std::string("spec.driver")) + ".volumeMounts";
  v.volumeMounts(mountsPath, mounts, volumeNames, reservedPaths);

  const bool ownPorts = override && override->ports;
  const auto& ports = ownPorts ? override->ports : spec.driver.ports;
  const std::string portsPath = (ownPorts ? overridePath : std::string("spec.driver")) + ".ports";
  if (ports && ports->is_array()) {
    for (std::size_t i = 0; i < ports->size(); ++i) {
      const Json& p = (*ports)[i];
      if (!p.is_object() || !p.contains("containerPort") ||
          !p["containerPort"].is_number_integer()) {
        continue;
      }
      const auto n = p["containerPort"].get<std::int64_t>();
      if (const auto it = reservedPorts.find(n); it != reservedPorts.end()) {
        v.add(invalid(idx(portsPath, i) + ".containerPort", n, "is used by " + it->second));
      }
    }
  }
  return volumeNames;
}

} // namespace csiop::api::validation
