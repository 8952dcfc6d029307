#include "validator.hpp"

#include <algorithm>

#include <csiop/api/annotations.hpp>
#include <csiop/api/formats.hpp>
#include <csiop/api/json_access.hpp>

namespace csiop::api::validation {

using formats::goDuration;

std::string idx(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

const std::set<std::string>& ownSidecarNames() {
  static const std::set<std::string> names = {"node-driver-registrar",
                                              "liveness-probe",
                                              "csi-provisioner",
                                              "csi-attacher",
                                              "csi-resizer",
                                              "csi-snapshotter",
                                              "csi-external-health-monitor-controller"};
  return names;
}

void Validator::oneOf(const std::string& path, const std::string& value,
                      const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    add(unsupported(path, value, allowed));
  }
}

void Validator::format(const std::string& path, const std::string& value,
                       const std::vector<std::string>& problems) {
  for (const auto& p : problems) {
    add(invalid(path, value, p));
  }
}

void Validator::port(const std::string& path, std::int64_t value) {
  if (value < 1 || value > 65535) {
    add(invalid(path, value, "must be between 1 and 65535, inclusive"));
  }
}

void Validator::labels(const std::string& path, const StringMap& map, bool valuesAreLabels) {
  for (const auto& [k, v] : map) {
    format(path, k, formats::qualifiedName(k));
    if (valuesAreLabels) {
      format(path + "[" + k + "]", v, formats::labelValue(v));
    }
  }
}

void Validator::pullPolicy(const std::string& path, const std::optional<std::string>& v) {
  if (v) {
    oneOf(path, *v, {"Always", "IfNotPresent", "Never"});
  }
}

void Validator::image(const std::string& path, const std::optional<std::string>& v) {
  if (v && (v->empty() || v->find_first_of(" \t\n") != std::string::npos)) {
    add(invalid(path, *v, "must be a non-empty image reference without whitespace"));
  }
}

void Validator::args(const std::string& path, const std::optional<std::vector<std::string>>& v) {
  if (!v) {
    return;
  }
  for (std::size_t i = 0; i < v->size(); ++i) {
    if ((*v)[i].empty()) {
      add(invalid(idx(path, i), "", "must not be empty"));
    }
  }
}

void Validator::resources(const std::string& path, const std::optional<Json>& v) {
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

void Validator::env(const std::string& path, const std::optional<Json>& v,
                    const std::set<std::string>& reserved) {
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
    if (reserved.contains(n)) {
      add(forbidden(idx(path, i) + ".name", n + " is set by the operator"));
    }
  }
}

std::set<std::int64_t> Validator::ports(const std::string& path, const std::optional<Json>& v) {
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
    if (!p.is_object() || !p.contains("containerPort") || !p["containerPort"].is_number_integer()) {
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

std::set<std::string> Validator::volumes(const std::string& path, const std::optional<Json>& v,
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

void Validator::volumeMounts(const std::string& path, const std::optional<Json>& v,
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

void Validator::tolerations(const std::string& path, const std::optional<Json>& v) {
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

void Validator::object(const std::string& path, const std::optional<Json>& v, const char* what) {
  if (v && !v->is_object()) {
    add(invalid(path, *v, std::string("must be ") + what));
  }
}

void Validator::list(const std::string& path, const std::optional<Json>& v, const char* what) {
  if (v && !v->is_array()) {
    add(invalid(path, *v, std::string("must be a list of ") + what));
  }
}

void Validator::rbacRules(const std::string& path, const std::optional<Json>& v) {
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

void Validator::priorityClass(const std::string& path, const std::optional<std::string>& v) {
  if (v && !v->empty()) { // "": no priority class
    format(path, *v, formats::dns1123Subdomain(*v));
  }
}

// The bounds of each timing: a retry more often than every second is load on the API server
// (every replica of every sidecar asks for the lease that often) for a failover that the lease
// duration dominates anyway; a lease over an hour leaves volumes unprovisioned, unattached and
// unresized that long after its holder dies (and 9999999999999h is more than Go's duration can
// hold, so the sidecar would not start). client-go's defaults are 15s, 10s and 2s.
namespace {
constexpr double kMinLeaderElectionSeconds = 1;
constexpr double kMaxLeaderElectionSeconds = 3600;
} // namespace

void Validator::leaderElection(const std::string& path, const std::optional<LeaderElection>& v) {
  if (!v) {
    return;
  }
  std::optional<double> lease;
  std::optional<double> renew;
  std::optional<double> retry;
  bool wrong = false;
  const auto dur = [&](const char* name, const std::optional<std::string>& s,
                       std::optional<double>& out) {
    if (!s) {
      return;
    }
    out = goDuration(*s);
    if (!out || *out <= 0) {
      add(invalid(path + "." + name, *s,
                  "must be a positive Go duration such as \"15s\" or \"1m30s\""));
      wrong = true;
    } else if (*out < kMinLeaderElectionSeconds || *out > kMaxLeaderElectionSeconds) {
      add(invalid(path + "." + name, *s, "must be between 1s and 1h"));
      wrong = true;
    }
  };
  dur("leaseDuration", v->leaseDuration, lease);
  dur("renewDeadline", v->renewDeadline, renew);
  dur("retryPeriod", v->retryPeriod, retry);
  if (wrong) {
    return; // how they relate says nothing more
  }
  // client-go's own checks (leaderelection.NewLeaderElector), with its defaults for what is not
  // set.
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

namespace {

// "N%" with N decimal digits: N, saturated at 101 however many digits there are; nothing when
// the text is not a percentage.
std::optional<std::int64_t> percentage(const Json& value) {
  if (!value.is_string()) {
    return std::nullopt;
  }
  const std::string& s = value.get_ref<const std::string&>();
  if (s.size() < 2 || s.back() != '%') {
    return std::nullopt;
  }
  std::int64_t percent = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') {
      return std::nullopt;
    }
    percent = std::min<std::int64_t>(percent * 10 + (s[i] - '0'), 101);
  }
  return percent;
}

} // namespace

void Validator::intOrPercent(const std::string& path, const Json& value) {
  if (value.is_number_integer()) {
    if (value.get<std::int64_t>() < 0) {
      add(invalid(path, value, "must be greater than or equal to 0"));
    }
    return;
  }
  if (const auto percent = percentage(value); percent && *percent <= 100) {
    return;
  }
  add(invalid(path, value, "must be an integer or a percentage between 0% and 100%"));
}

void Validator::nodeCount(const std::string& path, const Json& value) {
  const bool count = value.is_number_unsigned()
                         ? value.get<std::uint64_t>() >= 1
                         : value.is_number_integer() && value.get<std::int64_t>() >= 1;
  const auto percent = percentage(value);
  if (!count && !(percent && *percent >= 1 && *percent <= 100)) {
    add(invalid(path, value,
                "must be a number of nodes (at least 1) or a percentage (1% to 100%)"));
  }
}

void Validator::rollingUpdate(const std::string& path, const std::optional<Json>& strategy) {
  if (!strategy || !strategy->is_object()) {
    return;
  }
  const auto update = strategy->find("rollingUpdate");
  if (update == strategy->end() || !update->is_object()) {
    return;
  }
  if (const auto max = update->find("maxUnavailable"); max != update->end() && !max->is_null()) {
    intOrPercent(path + ".rollingUpdate.maxUnavailable", *max);
  }
}

void Validator::driverContainer(const std::string& path, const DriverContainer& c,
                                std::set<std::string>& volumeNames,
                                const std::set<std::string>& reservedVolumes) {
  if (c.name) {
    format(path + ".name", *c.name, formats::dns1123Label(*c.name));
    if (ownSidecarNames().contains(*c.name)) {
      add(invalid(path + ".name", *c.name, "is the name of one of the operator's sidecars"));
    }
  }
  image(path + ".image", c.image);
  pullPolicy(path + ".imagePullPolicy", c.imagePullPolicy);
  args(path + ".command", c.command);
  args(path + ".args", c.args);
  env(path + ".env", c.env, {"CSI_ENDPOINT", "KUBE_NODE_NAME"});
  resources(path + ".resources", c.resources);
  ports(path + ".ports", c.ports);
  const auto names = volumes(path + ".volumes", c.volumes, reservedVolumes);
  volumeNames.insert(names.begin(), names.end());
  object(path + ".securityContext", c.securityContext, "a SecurityContext object");
  probe(path + ".readinessProbe", c.readinessProbe);
  probe(path + ".startupProbe", c.startupProbe);
  lifecycle(path + ".lifecycle", c.lifecycle);
}

HttpEndpoint Validator::httpEndpoint(const std::string& path,
                                     const std::optional<std::string>& text,
                                     const std::optional<std::int32_t>& port, const char* portField,
                                     std::int32_t fallback, bool mayBeOff, bool hostNetwork,
                                     const std::string& hostNetworkPath) {
  if (text && port) {
    add(forbidden(path + ".httpEndpoint", std::string("may not be set together with ") + portField +
                                              " (" + portField +
                                              " P is the short form of httpEndpoint \":P\")"));
    return HttpEndpoint{};
  }
  if (!text) {
    const std::int32_t p = port.value_or(fallback);
    this->port(path + "." + portField, p);
    return HttpEndpoint{true, "", p};
  }
  const auto parsed = parseHttpEndpoint(*text);
  if (!parsed) {
    add(invalid(path + ".httpEndpoint", *text,
                std::string("must be HOST:PORT or :PORT with a port from 1 to 65535, such as "
                            "\":8080\" or \"localhost:8080\"") +
                    (mayBeOff ? ", or \"\" for no endpoint" : "")));
    return HttpEndpoint{};
  }
  if (!parsed->enabled && !mayBeOff) {
    add(required(path + ".httpEndpoint", "livenessprobe needs an endpoint (set enabled: false "
                                         "to run no livenessprobe)"));
  }
  if (parsed->loopback() && !hostNetwork) {
    add(invalid(path + ".httpEndpoint", *text,
                "binds to the pod's loopback interface, which the kubelet's probe reaches only "
                "in a pod on the node's network: set " +
                    hostNetworkPath + ": true, or bind to every interface (\":PORT\")"));
  }
  return *parsed;
}

void Validator::probe(const std::string& path, const std::optional<Json>& v) {
  if (!v) {
    return;
  }
  if (!v->is_object()) {
    add(invalid(path, *v, "must be a Probe object"));
    return;
  }
  int handlers = 0;
  for (const char* h : {"exec", "httpGet", "tcpSocket", "grpc"}) {
    if (v->contains(h)) {
      ++handlers;
      if (!(*v)[h].is_object()) {
        add(invalid(path + "." + h, (*v)[h], "must be an object"));
      }
    }
  }
  if (handlers != 1) {
    add(required(path, "must specify exactly one of exec, httpGet, tcpSocket or grpc"));
  }
  for (const auto& [field, min] : std::initializer_list<std::pair<const char*, std::int64_t>>{
           {"initialDelaySeconds", 0},
           {"timeoutSeconds", 1},
           {"periodSeconds", 1},
           {"successThreshold", 1},
           {"failureThreshold", 1},
           {"terminationGracePeriodSeconds", 1}}) {
    if (!v->contains(field)) {
      continue;
    }
    const Json& n = (*v)[field];
    if (!n.is_number_integer() || n.get<std::int64_t>() < min) {
      add(invalid(path + "." + field, n,
                  "must be an integer greater than or equal to " + std::to_string(min)));
    }
  }
}

void Validator::lifecycle(const std::string& path, const std::optional<Json>& v) {
  if (!v) {
    return;
  }
  if (!v->is_object()) {
    add(invalid(path, *v, "must be a Lifecycle object"));
    return;
  }
  for (const auto& [key, handler] : v->items()) {
    if (key == "stopSignal") {
      continue;
    }
    if (key != "postStart" && key != "preStop") {
      add(unsupported(path + "." + key, key, {"postStart", "preStop", "stopSignal"}));
      continue;
    }
    int handlers = 0;
    for (const char* h : {"exec", "httpGet", "tcpSocket", "sleep"}) {
      handlers += handler.is_object() && handler.contains(h) ? 1 : 0;
    }
    if (handlers != 1) {
      add(required(path + "." + key, "must specify exactly one of exec, httpGet, sleep or "
                                     "tcpSocket"));
    }
  }
}

void Validator::seconds(const std::string& path, const std::optional<std::int32_t>& v,
                        std::int32_t min) {
  if (v && *v < min) {
    add(invalid(path, *v, "must be greater than or equal to " + std::to_string(min)));
  }
}

void Validator::containers(const std::string& path, const std::optional<Json>& v,
                           std::set<std::string>& names, const std::set<std::string>& volumeNames) {
  if (!v) {
    return;
  }
  if (!v->is_array()) {
    add(invalid(path, *v, "must be a list of Container"));
    return;
  }
  for (std::size_t i = 0; i < v->size(); ++i) {
    const Json& c = (*v)[i];
    const std::string ip = idx(path, i);
    if (!c.is_object()) {
      add(invalid(ip, c, "must be a Container"));
      continue;
    }
    const std::string name = stringField(c, "name");
    if (name.empty()) {
      add(required(ip + ".name"));
    } else {
      format(ip + ".name", name, formats::dns1123Label(name));
      if (!names.insert(name).second) {
        add(duplicate(ip + ".name", name));
      }
    }
    if (stringField(c, "image").empty()) {
      add(required(ip + ".image"));
    }
    env(ip + ".env", c.contains("env") ? std::optional<Json>(c["env"]) : std::nullopt);
    ports(ip + ".ports", c.contains("ports") ? std::optional<Json>(c["ports"]) : std::nullopt);
    for (const char* p : {"livenessProbe", "readinessProbe", "startupProbe"}) {
      probe(ip + "." + p, c.contains(p) ? std::optional<Json>(c[p]) : std::nullopt);
    }
    if (c.contains("volumeMounts")) {
      volumeMounts(ip + ".volumeMounts", c["volumeMounts"], volumeNames, {});
    }
    object(ip + ".securityContext",
           c.contains("securityContext") ? std::optional<Json>(c["securityContext"]) : std::nullopt,
           "a SecurityContext object");
  }
}

void Validator::podSettings(const std::string& path, const PodSettings& pod) {
  object(path + ".securityContext", pod.securityContext, "a PodSecurityContext object");
  if (pod.dnsPolicy) {
    oneOf(path + ".dnsPolicy", *pod.dnsPolicy,
          {"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"});
  }
  if (pod.terminationGracePeriodSeconds && *pod.terminationGracePeriodSeconds < 0) {
    add(invalid(path + ".terminationGracePeriodSeconds", *pod.terminationGracePeriodSeconds,
                "must be greater than or equal to 0"));
  }
  if (pod.podLabels) {
    labels(path + ".podLabels", *pod.podLabels, true);
    for (const auto& [k, value] : *pod.podLabels) {
      if (k.starts_with("app.kubernetes.io/") || k == kOwnerLabel) {
        add(forbidden(path + ".podLabels[" + k + "]",
                      "is set by the operator (the workload's selector uses it)"));
      }
    }
  }
  if (pod.podAnnotations) {
    labels(path + ".podAnnotations", *pod.podAnnotations, false);
  }
}

} // namespace csiop::api::validation
