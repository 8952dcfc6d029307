#include <csiop/render/check.hpp>

#include <set>

#include <csiop/api/json_access.hpp>
#include <csiop/api/server_version.hpp>
#include <csiop/render/render.hpp>

#include "containers.hpp"
#include "node_layouts.hpp"
#include "sidecar_flags_check.hpp"
#include "workloads.hpp"

namespace csiop::render {
namespace {

// The list at j[key], or an empty one.
const Json& listAt(const Json& j, const char* key) {
  static const Json empty = Json::array();
  const Json& v = api::member(j, key);
  return v.is_array() ? v : empty;
}

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

// Where a pod's containers find the driver's socket and the kubelet's plugin registry ("": not
// mounted, as in a Windows HostProcess pod; the registrar is checked only in node plugins).
struct PodShape {
  std::string driver; // the driver container's name
  bool nodePlugin = false;
  std::string socketDir;
  std::string registrationDir;
};

class PodCheck {
public:
  PodCheck(api::ErrorList& errors, std::string path) : errors_(errors), path_(std::move(path)) {}

  void run(const Json& workload, const PodShape& shape) {
    const Json& tmpl = api::member(api::member(workload, "spec"), "template");
    labels(api::member(api::member(api::member(workload, "spec"), "selector"), "matchLabels"),
           api::member(api::member(tmpl, "metadata"), "labels"));
    const Json& pod = api::member(tmpl, "spec");
    const auto volumes = volumeNames(listAt(pod, "volumes"));
    std::set<std::string> names;
    for (const char* list : {"initContainers", "containers"}) {
      for (const auto& c : listAt(pod, list)) {
        container(c, volumes, names);
      }
    }
    const Json* driver = find(listAt(pod, "containers"), shape.driver);
    if (!driver) {
      fail("the pod has no container " + quoted(shape.driver) + " (the CSI driver)");
    } else if (!shape.socketDir.empty() && !mounts(*driver, "socket-dir", shape.socketDir)) {
      fail("container " + quoted(shape.driver) + " does not mount volume \"socket-dir\" at " +
           shape.socketDir + ", where the sidecars reach its socket");
    }
    if (!volumes.contains("socket-dir")) {
      fail("the pod has no volume \"socket-dir\" (the driver's socket directory)");
    }
    if (shape.nodePlugin) {
      const Json* registrar = find(listAt(pod, "containers"), "node-driver-registrar");
      if (!registrar) {
        fail("the pod has no container \"node-driver-registrar\" (it registers the driver with "
             "the kubelet)");
      } else if (!shape.registrationDir.empty() &&
                 !mounts(*registrar, "registration-dir", shape.registrationDir)) {
        fail("container \"node-driver-registrar\" does not mount volume \"registration-dir\" at " +
             shape.registrationDir + ", the kubelet's plugin registry");
      }
    }
  }

private:
  void fail(const std::string& what) {
    errors_.push_back(api::forbidden(path_, "after the patch, " + what));
  }

  void labels(const Json& selector, const Json& labels) {
    if (!selector.is_object()) {
      return;
    }
    for (const auto& [k, v] : selector.items()) {
      if (!labels.is_object() || !labels.contains(k) || labels[k] != v) {
        fail("the pod template's labels must keep the selector's label " + k + "=" +
             quoted(v.is_string() ? v.get<std::string>() : v.dump()));
      }
    }
  }

  std::set<std::string> volumeNames(const Json& volumes) {
    std::set<std::string> out;
    for (const auto& v : volumes) {
      const std::string name = api::stringField(v, "name");
      if (!name.empty() && !out.insert(name).second) {
        fail("two volumes are named " + quoted(name));
      }
    }
    return out;
  }

  void container(const Json& c, const std::set<std::string>& volumes,
                 std::set<std::string>& names) {
    const std::string name = api::stringField(c, "name");
    if (name.empty()) {
      fail("a container has no name");
      return;
    }
    if (!names.insert(name).second) {
      fail("two containers are named " + quoted(name));
    }
    if (api::stringField(c, "image").empty()) {
      fail("container " + quoted(name) + " has no image");
    }
    const bool privileged = api::isTrue(api::member(c, "securityContext"), "privileged");
    for (const auto& m : listAt(c, "volumeMounts")) {
      const std::string volume = api::stringField(m, "name");
      if (!volumes.contains(volume)) {
        fail("container " + quoted(name) + " mounts volume " + quoted(volume) +
             ", which the pod does not have");
      }
      if (api::stringField(m, "mountPropagation") == "Bidirectional" && !privileged) {
        fail("container " + quoted(name) + " mounts " + quoted(api::stringField(m, "mountPath")) +
             " with Bidirectional propagation, which only a privileged container may do");
      }
    }
  }

