#include "sections.hpp"

#include <csiop/api/formats.hpp>
#include <csiop/api/secrets.hpp>

namespace csiop::api::validation {

void userMetadata(Validator& v, const std::string& path, const std::optional<StringMap>& labels,
                  const std::optional<StringMap>& annotations) {
  if (labels) {
    v.labels(path + ".labels", *labels, true);
  }
  if (annotations) {
    v.labels(path + ".annotations", *annotations, false);
  }
}

void secretParameters(Validator& v, const std::string& path,
                      const std::vector<SecretReference>& refs) {
  for (const auto& ref : refs) {
    const std::string key = path + "[csi.storage.k8s.io/" + ref.kind + "-secret-";
    if (!ref.name || ref.name->empty()) {
      v.add(required(key + "name]", "a secret reference needs both the name and the namespace"));
    }
    if (!ref.namespace_ || ref.namespace_->empty()) {
      v.add(
          required(key + "namespace]", "a secret reference needs both the name and the namespace"));
    } else if (!isTemplated(*ref.namespace_)) {
      v.format(key + "namespace]", *ref.namespace_, formats::dns1123Label(*ref.namespace_));
    }
  }
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
    userMetadata(v, ip, sc.labels, sc.annotations);
    if (sc.parameters) {
      secretParameters(v, ip + ".parameters", secretReferences(*sc.parameters));
    }
  }
}

} // namespace csiop::api::validation
