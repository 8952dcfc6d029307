#include <csiop/api/validation.hpp>

#include <algorithm>
#include <map>
#include <set>

#include <csiop/api/defaults.hpp>
#include <csiop/api/formats.hpp>
#include <csiop/api/json_access.hpp>
#include <csiop/api/secrets.hpp>

namespace csiop::api {
namespace {

using formats::goDuration;

std::string idx(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

class Validator {
public:
  Validation result;

  void add(FieldError e) { result.errors.push_back(std::move(e)); }
  void warn(std::string w) { result.warnings.push_back(std::move(w)); }

  void oneOf(const std::string& path, const std::string& value,
             const std::vector<std::string>& allowed) {
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      add(unsupported(path, value, allowed));
    }
  }

  void format(const std::string& path, const std::string& value,
              const std::vector<std::string>& problems) {
    for (const auto& p : problems) {
      add(invalid(path, value, p));
    }
  }

  void port(const std::string& path, std::int64_t value) {
    if (value < 1 || value > 65535) {
      add(invalid(path, value, "must be between 1 and 65535, inclusive"));
    }
  }

  void labels(const std::string& path, const StringMap& map, bool valuesAreLabels) {
    for (const auto& [k, v] : map) {
      format(path, k, formats::qualifiedName(k));
      if (valuesAreLabels) {
        format(path + "[" + k + "]", v, formats::labelValue(v));
      }
    }
  }

  void pullPolicy(const std::string& path, const std::optional<std::string>& v) {
    if (v) {
      oneOf(path, *v, {"Always", "IfNotPresent", "Never"});
    }
  }

  void image(const std::string& path, const std::optional<std::string>& v) {
    if (v && (v->empty() || v->find_first_of(" \t\n") != std::string::npos)) {
      add(invalid(path, *v, "must be a non-empty image reference without whitespace"));
    }
  }

  void args(const std::string& path, const std::optional<std::vector<std::string>>& v) {
    if (!v) {
      return;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      if ((*v)[i].empty()) {
        add(invalid(idx(path, i), "", "must not be empty"));
      }
    }
  }

  void resources(const std::string& path, const std::optional<Json>& v) {
    if (!v) {
      return;
    }
    if (!v->is_object()) {
      add(invalid(path, *v, "must be an object with limits and/or requests"));
      return;
    }
    for (const auto& [key, value] : v->items()) {
      if (key == "claims") {
        continue;
      }
      if (key != "limits" && key != "requests") {
        add(unsupported(path + "." + key, key, {"claims", "limits", "requests"}));
        continue;
      }
      if (!value.is_object()) {
        add(invalid(path + "." + key, value, "must be a map of resource name to quantity"));
        continue;
      }
      for (const auto& [name, q] : value.items()) {
        const std::string qp = path + "." + key + "[" + name + "]";
        if (q.is_number_integer() && q.get<std::int64_t>() >= 0) {
          continue;
        }
        if (!q.is_string() || !formats::isQuantity(q.get<std::string>())) {
          add(invalid(qp, q, "must be a quantity such as \"100m\", \"64Mi\" or \"2\""));
        }
      }
    }
  }

  void env(const std::string& path, const std::optional<Json>& v) {
    if (!v) {
      return;
    }
    if (!v->is_array()) {
      add(invalid(path, *v, "must be a list of EnvVar"));
      return;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      const Json& e = (*v)[i];
      const auto name = e.is_object() ? e.value("name", Json()) : Json();
      if (!name.is_string() || name.get<std::string>().empty()) {
        add(required(idx(path, i) + ".name"));
        continue;
      }
      const auto n = name.get<std::string>();
      if (n.find('=') != std::string::npos) {
        add(invalid(idx(path, i) + ".name", n, "must not contain '='"));
      }
      if (n == "CSI_ENDPOINT" || n == "KUBE_NODE_NAME") {
        add(forbidden(idx(path, i) + ".name", n + " is set by the operator"));
      }
    }
  }

  // Checks ports and returns the containerPort numbers.
  std::set<std::int64_t> ports(const std::string& path, const std::optional<Json>& v) {
    std::set<std::int64_t> out;
    if (!v) {
      return out;
    }
    if (!v->is_array()) {
      add(invalid(path, *v, "must be a list of ContainerPort"));
      return out;
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < v->size(); ++i) {
      const Json& p = (*v)[i];
      const std::string ip = idx(path, i);
      if (!p.is_object() || !p.contains("containerPort") ||
          !p["containerPort"].is_number_integer()) {
        add(required(ip + ".containerPort"));
        continue;
      }
      const auto n = p["containerPort"].get<std::int64_t>();
      port(ip + ".containerPort", n);
      if (!out.insert(n).second) {
        add(duplicate(ip + ".containerPort", n));
      }
      if (p.contains("name") && p["name"].is_string()) {
        const auto name = p["name"].get<std::string>();
        format(ip + ".name", name, formats::portName(name));
        if (!names.insert(name).second) {
          add(duplicate(ip + ".name", name));
        }
      }
      if (p.contains("protocol")) {
        oneOf(ip + ".protocol", p["protocol"].is_string() ? p["protocol"].get<std::string>() : "",
              {"SCTP", "TCP", "UDP"});
      }
    }
    return out;
  }

  // Checks volumes and returns their names.
  std::set<std::string> volumes(const std::string& path, const std::optional<Json>& v,
                                const std::set<std::string>& reserved) {
    std::set<std::string> out;
    if (!v) {
      return out;
    }
    if (!v->is_array()) {
      add(invalid(path, *v, "must be a list of Volume"));
      return out;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      const Json& vol = (*v)[i];
      const auto name = vol.is_object() ? vol.value("name", Json()) : Json();
      if (!name.is_string() || name.get<std::string>().empty()) {
        add(required(idx(path, i) + ".name"));
        continue;
      }
      const auto n = name.get<std::string>();
      format(idx(path, i) + ".name", n, formats::dns1123Label(n));
      if (reserved.contains(n)) {
        add(invalid(idx(path, i) + ".name", n, "is used by the operator's own volumes"));
      } else if (!out.insert(n).second) {
        add(duplicate(idx(path, i) + ".name", n));
      }
    }
    return out;
  }

  void volumeMounts(const std::string& path, const std::optional<Json>& v,
                    const std::set<std::string>& volumeNames,
                    const std::set<std::string>& reservedPaths) {
    if (!v) {
      return;
    }
    if (!v->is_array()) {
      add(invalid(path, *v, "must be a list of VolumeMount"));
      return;
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < v->size(); ++i) {
      const Json& m = (*v)[i];
      const std::string ip = idx(path, i);
      const auto name = m.is_object() ? m.value("name", Json()) : Json();
      const auto mountPath = m.is_object() ? m.value("mountPath", Json()) : Json();
      if (!name.is_string() || name.get<std::string>().empty()) {
        add(required(ip + ".name"));
      } else if (!volumeNames.contains(name.get<std::string>())) {
        add(invalid(ip + ".name", name, "not found in the driver's volumes"));
      }
      if (!mountPath.is_string() || mountPath.get<std::string>().empty()) {
        add(required(ip + ".mountPath"));
        continue;
      }
      const auto mp = mountPath.get<std::string>();
      if (reservedPaths.contains(mp)) {
        add(invalid(ip + ".mountPath", mp, "is mounted by the operator"));
      } else if (!seen.insert(mp).second) {
        add(invalid(ip + ".mountPath", mp, "must be unique"));
      }
      if (m.contains("mountPropagation")) {
        oneOf(ip + ".mountPropagation",
              m["mountPropagation"].is_string() ? m["mountPropagation"].get<std::string>() : "",
              {"Bidirectional", "HostToContainer", "None"});
      }
    }
  }

  void tolerations(const std::string& path, const std::optional<Json>& v) {
    if (!v) {
      return;
    }
    if (!v->is_array()) {
      add(invalid(path, *v, "must be a list of Toleration"));
      return;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      const Json& t = (*v)[i];
      const std::string ip = idx(path, i);
      if (!t.is_object()) {
        add(invalid(ip, t, "must be a Toleration"));
        continue;
      }
      bool typesOk = true;
      for (const char* f : {"key", "operator", "value", "effect"}) {
        if (t.contains(f) && !t[f].is_string()) {
          add(invalid(ip + "." + f, t[f], "must be a string"));
          typesOk = false;
        }
      }
      if (t.contains("tolerationSeconds") && !t["tolerationSeconds"].is_number_integer()) {
        add(invalid(ip + ".tolerationSeconds", t["tolerationSeconds"], "must be an integer"));
      }
      if (!typesOk) {
        continue;
      }
      const std::string op = stringField(t, "operator", "Equal");
      oneOf(ip + ".operator", op, {"Equal", "Exists"});
      if (op == "Exists" && !stringField(t, "value").empty()) {
        add(invalid(ip + ".value", t["value"], "value must be empty when `operator` is 'Exists'"));
      }
      if (op == "Equal" && stringField(t, "key").empty()) {
        add(invalid(ip + ".operator", op,
                    "operator must be Exists when `key` is empty, which means \"match all values "
                    "and all keys\""));
      }
      const std::string effect = stringField(t, "effect");
      if (!effect.empty()) {
        oneOf(ip + ".effect", effect, {"NoExecute", "NoSchedule", "PreferNoSchedule"});
      }
    }
  }

  void object(const std::string& path, const std::optional<Json>& v, const char* what) {
    if (v && !v->is_object()) {
      add(invalid(path, *v, std::string("must be ") + what));
    }
  }

  void list(const std::string& path, const std::optional<Json>& v, const char* what) {
    if (v && !v->is_array()) {
      add(invalid(path, *v, std::string("must be a list of ") + what));
    }
  }

  void rbacRules(const std::string& path, const std::optional<Json>& v) {
    if (!v) {
      return;
    }
    if (!v->is_array()) {
      add(invalid(path, *v, "must be a list of PolicyRule"));
      return;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      const Json& r = (*v)[i];
      const std::string ip = idx(path, i);
      if (!r.is_object() || !r.contains("verbs") || !r["verbs"].is_array() || r["verbs"].empty()) {
        add(required(ip + ".verbs", "verbs must contain at least one value"));
        continue;
      }
      const bool hasResources = r.contains("resources") && !r["resources"].empty();
      const bool hasUrls = r.contains("nonResourceURLs") && !r["nonResourceURLs"].empty();
      if (!hasResources && !hasUrls) {
        add(required(ip + ".resources", "resource rules must supply at least one resource"));
      }
      if (hasResources && !r.contains("apiGroups")) {
        add(required(ip + ".apiGroups", "resource rules must supply at least one api group"));
      }
      for (const auto& verb : r["verbs"]) {
        if (verb == "*") {
          warn(ip + ".verbs: the wildcard \"*\" grants every verb, including future ones");
        }
      }
    }
  }

  void priorityClass(const std::string& path, const std::optional<std::string>& v) {
    if (v) {
      format(path, *v, formats::dns1123Subdomain(*v));
    }
  }

  void leaderElection(const std::string& path, const std::optional<LeaderElection>& v) {
    if (!v) {
      return;
    }
    std::optional<double> lease;
    std::optional<double> renew;
    std::optional<double> retry;
    const auto dur = [&](const char* name, const std::optional<std::string>& s,
                         std::optional<double>& out) {
      if (!s) {
        return;
      }
      out = goDuration(*s);
      if (!out || *out <= 0) {
        add(invalid(path + "." + name, *s,
                    "must be a positive Go duration such as \"15s\" or \"1m30s\""));
        out.reset();
      }
    };
    dur("leaseDuration", v->leaseDuration, lease);
    dur("renewDeadline", v->renewDeadline, renew);
    dur("retryPeriod", v->retryPeriod, retry);
    // client-go's own checks, with its defaults for what is not set.
    const double l = lease.value_or(15);
    const double d = renew.value_or(10);
    const double r = retry.value_or(5);
    if ((lease || renew) && l <= d) {
      add(invalid(path + ".leaseDuration", Json(v->leaseDuration.value_or("15s")),
                  "must be greater than renewDeadline"));
    }
    if ((renew || retry) && d <= 1.2 * r) {
      add(invalid(path + ".renewDeadline", Json(v->renewDeadline.value_or("10s")),
                  "must be greater than 1.2 x retryPeriod"));
    }
  }

  // Fields of a driver container (base or override).
  void driverContainer(const std::string& path, const DriverContainer& c,
                       std::set<std::string>& volumeNames,
                       const std::set<std::string>& reservedVolumes) {
    image(path + ".image", c.image);
    pullPolicy(path + ".imagePullPolicy", c.imagePullPolicy);
    args(path + ".command", c.command);
    args(path + ".args", c.args);
    env(path + ".env", c.env);
    resources(path + ".resources", c.resources);
    ports(path + ".ports", c.ports);
    const auto names = volumes(path + ".volumes", c.volumes, reservedVolumes);
    volumeNames.insert(names.begin(), names.end());
    object(path + ".securityContext", c.securityContext, "a SecurityContext object");
  }

  template <class C> void container(const std::string& path, const std::optional<C>& c) {
    if (!c) {
      return;
    }
    image(path + ".image", c->container.image);
    pullPolicy(path + ".imagePullPolicy", c->container.imagePullPolicy);
    args(path + ".args", c->container.args);
    resources(path + ".resources", c->container.resources);
  }
};

const std::set<std::string> kNodeVolumes = {"socket-dir", "registration-dir", "mountpoint-dir",
                                            "plugins-dir", "dev-dir"};
const std::set<std::string> kControllerVolumes = {"socket-dir"};

// Driver container checks that need the merged (effective) view of one pod.
void driverInPod(Validator& v, const DriverDeploymentSpec& spec,
                 const std::optional<DriverContainer>& override, const std::string& overridePath,
                 const std::set<std::string>& reservedVolumes,
                 const std::set<std::string>& reservedPaths,
                 const std::map<std::int64_t, std::string>& reservedPorts) {
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
}

void csiDriver(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.csiDriver) {
    return;
  }
  const CSIDriverSpec& c = *spec.csiDriver;
  const std::string p = "spec.csiDriver";
  if (c.fsGroupPolicy) {
    v.oneOf(p + ".fsGroupPolicy", *c.fsGroupPolicy, {"File", "None", "ReadWriteOnceWithFSType"});
  }
  if (c.volumeLifecycleModes) {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < c.volumeLifecycleModes->size(); ++i) {
      const auto& mode = (*c.volumeLifecycleModes)[i];
      v.oneOf(idx(p + ".volumeLifecycleModes", i), mode, {"Ephemeral", "Persistent"});
      if (!seen.insert(mode).second) {
        v.add(duplicate(idx(p + ".volumeLifecycleModes", i), mode));
      }
    }
  }
  if (c.tokenRequests) {
    if (c.tokenRequests->size() > kMaxTokenRequests) {
      v.add(tooMany(p + ".tokenRequests", c.tokenRequests->size(), kMaxTokenRequests));
    }
    std::set<std::string> audiences;
    for (std::size_t i = 0; i < c.tokenRequests->size(); ++i) {
      const auto& tr = (*c.tokenRequests)[i];
      const std::string ip = idx(p + ".tokenRequests", i);
      if (!audiences.insert(tr.audience).second) {
        v.add(duplicate(ip + ".audience", tr.audience));
      }
      if (tr.expirationSeconds) {
        const auto e = *tr.expirationSeconds;
        if (e < 600) {
          v.add(invalid(ip + ".expirationSeconds", e,
                        "may not specify a duration less than 10 minutes"));
        } else if (e > (std::int64_t{1} << 32)) {
          v.add(invalid(ip + ".expirationSeconds", e,
                        "may not specify a duration larger than 2^32 seconds"));
        }
      }
    }
  }
  if (c.nodeAllocatableUpdatePeriodSeconds && *c.nodeAllocatableUpdatePeriodSeconds < 10) {
    v.add(invalid(p + ".nodeAllocatableUpdatePeriodSeconds", *c.nodeAllocatableUpdatePeriodSeconds,
                  "must be greater than or equal to 10 seconds"));
  }
  // As Kubernetes: setting it at all (even to false) needs tokenRequests.
  if (c.serviceAccountTokenInSecrets && (!c.tokenRequests || c.tokenRequests->empty())) {
    v.add(invalid(p + ".serviceAccountTokenInSecrets", *c.serviceAccountTokenInSecrets,
                  "serviceAccountTokenInSecrets is set but no tokenRequests are specified"));
  }
}

