// The kubernetes-csi sidecars' command lines as the operator renders them (its own flags, then
// the user's args), checked against the flags of the release each image names
// (api/sidecar_releases.hpp). A flag the user wrote is reported at its args[i]; one the operator
// passes (for a setting, such as --http-endpoint or --leader-election) at the image that lacks it.
#include "sidecar_flags_check.hpp"

#include <csiop/api/json_access.hpp>
#include <csiop/api/sidecar_releases.hpp>

#include "containers.hpp"
#include "node_layouts.hpp"
#include "node_plugin.hpp"

namespace csiop::render {
namespace {

void check(api::ErrorList& errors, const std::string& path, const api::EffectiveContainer& settings,
           const Json& rendered) {
  if (settings.command) {
    return; // the user's own entrypoint: what it does with the arguments is its own
  }
  const auto release = api::sidecarRelease(settings.image);
  if (!release) {
    return;
  }
  std::vector<std::string> args;
  for (const Json& a : api::member(rendered, "args")) {
    args.push_back(a.is_string() ? a.get<std::string>() : a.dump());
  }
  const auto unknown = api::unknownFlags(*release, args);
  if (!unknown) {
    return;
  }
  const std::size_t own = args.size() - std::min(args.size(), settings.extraArgs.size());
  for (const api::UnknownFlag& flag : *unknown) {
    if (flag.index >= own) {
      const std::size_t i = flag.index - own;
      errors.push_back(api::invalid(path + ".args[" + std::to_string(i) + "]",
                                    settings.extraArgs[i], flag.reason));
    } else {
      errors.push_back(api::invalid(path + ".image", settings.image,
                                    flag.reason + "; the operator passes it for this "
                                                  "sidecar's settings: choose a newer release"));
    }
  }
}

// The registrar and livenessprobe of a node plugin's pods, as nodePluginContainers renders them.
void checkNodePlugin(api::ErrorList& errors, const std::string& path,
                     const api::EffectiveNodePlugin& n, const NodePluginLayout& layout) {
  for (const Json& c : nodePluginContainers(n, layout)) {
    const std::string name = api::stringField(c, "name");
    if (name == "node-driver-registrar") {
      check(errors, path + ".registrar", n.registrar, c);
    } else if (name == "liveness-probe") {
      check(errors, path + ".livenessProbe", n.livenessProbe.container, c);
    }
  }
}

bool custom(const api::ContainerSettings& c) {
  return c.image || c.args;
}

template <class T> bool custom(const std::optional<T>& sidecar) {
  return sidecar && custom(sidecar->container);
}

// Whether the spec names a sidecar's image or args anywhere. Where it does not, every sidecar is
// a default image with the operator's own flags, which the unit tests check against the table
// (Preflight.TheDefaultImagesAcceptEveryFlagTheOperatorPasses): an admission costs no
// resolve for it.
bool customisesSidecars(const api::DriverDeploymentSpec& spec) {
  const auto nodePlugin = [](const auto& n) {
    return n && (custom(n->registrar) || custom(n->livenessProbe));
  };
  if (nodePlugin(spec.node) || nodePlugin(spec.windowsNode) ||
      (spec.node && custom(spec.node->provisioner))) {
    return true;
  }
  const auto& c = spec.controller;
  return c && (custom(c->provisioner) || custom(c->attacher) || custom(c->resizer) ||
               custom(c->snapshotter) || custom(c->healthMonitor) || custom(c->livenessProbe));
}

} // namespace

bool sidecarFlagsToCheck(const api::DriverDeploymentSpec& spec) {
  return customisesSidecars(spec);
}

api::ErrorList checkSidecarFlags(const Effective& effective) {
  api::ErrorList errors;
  checkNodePlugin(errors, "spec.node", effective.node, linuxNodeLayout(effective));
  if (effective.node.provisioner) {
    check(errors, "spec.node.provisioner", effective.node.provisioner->container,
          nodeProvisionerContainer(effective, *effective.node.provisioner));
  }
  if (effective.windowsNode) {
    checkNodePlugin(errors, "spec.windowsNode", *effective.windowsNode,
                    windowsNodeLayout(effective));
  }
  if (effective.controller) {
    const api::EffectiveController& c = *effective.controller;
    for (const api::EffectiveSidecar& s : c.sidecars) {
      if (s.enabled) {
        check(errors, "spec.controller." + std::string(api::imageDefault(s.component).field),
              s.container, sidecarContainer(effective, s));
      }
    }
    if (c.livenessProbe.enabled && !c.inNodePlugin()) {
      check(errors, "spec.controller.livenessProbe", c.livenessProbe.container,
            livenessContainer(c.livenessProbe, linuxSocket()));
    }
  }
  return errors;
}

} // namespace csiop::render
