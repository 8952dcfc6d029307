#include "sections.hpp"

#include <csiop/api/command_line.hpp>
#include <csiop/api/formats.hpp>
#include <csiop/api/json_access.hpp>

namespace csiop::api::validation {

const std::set<std::string> kNodeVolumes = {"socket-dir", "registration-dir", "mountpoint-dir",
                                            "plugins-dir", "dev-dir"};
const std::set<std::string> kControllerVolumes = {"socket-dir"};

namespace {

// livenessprobe answers the kubelet only once the driver's Probe call returns or its
// --probe-timeout (1s unless given) passes. Where that is longer than the timeoutSeconds of the
// kubelet's probe, a slow Probe makes the kubelet give up first while livenessprobe still
// waits: the next probes pile up behind it and a healthy plugin is restarted
// (kubernetes-sigs/vsphere-csi-driver#2931, #2997; kubernetes-csi/livenessprobe#293). Refused
// when longer; warned about when equal.
void probeTimeout(Validator& v, const std::string& path, const LivenessProbe& probe) {
  const std::int32_t timeoutSeconds =
      probe.timeoutSeconds.value_or(EffectiveProbe{}.timeoutSeconds);
  if (timeoutSeconds < 1) {
    return; // reported above
  }
  const std::vector<std::string> args = probe.container.args.value_or(std::vector<std::string>{});
  double answerWithin = 1.0; // livenessprobe's default
  std::string probeTimeoutText = "1s (livenessprobe's default)";
  std::optional<std::size_t> flagIndex;
  if (const auto flag = lastFlag(args, "probe-timeout")) {
    flagIndex = flag->index;
    const auto seconds = flag->value ? formats::goDuration(*flag->value) : std::nullopt;
    if (!seconds) {
      v.add(invalid(idx(path + ".args", flag->index), args[flag->index],
                    "--probe-timeout must be a duration, e.g. 2s"));
      return;
    }
    answerWithin = *seconds;
    probeTimeoutText = *flag->value;
  }
  if (answerWithin < timeoutSeconds) {
    return;
  }
  const std::string field = flagIndex ? idx(path + ".args", *flagIndex) : path + ".timeoutSeconds";
  const std::string both = "livenessprobe's --probe-timeout (" + probeTimeoutText +
                           ") and the driver's livenessProbe timeoutSeconds (" +
                           std::to_string(timeoutSeconds) + ")";
  if (answerWithin == timeoutSeconds) {
    // As some vendors ship it (aws-ebs-csi-driver's controller, csi-driver-smb's Windows node):
    // the two give up together, and which answer the kubelet takes is a race.
    v.warn(field + ": " + both +
           " are equal: a slow Probe call may outlast the kubelet's probe; make --probe-timeout "
           "the shorter");
    return;
  }
  const std::string why =
      both + ": --probe-timeout must not be longer, or a slow Probe call outlasts the kubelet's "
             "probe, the probes pile up and a healthy plugin is restarted";
  if (flagIndex) {
    v.add(invalid(field, args[*flagIndex], why));
  } else {
    v.add(invalid(field, timeoutSeconds, why));
  }
}

} // namespace

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
  probeTimeout(v, path, probe);
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