  static const Json* find(const Json& containers, const std::string& name) {
    for (const auto& c : containers) {
      if (api::stringField(c, "name") == name) {
        return &c;
      }
    }
    return nullptr;
  }

  static bool mounts(const Json& c, const std::string& volume, const std::string& path) {
    for (const auto& m : listAt(c, "volumeMounts")) {
      if (api::stringField(m, "name") == volume && api::stringField(m, "mountPath") == path) {
        return true;
      }
    }
    return false;
  }

  api::ErrorList& errors_;
  std::string path_;
};

// spec.objects[i] that would take the place of an object the operator renders itself.
void checkObjectNames(api::ErrorList& errors, const api::DriverDeployment& object) {
  if (!object.spec.objects || !object.spec.objects->is_array() || object.spec.objects->empty()) {
    return;
  }
  std::set<std::string> own;
  const auto key = [](const api::Json& o) {
    return api::stringField(o, "kind") + " " + api::metadataField(o, "name");
  };
  api::DriverDeployment withoutObjects = object;
  withoutObjects.spec.objects.reset();
  for (const api::Json& o : render(withoutObjects)) {
    own.insert(key(o));
  }
  const api::Json& list = *object.spec.objects;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].is_object() && own.contains(key(list[i]))) {
      errors.push_back(
          api::forbidden("spec.objects[" + std::to_string(i) + "].metadata.name",
                         key(list[i]) + " is an object the operator renders for this driver"));
    }
  }
}

} // namespace

api::ErrorList checkRendered(const api::DriverDeployment& object) {
  api::ErrorList errors;
  checkObjectNames(errors, object);
  // Without a patch a pod is the fields' (validated), so only patched pods are rendered whole;
  // without a sidecar's image or args in the spec, the sidecars' flags are the operator's own
  // for its default images: the admission of such a DriverDeployment costs no render.
  const bool nodePatched = object.spec.node && object.spec.node->podTemplatePatch;
  const bool controllerPatched = object.spec.controller && object.spec.controller->podTemplatePatch;
  const bool windowsPatched = object.spec.windowsNode && object.spec.windowsNode->podTemplatePatch;
  const bool sidecars = sidecarFlagsToCheck(object.spec);
  if (!nodePatched && !controllerPatched && !windowsPatched && !sidecars) {
    return errors;
  }
  const api::Effective effective = api::resolve(object);
  if (sidecars) {
    for (auto& error : checkSidecarFlags(effective)) {
      errors.push_back(std::move(error));
    }
  }
  if (!nodePatched && !controllerPatched && !windowsPatched) {
    return errors;
  }
  if (nodePatched) {
    PodCheck(errors, "spec.node.podTemplatePatch")
        .run(renderNodePlugin(effective),
             {effective.node.driver.name, true, kSocketDir, "/registration"});
  }
  if (windowsPatched && effective.windowsNode) {
    const bool hostProcess = effective.windowsNode->hostProcess;
    PodCheck(errors, "spec.windowsNode.podTemplatePatch")
        .run(renderWindowsNodeDaemonSet(effective),
             {effective.windowsNode->driver.name, true, hostProcess ? "" : kWindowsSocketDir,
              hostProcess ? "" : kWindowsRegistrationDir});
  }
  if (controllerPatched && effective.hasControllerWorkload()) {
    PodCheck(errors, "spec.controller.podTemplatePatch")
        .run(renderControllerWorkload(effective),
             {effective.controller->driver.name, false, kSocketDir, ""});
  }
  return errors;
}

api::Check admissionCheck(const std::vector<api::ObjectKind>& objectKinds,
                          std::optional<int> serverMinor) {
  return [&objectKinds, serverMinor](const api::DriverDeployment& object) {
    api::ErrorList errors = api::checkObjectKinds(object, objectKinds);
    for (auto& error : api::checkServerVersion(object, serverMinor)) {
      errors.push_back(std::move(error));
    }
    for (auto& error : checkRendered(object)) {
      errors.push_back(std::move(error));
    }
    return errors;
  };
}

} // namespace csiop::render
