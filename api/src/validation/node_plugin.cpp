#include "sections.hpp"

namespace csiop::api::validation {
namespace {

// A DaemonSetUpdateStrategy, or with `whenVolumesUnused` the operator's own type of that name
// and its parameters.
void updateStrategy(Validator& v, const std::string& path, const std::optional<Json>& strategy,
                    bool whenVolumesUnused) {
  if (!strategy) {
    return;
  }
  if (!strategy->is_object()) {
    v.add(invalid(path, *strategy, "must be a DaemonSetUpdateStrategy"));
  } else if (strategy->contains("type")) {
    const auto& t = (*strategy)["type"];
    std::vector<std::string> types = {"OnDelete", "RollingUpdate"};
    if (whenVolumesUnused) {
      types.emplace_back("WhenVolumesUnused");
    }
    v.oneOf(path + ".type", t.is_string() ? t.get<std::string>() : "", types);
  }
  if (whenVolumesUnused && strategy->is_object() && strategy->contains("whenVolumesUnused") &&
      strategy->value("type", Json()) != "WhenVolumesUnused") {
    v.add(forbidden(path + ".whenVolumesUnused", "may only be set with type WhenVolumesUnused"));
  }
  v.rollingUpdate(path, strategy);
  if (whenVolumesUnused && strategy->is_object()) {
    const Json params = strategy->value("whenVolumesUnused", Json::object());
    const Json max = params.is_object() ? params.value("maxUnavailable", Json()) : Json();
    if (!max.is_null()) {
      v.nodeCount(path + ".whenVolumesUnused.maxUnavailable", max);
    }
  }
}

} // namespace

void nodePlugin(Validator& v, const std::string& path, const NodePluginSpec& n,
                const NodePluginRules& rules) {
  updateStrategy(v, path + ".updateStrategy", n.updateStrategy, rules.whenVolumesUnused);
  if (n.nodeSelector) {
    v.labels(path + ".nodeSelector", *n.nodeSelector, true);
    const auto os = n.nodeSelector->find("kubernetes.io/os");
    if (rules.os != nullptr && os != n.nodeSelector->end() && os->second != rules.os) {
      v.add(invalid(path + ".nodeSelector[kubernetes.io/os]", os->second,
                    "must be \"" + std::string(rules.os) + "\" (or left out: it is added)"));
    }
  }
  v.tolerations(path + ".tolerations", n.tolerations);
  v.object(path + ".affinity", n.affinity, "an Affinity object");
  v.priorityClass(path + ".priorityClassName", n.priorityClassName);
  v.resources(path + ".resources", n.resources);
  v.container(path + ".registrar", n.registrar);
  v.container(path + ".livenessProbe", n.livenessProbe);
}

Ports nodeSidecarPorts(Validator& v, const std::string& path, const NodePluginSpec& n,
                       bool hostNetwork, const std::string& hostNetworkPath) {
  Ports reserved;
  const Registrar r = n.registrar.value_or(Registrar{});
  reservePort(v, reserved, path + ".registrar", r.httpEndpoint, "httpPort",
              v.httpEndpoint(path + ".registrar", r.httpEndpoint, r.httpPort, "httpPort",
                             defaults::kRegistrarPort, true, hostNetwork, hostNetworkPath));
  livenessSidecar(v, reserved, path + ".livenessProbe", n.livenessProbe, hostNetwork,
                  hostNetworkPath);
  return reserved;
}

} // namespace csiop::api::validation
