// The checks of one field type each (ports, env, volumes, tolerations, ...), shared by
// the sections of validate(): each adds FieldErrors with the path it is given.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <csiop/api/defaults.hpp>
#include <csiop/api/field_error.hpp>
#include <csiop/api/types.hpp>
#include <csiop/api/validation.hpp>

namespace csiop::api::validation {

// path[i]
std::string idx(const std::string& path, std::size_t i);

// The names of the operator's sidecar containers, in any pod.
const std::set<std::string>& ownSidecarNames();

class Validator {
public:
  Validation result;

  void add(FieldError e) { result.errors.push_back(std::move(e)); }
  void warn(std::string w) { result.warnings.push_back(std::move(w)); }

  void oneOf(const std::string& path, const std::string& value,
             const std::vector<std::string>& allowed);

  void format(const std::string& path, const std::string& value,
              const std::vector<std::string>& problems);

  void port(const std::string& path, std::int64_t value);

  void labels(const std::string& path, const StringMap& map, bool valuesAreLabels);

  void pullPolicy(const std::string& path, const std::optional<std::string>& v);

  void image(const std::string& path, const std::optional<std::string>& v);

  void args(const std::string& path, const std::optional<std::vector<std::string>>& v);

  void resources(const std::string& path, const std::optional<Json>& v);

  // A list of EnvVar; `reserved`: names the operator sets in that container.
  void env(const std::string& path, const std::optional<Json>& v,
           const std::set<std::string>& reserved = {});

  // Checks ports and returns the containerPort numbers.
  std::set<std::int64_t> ports(const std::string& path, const std::optional<Json>& v);

  // Checks volumes and returns their names.
  std::set<std::string> volumes(const std::string& path, const std::optional<Json>& v,
                                const std::set<std::string>& reserved);

  void volumeMounts(const std::string& path, const std::optional<Json>& v,
                    const std::set<std::string>& volumeNames,
                    const std::set<std::string>& reservedPaths);

  void tolerations(const std::string& path, const std::optional<Json>& v);

  void object(const std::string& path, const std::optional<Json>& v, const char* what);

  void list(const std::string& path, const std::optional<Json>& v, const char* what);

  void rbacRules(const std::string& path, const std::optional<Json>& v);

  void priorityClass(const std::string& path, const std::optional<std::string>& v);

  void leaderElection(const std::string& path, const std::optional<LeaderElection>& v);

  // An IntOrString of a number of pods: an integer >= 0, or a percentage from "0%" to "100%".
  void intOrPercent(const std::string& path, const Json& value);
  // A number of nodes the operator replaces at a time (`value`): an integer >= 1, or a
  // percentage of the nodes from "1%" to "100%" (rounded up when resolved).
  void nodeCount(const std::string& path, const Json& value);
  // A workload's update strategy (`path`: its field), as far as the operator reads into it:
  // rollingUpdate.maxUnavailable.
  void rollingUpdate(const std::string& path, const std::optional<Json>& strategy);

  // Fields of a driver container (base or override).
  void driverContainer(const std::string& path, const DriverContainer& c,
                       std::set<std::string>& volumeNames,
                       const std::set<std::string>& reservedVolumes);

  template <class C> void container(const std::string& path, const std::optional<C>& c) {
    if (!c) {
      return;
    }
    image(path + ".image", c->container.image);
    pullPolicy(path + ".imagePullPolicy", c->container.imagePullPolicy);
    args(path + ".command", c->container.command);
    args(path + ".args", c->container.args);
    env(path + ".env", c->container.env);
    resources(path + ".resources", c->container.resources);
    object(path + ".securityContext", c->container.securityContext, "a SecurityContext object");
    lifecycle(path + ".lifecycle", c->container.lifecycle);
    if constexpr (requires { c->livenessProbe->periodSeconds; }) {
      if (c->livenessProbe) {
        const std::string p = path + ".livenessProbe";
        seconds(p + ".initialDelaySeconds", c->livenessProbe->initialDelaySeconds, 0);
        seconds(p + ".timeoutSeconds", c->livenessProbe->timeoutSeconds, 1);
        seconds(p + ".periodSeconds", c->livenessProbe->periodSeconds, 1);
        seconds(p + ".failureThreshold", c->livenessProbe->failureThreshold, 1);
      }
    }
  }

  // A sidecar's `--http-endpoint` (httpEndpoint, or httpPort/port as ":PORT"); returns it.
  // `portField`: the name of the port shorthand; `pod`: where hostNetwork is set.
  HttpEndpoint httpEndpoint(const std::string& path, const std::optional<std::string>& text,
                            const std::optional<std::int32_t>& port, const char* portField,
                            std::int32_t fallback, bool mayBeOff, bool hostNetwork,
                            const std::string& hostNetworkPath);

  // core/v1.Probe: exactly one handler, sane timings.
  void probe(const std::string& path, const std::optional<Json>& v);
  // core/v1.Lifecycle: postStart/preStop handlers.
  void lifecycle(const std::string& path, const std::optional<Json>& v);
  // A probe timing of ours (`min`: its least value).
  void seconds(const std::string& path, const std::optional<std::int32_t>& v, std::int32_t min);

  // []core/v1.Container the user adds to a pod: names (unique, none of the operator's),
  // images, env, ports, probes and mounts of the pod's volumes (`volumeNames`).
  void containers(const std::string& path, const std::optional<Json>& v,
                  std::set<std::string>& names, const std::set<std::string>& volumeNames);
  // The pod settings the node plugin and controller pods share (`pod`).
  void podSettings(const std::string& path, const PodSettings& pod);
};

} // namespace csiop::api::validation
