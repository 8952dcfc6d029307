#include "workload.hpp"

#include <stdexcept>

#include <csiop/api/json_access.hpp>
#include <csiop/api/load.hpp>
#include <csiop/render/render.hpp>

namespace csiop::bench {

std::string ObjectKey::str() const {
  return kind + " " + (namespace_.empty() ? name : namespace_ + "/" + name);
}

ObjectKey keyOf(const std::string& kind, const Json& object) {
  return {kind, api::metadataField(object, "namespace"), api::metadataField(object, "name")};
}

ObjectKey keyOf(const Json& object) {
  return keyOf(api::stringField(object, "kind"), object);
}

std::string driverNameFor(const std::string& name) {
  return name + ".csi.example.com";
}

Json driverDeployment(const std::string& name) {
  // examples/hostpath.yaml's CSIDriver, driver and StorageClass (persistent + ephemeral volumes,
  // a privileged node driver with a hostPath data directory), but with the controller sidecars
  // (provisioner, attacher, resizer, snapshotter) in a single-replica StatefulSet of their own:
  // the layout of most drivers, with a controller workload to create and roll out.
  Json dd = Json::parse(R"json({
    "apiVersion": "csiop.dev/v1alpha1",
    "kind": "DriverDeployment",
    "metadata": {"labels": {}},
    "spec": {
      "csiDriver": {
        "attachRequired": true,
        "podInfoOnMount": true,
        "volumeLifecycleModes": ["Persistent", "Ephemeral"],
        "fsGroupPolicy": "File"
      },
      "driver": {
        "image": "registry.k8s.io/sig-storage/hostpathplugin:v1.17.0",
        "args": ["--v=5", "--endpoint=$(CSI_ENDPOINT)", "--nodeid=$(KUBE_NODE_NAME)"],
        "securityContext": {"privileged": true},
        "volumes": [{"name": "csi-data-dir",
                     "hostPath": {"path": "/var/lib/csi-hostpath-data", "type": "DirectoryOrCreate"}}],
        "volumeMounts": [{"name": "csi-data-dir", "mountPath": "/csi-data-dir"}]
      },
      "controller": {
        "kind": "StatefulSet",
        "replicas": 1,
        "attacher": {"enabled": true},
        "resizer": {"enabled": true},
        "snapshotter": {"enabled": true}
      },
      "storageClasses": [{
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": true
      }]
    }
  })json");
  const std::string driverName = driverNameFor(name);
  dd["metadata"]["name"] = name;
  dd["metadata"]["labels"][kBenchLabel] = "true";
  dd["spec"]["driverName"] = driverName;
  dd["spec"]["namespace"] = name;
  auto& args = dd["spec"]["driver"]["args"];
  args.insert(args.begin(), "--drivername=" + driverName);
  dd["spec"]["storageClasses"][0]["name"] = name + "-sc";
  return validated(std::move(dd));
}

Json validated(Json dd) {
  const api::Loaded loaded = api::loadDriverDeployment(dd);
  if (!loaded.ok()) {
    std::string message =
        "invalid benchmark DriverDeployment " + api::metadataField(dd, "name") + ":";
    for (const auto& e : loaded.errors) {
      message += "\n  " + e;
    }
    throw std::runtime_error(message);
  }
  return dd;
}

std::vector<ObjectKey> expectedObjects(const Json& driverDeployment) {
  const api::Loaded loaded = api::loadDriverDeployment(driverDeployment);
  if (!loaded.ok() || loaded.objects.size() != 1) {
    throw std::runtime_error("expectedObjects: not one valid DriverDeployment");
  }
  std::vector<ObjectKey> out;
  for (const Json& object : render::render(loaded.objects.front())) {
    if (!render::isShared(object)) { // one for every driver, no owner label: not a child
      out.push_back(keyOf(object));
    }
  }
  return out;
}

Json csiNodeRegistration(const Json& node, const std::vector<std::string>& drivers) {
  const std::string nodeName = api::metadataField(node, "name");
  Json owner = {{"apiVersion", "v1"},
                {"kind", "Node"},
                {"name", nodeName},
                {"uid", api::metadataField(node, "uid")}};
  Json entries = Json::array();
  for (const auto& d : drivers) {
    entries.push_back({{"name", d},
                       {"nodeID", nodeName},
                       {"topologyKeys", Json::array({"topology.bench.csi/node"})}});
  }
  Json metadata = {{"name", nodeName}, {"ownerReferences", Json::array({owner})}};
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "CSINode"},
          {"metadata", std::move(metadata)},
          {"spec", {{"drivers", std::move(entries)}}}};
}

} // namespace csiop::bench
