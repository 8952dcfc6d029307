#include <csiop/api/secrets.hpp>

#include <array>

namespace csiop::api {
namespace {

struct Kind {
  const char* name;
  std::optional<Component> reader;
};

// Which component reads each secret: external-provisioner, -attacher and
// -resizer GET theirs by name; the node ones are read by the kubelet through
// the node authorizer and need no grant from us.
const std::array kKinds = {
    Kind{"provisioner", Component::Provisioner},
    Kind{"controller-publish", Component::Attacher},
    Kind{"controller-expand", Component::Resizer},
    Kind{"node-stage", std::nullopt},
    Kind{"node-publish", std::nullopt},
    Kind{"node-expand", std::nullopt},
};

// VolumeSnapshotClass parameters: external-snapshotter's sidecar reads both.
const std::array kSnapshotKinds = {
    Kind{"snapshotter", Component::Snapshotter},
    Kind{"snapshotter-list", Component::Snapshotter},
};

constexpr const char* kPrefix = "csi.storage.k8s.io/";

template <class Kinds>
std::vector<SecretReference> references(const Kinds& kinds, const StringMap& parameters) {
  std::vector<SecretReference> out;
  for (const auto& kind : kinds) {
    const std::string base = std::string(kPrefix) + kind.name + "-secret-";
    const auto name = parameters.find(base + "name");
    const auto ns = parameters.find(base + "namespace");
    if (name == parameters.end() && ns == parameters.end()) {
      continue;
    }
    SecretReference ref{kind.name, kind.reader, std::nullopt, std::nullopt};
    if (name != parameters.end()) {
      ref.name = name->second;
    }
    if (ns != parameters.end()) {
      ref.namespace_ = ns->second;
    }
    out.push_back(std::move(ref));
  }
  return out;
}

} // namespace

bool isTemplated(const std::string& value) {
  return value.find("${") != std::string::npos;
}

std::vector<SecretReference> secretReferences(const StringMap& parameters) {
  return references(kKinds, parameters);
}

std::vector<SecretReference> snapshotSecretReferences(const StringMap& parameters) {
  return references(kSnapshotKinds, parameters);
}

std::vector<std::string> secretKinds() {
  std::vector<std::string> out;
  for (const auto& kind : kKinds) {
    out.emplace_back(kind.name);
  }
  return out;
}

} // namespace csiop::api