using Ports = std::map<std::int64_t, std::string>; // port -> the field that uses it

// The node plugin pod but its driver container (nodeDriver); returns the ports its
// sidecars use.
Ports node(Validator& v, const DriverDeploymentSpec& spec) {
  const NodeSpec n = spec.node.value_or(NodeSpec{});
  const std::string p = "spec.node";
  if (n.kubeletDir) {
    const auto& d = *n.kubeletDir;
    if (d.empty() || d.front() != '/') {
      v.add(invalid(p + ".kubeletDir", d, "must be an absolute path"));
    } else if (d.find("/../") != std::string::npos || d.ends_with("/..") ||
               d.find_first_of(" \t\n:") != std::string::npos) {
      v.add(invalid(p + ".kubeletDir", d, "must not contain '..', ':' or whitespace"));
    }
  }
  if (n.updateStrategy) {
    if (!n.updateStrategy->is_object()) {
      v.add(invalid(p + ".updateStrategy", *n.updateStrategy, "must be a DaemonSetUpdateStrategy"));
    } else if (n.updateStrategy->contains("type")) {
      const auto& t = (*n.updateStrategy)["type"];
      v.oneOf(p + ".updateStrategy.type", t.is_string() ? t.get<std::string>() : "",
              {"OnDelete", "RollingUpdate", "WhenVolumesUnused"});
    }
    if (n.updateStrategy->is_object() && n.updateStrategy->contains("whenVolumesUnused") &&
        n.updateStrategy->value("type", Json()) != "WhenVolumesUnused") {
      v.add(forbidden(p + ".updateStrategy.whenVolumesUnused",
                      "may only be set with type WhenVolumesUnused"));
    }
    if (n.updateStrategy->is_object()) {
      const Json params = n.updateStrategy->value("whenVolumesUnused", Json::object());
      const Json max = params.is_object() ? params.value("maxUnavailable", Json()) : Json();
      const std::string text = max.is_string() ? max.get<std::string>() : "";
      const bool percent =
          text.size() >= 2 && text.size() <= 4 && text.back() == '%' &&
          std::all_of(text.begin(), text.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
      const bool count = max.is_number_integer() && max.get<std::int64_t>() >= 1 &&
                         max.get<std::int64_t>() <= 1000000;
      if (!max.is_null() && !percent && !count) {
        v.add(invalid(p + ".updateStrategy.whenVolumesUnused.maxUnavailable", max,
                      "must be a number of nodes (at least 1) or a percentage such as \"10%\""));
      }
    }
  }
  if (n.nodeSelector) {
    v.labels(p + ".nodeSelector", *n.nodeSelector, true);
  }
  v.tolerations(p + ".tolerations", n.tolerations);
  v.object(p + ".affinity", n.affinity, "an Affinity object");
  v.priorityClass(p + ".priorityClassName", n.priorityClassName);
  v.resources(p + ".resources", n.resources);
  v.container(p + ".registrar", n.registrar);
  v.container(p + ".livenessProbe", n.livenessProbe);
  v.rbacRules(p + ".rbacRules", n.rbacRules);
  v.object(p + ".podTemplatePatch", n.podTemplatePatch, "an object (a pod template patch)");

  Ports reserved;
  const auto regPort =
      n.registrar && n.registrar->httpPort ? *n.registrar->httpPort : defaults::kRegistrarPort;
  v.port(p + ".registrar.httpPort", regPort);
  reserved[regPort] = "spec.node.registrar.httpPort";
  const bool probe = !(n.livenessProbe && n.livenessProbe->enabled == false);
  if (probe) {
    const auto probePort =
        n.livenessProbe && n.livenessProbe->port ? *n.livenessProbe->port : defaults::kLivenessPort;
    v.port(p + ".livenessProbe.port", probePort);
    if (reserved.contains(probePort)) {
      v.add(invalid(p + ".livenessProbe.port", probePort, "is used by " + reserved[probePort]));
    }
    reserved[probePort] = "spec.node.livenessProbe.port";
  }
  return reserved;
}

// The node plugin's driver container; `reserved`: the ports of the pod's other containers.
void nodeDriver(Validator& v, const DriverDeploymentSpec& spec, const Ports& reserved) {
  const NodeSpec n = spec.node.value_or(NodeSpec{});
  const std::string p = "spec.node";
  const std::string kubeletDir = kubeletDirOf(spec);
  const bool ownContext = n.driver && n.driver->securityContext;
  const auto& context = ownContext ? n.driver->securityContext : spec.driver.securityContext;
  if (context && context->is_object() && !isTrue(*context, "privileged")) {
    v.add(forbidden((ownContext ? p + ".driver" : std::string("spec.driver")) +
                        ".securityContext.privileged",
                    "the node plugin must be privileged: it mounts the kubelet's pods and "
                    "plugins directories with Bidirectional propagation"));
  }
  driverInPod(v, spec, n.driver, p + ".driver", kNodeVolumes,
              {"/csi", "/dev", kubeletDir + "/pods", kubeletDir + "/plugins"}, reserved);
}

// The fields that shape a controller pod of its own, which placement NodePlugin has not.
void noControllerPod(Validator& v, const ControllerSpec& c, const std::string& p) {
  const auto reject = [&](const char* field, bool set) {
    if (set) {
      v.add(forbidden(p + "." + field,
                      "applies to the controller workload, and with placement NodePlugin there is "
                      "none: the sidecars run in the node plugin's pods (set it under spec.node)"));
    }
  };
  // kind has a schema default (Deployment), so only another value is the user's.
  reject("kind", c.kind && *c.kind != defaults::kControllerKind);
  reject("replicas", c.replicas.has_value());
  reject("nodeSelector", c.nodeSelector.has_value());
  reject("tolerations", c.tolerations.has_value());
  reject("affinity", c.affinity.has_value());
  reject("topologySpreadConstraints", c.topologySpreadConstraints.has_value());
  reject("priorityClassName", c.priorityClassName.has_value());
  reject("livenessProbe", c.livenessProbe.has_value());
  reject("driver", c.driver.has_value());
  reject("podTemplatePatch", c.podTemplatePatch.has_value());
}

// The controller side; `nodePorts`: the node plugin pod's sidecar ports. Returns the ports
// the node plugin's driver container must leave free (its sidecars', and the controller
// sidecars' when they run in the same pod).
Ports controller(Validator& v, const DriverDeploymentSpec& spec, const Ports& nodePorts) {
  const bool attachRequired =
      spec.csiDriver && spec.csiDriver->attachRequired ? *spec.csiDriver->attachRequired : true;
  const bool capacity = spec.csiDriver && spec.csiDriver->storageCapacity.value_or(false);
  if (!spec.controller) {
    if (capacity) {
      v.add(forbidden("spec.csiDriver.storageCapacity",
                      "requires spec.controller with the provisioner enabled, which publishes "
                      "CSIStorageCapacity objects"));
    }
    if (attachRequired) {
      v.warn("spec.csiDriver.attachRequired is true (the default) but there is no "
             "spec.controller, so no external-attacher will handle VolumeAttachments");
    }
    return nodePorts;
  }
  const ControllerSpec& c = *spec.controller;
  const std::string p = "spec.controller";
  if (c.placement) {
    v.oneOf(p + ".placement", *c.placement,
            {defaults::kPlacementWorkload, defaults::kPlacementNodePlugin});
  }
  const bool inNodePlugin = c.placement == defaults::kPlacementNodePlugin;
  if (inNodePlugin) {
    noControllerPod(v, c, p);
  }
  if (c.kind) {
    v.oneOf(p + ".kind", *c.kind, {"Deployment", "StatefulSet"});
  }
  const std::int32_t replicas = c.replicas.value_or(1);
  if (replicas < 0) {
    v.add(invalid(p + ".replicas", replicas, "must be greater than or equal to 0"));
  }
  if (c.nodeSelector) {
    v.labels(p + ".nodeSelector", *c.nodeSelector, true);
  }
  v.tolerations(p + ".tolerations", c.tolerations);
  v.object(p + ".affinity", c.affinity, "an Affinity object");
  v.list(p + ".topologySpreadConstraints", c.topologySpreadConstraints, "TopologySpreadConstraint");
  v.priorityClass(p + ".priorityClassName", c.priorityClassName);
  v.resources(p + ".resources", c.resources);
  v.leaderElection(p + ".leaderElection", c.leaderElection);
  v.rbacRules(p + ".rbacRules", c.rbacRules);
  v.object(p + ".podTemplatePatch", c.podTemplatePatch, "an object (a pod template patch)");
  v.container(p + ".livenessProbe", c.livenessProbe);

  // Leader election explicitly switched off, and where it was said.
  const bool leOffForAll = c.leaderElection && c.leaderElection->enabled == false;

  struct Entry {
    const char* name;
    const std::optional<Sidecar>& spec;
    bool enabledByDefault;
    std::int32_t port;
  };
  const Entry sidecars[] = {
      {"provisioner", c.provisioner, true, defaults::kProvisionerPort},
      {"attacher", c.attacher, attachRequired, defaults::kAttacherPort},
      {"resizer", c.resizer, false, defaults::kResizerPort},
      {"snapshotter", c.snapshotter, false, defaults::kSnapshotterPort},
      {"healthMonitor", c.healthMonitor, false, defaults::kHealthMonitorPort},
  };
  // In the node plugin the sidecars share the pod (and its ports) with the node's containers.
  Ports reserved = inNodePlugin ? nodePorts : Ports{};
  for (const auto& s : sidecars) {
    const std::string sp = p + "." + s.name;
    v.container(sp, s.spec);
    const bool enabled = s.spec && s.spec->enabled ? *s.spec->enabled : s.enabledByDefault;
    if (s.spec) {
      v.leaderElection(sp + ".leaderElection", s.spec->leaderElection);
    }
    if (!enabled) {
      continue;
    }
    const bool ownSetting = s.spec && s.spec->leaderElection && s.spec->leaderElection->enabled;
    const bool leOff = ownSetting ? !*s.spec->leaderElection->enabled : leOffForAll;
    if ((replicas > 1 || inNodePlugin) && leOff) {
      v.add(forbidden(ownSetting ? sp + ".leaderElection.enabled" : p + ".leaderElection.enabled",
                      std::string("leader election must stay enabled ") +
                          (inNodePlugin ? "with placement NodePlugin: otherwise the " +
                                              std::string(s.name) + " of every node acts at once"
                                        : "when replicas > 1: otherwise every replica of the " +
                                              std::string(s.name) + " acts at once")));
    }
    const auto port = s.spec && s.spec->httpPort ? *s.spec->httpPort : s.port;
    v.port(sp + ".httpPort", port);
    if (reserved.contains(port)) {
      v.add(invalid(sp + ".httpPort", port, "is used by " + reserved[port]));
    }
    reserved[port] = sp + ".httpPort";
  }
  const bool attacherEnabled =
      c.attacher && c.attacher->enabled ? *c.attacher->enabled : attachRequired;
  if (!attachRequired && c.attacher && c.attacher->enabled == true) {
    v.add(forbidden(p + ".attacher.enabled", "the external-attacher has nothing to do when "
                                             "spec.csiDriver.attachRequired is false"));
  }
  if (attachRequired && !attacherEnabled) {
    v.warn("spec.controller.attacher is disabled although spec.csiDriver.attachRequired is true: "
           "volumes will not attach unless another attacher handles this driver");
  }
  const bool provisionerEnabled = !(c.provisioner && c.provisioner->enabled == false);
  if (capacity && !provisionerEnabled) {
    v.add(forbidden("spec.csiDriver.storageCapacity",
                    "requires spec.controller.provisioner, which publishes CSIStorageCapacity "
                    "objects"));
  }
  if (inNodePlugin) {
    return reserved; // no pod, probe or driver container of its own
  }
  const bool probe = !(c.livenessProbe && c.livenessProbe->enabled == false);
  if (probe) {
    const auto probePort =
        c.livenessProbe && c.livenessProbe->port ? *c.livenessProbe->port : defaults::kLivenessPort;
    v.port(p + ".livenessProbe.port", probePort);
    if (reserved.contains(probePort)) {
      v.add(invalid(p + ".livenessProbe.port", probePort, "is used by " + reserved[probePort]));
    }
    reserved[probePort] = p + ".livenessProbe.port";
  }
  driverInPod(v, spec, c.driver, p + ".driver", kControllerVolumes, {"/csi"}, reserved);
  return nodePorts;
}

void storageClasses(Validator& v, const DriverDeploymentSpec& spec) {
  if (!spec.storageClasses) {
    return;
  }
  const auto& list = *spec.storageClasses;
  const std::string p = "spec.storageClasses";
  if (list.size() > kMaxStorageClasses) {
    v.add(tooMany(p, list.size(), kMaxStorageClasses));
  }
  std::set<std::string> names;
  std::size_t defaults = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& sc = list[i];
    const std::string ip = idx(p, i);
    if (sc.name.empty()) {
      v.add(required(ip + ".name"));
    } else {
      v.format(ip + ".name", sc.name, formats::dns1123Subdomain(sc.name));
      if (!names.insert(sc.name).second) {
        v.add(duplicate(ip + ".name", sc.name));
      }
    }
    if (sc.reclaimPolicy) {
      v.oneOf(ip + ".reclaimPolicy", *sc.reclaimPolicy, {"Delete", "Retain"});
    }
    if (sc.volumeBindingMode) {
      v.oneOf(ip + ".volumeBindingMode", *sc.volumeBindingMode,
              {"Immediate", "WaitForFirstConsumer"});
    }
    if (sc.isDefault.value_or(false) && ++defaults > 1) {
      v.add(forbidden(ip + ".isDefault", "at most one StorageClass may be the default"));
    }
    if (sc.mountOptions) {
      for (std::size_t j = 0; j < sc.mountOptions->size(); ++j) {
        if ((*sc.mountOptions)[j].empty()) {
          v.add(invalid(idx(ip + ".mountOptions", j), "", "must not be empty"));
        }
      }
    }
    v.list(ip + ".allowedTopologies", sc.allowedTopologies, "TopologySelectorTerm");
    if (sc.labels) {
      v.labels(ip + ".labels", *sc.labels, true);
    }
    if (sc.annotations) {
      v.labels(ip + ".annotations", *sc.annotations, false);
    }
    if (sc.parameters) {
      for (const auto& ref : secretReferences(*sc.parameters)) {
        const std::string key = "csi.storage.k8s.io/" + ref.kind + "-secret-";
        if (!ref.name || ref.name->empty()) {
          v.add(required(ip + ".parameters[" + key + "name]",
                         "a secret reference needs both the name and the namespace"));
        }
        if (!ref.namespace_ || ref.namespace_->empty()) {
          v.add(required(ip + ".parameters[" + key + "namespace]",
                         "a secret reference needs both the name and the namespace"));
        } else if (!isTemplated(*ref.namespace_)) {
          v.format(ip + ".parameters[" + key + "namespace]", *ref.namespace_,
                   formats::dns1123Label(*ref.namespace_));
        }
      }
    }
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
    const bool controllerPod =
        spec.controller && spec.controller->placement != defaults::kPlacementNodePlugin;
    const bool everyPodHasOne =
        spec.node && spec.node->driver && spec.node->driver->image &&
        (!controllerPod || (spec.controller->driver && spec.controller->driver->image));
    if (!everyPodHasOne) {
      v.add(required("spec.driver.image"));
    }
  }
  csiDriver(v, spec);
  const Ports nodePorts = node(v, spec);
  nodeDriver(v, spec, controller(v, spec, nodePorts));
  storageClasses(v, spec);

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
  // spec.driver is checked as part of both pods; one mistake is one error.
  std::set<std::string> seen;
  std::erase_if(v.result.errors,
                [&](const FieldError& e) { return !seen.insert(e.message()).second; });
  return std::move(v.result);
}

Validation validateUpdate(const DriverDeployment& old, const DriverDeployment& updated) {
  Validation result = validate(updated);
  if (old.spec.driverName != updated.spec.driverName) {
    result.errors.push_back(invalid("spec.driverName", updated.spec.driverName,
                                    "field is immutable (it was \"" + old.spec.driverName +
                                        "\"; create a new DriverDeployment for another driver)"));
  }
  return result;
}

} // namespace csiop::api
