#include <csiop/api/validation.hpp>

#include <algorithm>
#include <set>

#include <csiop/api/defaults.hpp>
#include <csiop/api/formats.hpp>
#include <csiop/api/json_access.hpp>

#include "sections.hpp"

namespace csiop::api {

using validation::idx;
using validation::Ports;
using validation::Validator;

namespace {

// A taint key (a qualified name) that is not one Kubernetes itself manages: the operator would
// remove a taint the node lifecycle controller, the cloud provider or the kubelet sets for a
// reason (not-ready, unreachable, uninitialized, pressure). readiness.k8s.io/ keys, the Node
// Readiness Controller's convention for readiness taints, are the admin's.
void startupTaint(Validator& v, const StartupTaintSpec& taint) {
  const std::string path = "spec.startupTaint.key";
  if (taint.key.empty()) {
    v.add(required(path));
    return;
  }
  v.format(path, taint.key, formats::qualifiedName(taint.key));
  const std::string::size_type slash = taint.key.find('/');
  const std::string prefix = slash == std::string::npos ? "" : taint.key.substr(0, slash);
  const auto under = [&prefix](const std::string& domain) {
    return prefix == domain || (prefix.size() > domain.size() && prefix.ends_with("." + domain));
  };
  if (prefix != "readiness.k8s.io" && (under("kubernetes.io") || under("k8s.io"))) {
    v.add(invalid(path, taint.key,
                  "a taint Kubernetes manages (" + prefix +
                      "/): the operator would remove it; use a key of your own domain or "
                      "readiness.k8s.io/"));
  }
}

} // namespace

Validation validate(const DriverDeployment& object) {
  Validator v;
  if (object.apiVersion != kApiVersion) {
    v.add(unsupported("apiVersion", object.apiVersion, {kApiVersion}));
  }
  if (object.kind != kKind) {
    v.add(unsupported("kind", object.kind, {kKind}));
  }
  const std::string name = object.name();
  if (name.empty()) {
    v.add(required("metadata.name", "name is required"));
  } else {
    v.format("metadata.name", name, formats::dns1123Label(name));
    if (name.size() > kMaxNameLength) {
      v.add(tooLong("metadata.name", name, kMaxNameLength));
    }
  }

  const DriverDeploymentSpec& spec = object.spec;
  if (spec.driverName.empty()) {
    v.add(required("spec.driverName"));
  } else if (spec.driverName.size() > kMaxDriverNameLength) {
    v.add(tooLong("spec.driverName", spec.driverName, kMaxDriverNameLength));
  } else {
    std::string lower = spec.driverName;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    v.format("spec.driverName", spec.driverName, formats::dns1123Subdomain(lower));
  }
  if (spec.namespace_) {
    v.format("spec.namespace", *spec.namespace_, formats::dns1123Label(*spec.namespace_));
  }
  if (!spec.driver.image) {
    const bool controllerPod = spec.controller &&
                               spec.controller->placement != defaults::kPlacementNodePlugin &&
                               spec.controller->placement != defaults::kPlacementSinglePod;
    const bool windowsPod = spec.windowsNode && spec.windowsNode->enabled.value_or(true);
    const bool everyPodHasOne =
        spec.node && spec.node->driver && spec.node->driver->image &&
        (!controllerPod || (spec.controller->driver && spec.controller->driver->image)) &&
        (!windowsPod || (spec.windowsNode->driver && spec.windowsNode->driver->image));
    if (!everyPodHasOne) {
      v.add(required("spec.driver.image"));
    }
  }
  validation::csiDriver(v, spec);
  const Ports nodePorts = validation::node(v, spec);
  validation::nodeDriver(v, spec, validation::controller(v, spec, nodePorts));
  validation::windowsNode(v, spec);
  validation::rollout(v, spec);
  validation::storageClasses(v, spec);
  validation::companions(v, spec);
  if (spec.additionalNamespaces) {
    const std::string own = driverNamespaceOf(object.name(), spec.namespace_.value_or(""));
    for (std::size_t i = 0; i < spec.additionalNamespaces->size(); ++i) {
      if ((*spec.additionalNamespaces)[i].name == own) {
        v.add(invalid(idx("spec.additionalNamespaces", i) + ".name", own,
                      "is the driver's own namespace (spec.namespace): its rules are "
                      "spec.node.namespacedRbacRules and spec.controller.namespacedRbacRules"));
      }
    }
  }

  if (spec.imagePullSecrets) {
    const auto& s = *spec.imagePullSecrets;
    if (!s.is_array()) {
      v.add(invalid("spec.imagePullSecrets", s, "must be a list of LocalObjectReference"));
    } else {
      for (std::size_t i = 0; i < s.size(); ++i) {
        const auto n = stringField(s[i], "name");
        if (n.empty()) {
          v.add(required(idx("spec.imagePullSecrets", i) + ".name"));
        } else {
          v.format(idx("spec.imagePullSecrets", i) + ".name", n, formats::dns1123Subdomain(n));
        }
      }
    }
  }
  if (spec.imageRegistry) {
    const auto& r = *spec.imageRegistry;
    if (r.empty() || r.find("://") != std::string::npos || r.find_first_of(" \t\n@:") == 0 ||
        r.find_first_of(" \t\n@") != std::string::npos) {
      v.add(invalid("spec.imageRegistry", r,
                    "must be a registry host and optional path, such as "
                    "\"registry.example.com/sig-storage\", without a scheme"));
    }
  }
  if (spec.deletionPolicy) {
    v.oneOf("spec.deletionPolicy", *spec.deletionPolicy, {"Delete", "Orphan"});
  }
  if (spec.operatorUpdates) {
    v.oneOf("spec.operatorUpdates", *spec.operatorUpdates, {"Manual", "Automatic"});
  }
  if (spec.startupTaint) {
    startupTaint(v, *spec.startupTaint);
  }
  // spec.driver is checked as part of both pods; one mistake is one error.
  std::set<std::string> seen;
  std::erase_if(v.result.errors,
                [&](const FieldError& e) { return !seen.insert(e.message()).second; });
  return std::move(v.result);
}

Validation validateUpdate(const DriverDeployment& old, const DriverDeployment& updated) {
  Validation result = validate(updated);
  const auto singlePod = [](const DriverDeployment& dd) {
    return dd.spec.controller && dd.spec.controller->placement == defaults::kPlacementSinglePod;
  };
  if (singlePod(old) != singlePod(updated)) {
    // The new node plugin and the old would run on the node at once, on one socket and one state
    // directory: the operator creates what it renders before it deletes what it no longer does.
    result.errors.push_back(forbidden(
        "spec.controller.placement",
        std::string("cannot change ") + (singlePod(old) ? "from" : "to") +
            " SinglePod: the old and the new node plugin would run on one node at once, on one "
            "socket and one state directory: delete the DriverDeployment and create it again"));
  }
  if (old.spec.driverName != updated.spec.driverName) {
    result.errors.push_back(invalid("spec.driverName", updated.spec.driverName,
                                    "field is immutable (it was \"" + old.spec.driverName +
                                        "\"; create a new DriverDeployment for another driver)"));
  }
  return result;
}

} // namespace csiop::api
