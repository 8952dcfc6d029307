#include <csiop/render/config_refs.hpp>

#include <algorithm>

#include <csiop/api/json_access.hpp>
#include <csiop/api/secrets.hpp>

#include "meta.hpp"

namespace csiop::render {
namespace {

using api::member;
using api::stringField;

bool isWorkload(const Json& o) {
  const std::string kind = stringField(o, "kind");
  return kind == "DaemonSet" || kind == "Deployment" || kind == "StatefulSet";
}

class Collector {
public:
  explicit Collector(std::string ns) : ns_(std::move(ns)) {}

  void add(const char* kind, const Json& ref, const char* nameKey = "name") {
    const std::string name = stringField(ref, nameKey);
    if (!name.empty()) {
      out_.push_back({kind, ns_, name, api::isTrue(ref, "optional")});
    }
  }

  void containers(const Json& list) {
    for (const Json& c : list.is_array() ? list : Json::array()) {
      for (const Json& e : member(c, "env").is_array() ? member(c, "env") : Json::array()) {
        add("ConfigMap", member(member(e, "valueFrom"), "configMapKeyRef"));
        add("Secret", member(member(e, "valueFrom"), "secretKeyRef"));
      }
      for (const Json& e : member(c, "envFrom").is_array() ? member(c, "envFrom") : Json::array()) {
        add("ConfigMap", member(e, "configMapRef"));
        add("Secret", member(e, "secretRef"));
      }
    }
  }

  void volumes(const Json& list) {
    for (const Json& v : list.is_array() ? list : Json::array()) {
      add("ConfigMap", member(v, "configMap"));
      add("Secret", member(v, "secret"), "secretName");
      const Json& sources = member(member(v, "projected"), "sources");
      for (const Json& s : sources.is_array() ? sources : Json::array()) {
        add("ConfigMap", member(s, "configMap"));
        add("Secret", member(s, "secret"));
      }
    }
  }

  std::vector<ConfigReference> take() {
    std::sort(out_.begin(), out_.end());
    // One entry per object; it is optional only if every reference to it is.
    std::vector<ConfigReference> unique;
    for (auto& r : out_) {
      if (!unique.empty() && unique.back().kind == r.kind && unique.back().name == r.name) {
        unique.back().optional = unique.back().optional && r.optional;
      } else {
        unique.push_back(std::move(r));
      }
    }
    return unique;
  }

private:
  std::string ns_;
  std::vector<ConfigReference> out_;
};

} // namespace

std::string ConfigReference::str() const {
  return kind + " " + namespace_ + "/" + name;
}

std::vector<ConfigReference> configReferences(const Json& workload) {
  if (!isWorkload(workload)) {
    return {};
  }
  Collector c(stringField(member(workload, "metadata"), "namespace"));
  const Json& pod = member(member(member(workload, "spec"), "template"), "spec");
  c.containers(member(pod, "initContainers"));
  c.containers(member(pod, "containers"));
  c.volumes(member(pod, "volumes"));
  return c.take();
}

std::vector<ConfigReference> storageClassSecrets(const api::Effective& e, bool controller) {
  std::vector<ConfigReference> out;
  for (const auto& sc : e.storageClasses) {
    if (!sc.parameters) {
      continue;
    }
    for (const auto& ref : api::secretReferences(*sc.parameters)) {
      if (ref.reader.has_value() != controller || !ref.name || !ref.namespace_ ||
          api::isTemplated(*ref.name) || api::isTemplated(*ref.namespace_)) {
        continue;
      }
      ConfigReference r{"Secret", *ref.namespace_, *ref.name, false};
      if (std::find(out.begin(), out.end(), r) == out.end()) {
        out.push_back(std::move(r));
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<ConfigReference> storageClassSecretsOf(const api::Effective& e, const Json& workload) {
  const std::string component =
      stringField(member(member(workload, "metadata"), "labels"), "app.kubernetes.io/component");
  const bool nodePlugin = component == component::kNode || component == component::kWindowsNode;
  const bool controller =
      component == component::kController ||
      (component == component::kNode && e.controller && e.controller->inNodePlugin());
  std::vector<ConfigReference> out;
  if (nodePlugin) {
    out = storageClassSecrets(e, false);
  }
  if (controller) {
    for (ConfigReference& r : storageClassSecrets(e, true)) {
      if (std::find(out.begin(), out.end(), r) == out.end()) {
        out.push_back(std::move(r));
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void setConfigHash(Json& workload, const std::string& hash) {
  workload["spec"]["template"]["metadata"]["annotations"][kConfigHashAnnotation] = hash;
}

std::string configHash(const Json& workload) {
  return stringField(
      member(member(member(member(workload, "spec"), "template"), "metadata"), "annotations"),
      kConfigHashAnnotation);
}

} // namespace csiop::render
