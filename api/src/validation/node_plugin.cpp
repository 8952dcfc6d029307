#include "sections.hpp"

namespace csiop::api::validation {
namespace {

// A node plugin's pods are never surged: with maxSurge the DaemonSet controller starts the new
// pod beside the old one on each node, and the kubelet's plugin watcher does not keep two
// plugins of one CSI driver side by side (its plugin-watcher README says so): the two register
// the same name over each other and the one that exits last takes the registration with it.
void maxSurge(Validator& v, const std::string& path, const Json& strategy) {
  if (!strategy.is_object()) {
    return;
  }
  const Json& update = strategy.value("rollingUpdate", Json());
  if (!update.is_object() || !update.contains("maxSurge") || update["maxSurge"].is_null()) {
    return;
  }
  const Json& surge = update["maxSurge"];
  const auto zeroPercent = [](const std::string& s) {
    return s.size() >= 2 && s.back() == '%' &&
           s.find_first_not_of('0') == s.size() - 1; // "0%", "00%"
  };
  const bool zero = (surge.is_number_integer() && surge.get<std::int64_t>() == 0) ||
                    (surge.is_string() && zeroPercent(surge.get<std::string>()));
  if (!zero) {
    v.add(invalid(path + ".rollingUpdate.maxSurge", surge,
                  "must be 0 for a node plugin: a surged pod runs beside the old one on its "
                  "node, and the kubelet does not keep two plugins of one CSI driver side by "
                  "side (each registers over the other); use maxUnavailable"));
  }
}

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
  maxSurge(v, path, *strategy);
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
  if (n.priorityClassName && n.priorityClassName->empty()) {
    v.warn(path + ".priorityClassName is empty: the node plugin's pods run at the priority of "
                  "ordinary pods and cannot preempt one, so on a node that is full the driver is "
                  "never registered (the default, system-node-critical, avoids that)");
  }
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
