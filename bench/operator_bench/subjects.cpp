#include "subjects.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <csiop/api/json_access.hpp>
#include <csiop/api/yaml.hpp>
#include <csiop/render/render.hpp>

namespace csiop::bench {
namespace {

namespace r = kube::resources;

// The namespace of ceph-csi-operator and of its Drivers (OPERATOR_NAMESPACE).
constexpr const char* kCephNamespace = "ceph-bench";

const kube::ResourceRef cephDrivers{"csi.ceph.io", "v1", "drivers", "Driver", true};

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot read " + path.string());
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The DriverDeployment of the comparison: the peer's Driver in csi-operator's terms (its
// CSIDriver fields, a 2-replica controller Deployment with the four sidecars).
Json peerShapedDriverDeployment(const std::string& name) {
  Json dd = Json::parse(R"json({
    "apiVersion": "csiop.dev/v1alpha1",
    "kind": "DriverDeployment",
    "metadata": {"labels": {}},
    "spec": {
      "csiDriver": {"attachRequired": true, "podInfoOnMount": false, "fsGroupPolicy": "File",
                    "seLinuxMount": true},
      "driver": {
        "image": "quay.io/cephcsi/cephcsi:v3.15.0",
        "args": ["--endpoint=$(CSI_ENDPOINT)", "--nodeid=$(KUBE_NODE_NAME)"],
        "securityContext": {"privileged": true}
      },
      "controller": {
        "kind": "Deployment",
        "replicas": 2,
        "attacher": {"enabled": true},
        "resizer": {"enabled": true},
        "snapshotter": {"enabled": true}
      }
    }
  })json");
  dd["metadata"]["name"] = name;
  dd["metadata"]["labels"][kBenchLabel] = "true";
  dd["spec"]["driverName"] = driverNameFor(name);
  dd["spec"]["namespace"] = name;
  return validated(std::move(dd));
}

ExpectedWorkload renderedWorkload(const std::string& name) {
  ExpectedWorkload out;
  out.driverName = driverNameFor(name);
  for (const ObjectKey& key : expectedObjects(peerShapedDriverDeployment(name))) {
    if (key.kind == "DaemonSet") {
      out.daemonSet = key;
    } else if (key.kind == "Deployment") {
      out.deployment = key;
    }
  }
  if (out.daemonSet.name.empty() || out.deployment.name.empty()) {
    throw std::runtime_error("render gave no DaemonSet or no Deployment for " + name);
  }
  return out;
}

Json namedObject(const std::string& apiVersion, const std::string& kind, const std::string& ns,
                 const std::string& name) {
  Json metadata = {{"name", name}};
  if (!ns.empty()) {
    metadata["namespace"] = ns;
  }
  return {{"apiVersion", apiVersion}, {"kind", kind}, {"metadata", std::move(metadata)}};
}

} // namespace

std::string Subject::crName(const std::string& base) const {
  return kind == Kind::CsiOperator ? base : base + ".rbd.csi.ceph.com";
}

std::string Subject::crNamespace() const {
  return kind == Kind::CsiOperator ? "" : kCephNamespace;
}

Json Subject::cr(const std::string& name) const {
  if (kind == Kind::CsiOperator) {
    return peerShapedDriverDeployment(name);
  }
  Json driver = namedObject("csi.ceph.io/v1", "Driver", crNamespace(), name);
  driver["spec"] = {{"controllerPlugin", {{"replicas", 2}}}};
  return driver;
}

ExpectedWorkload Subject::expected(const std::string& name) const {
  if (kind == Kind::CsiOperator) {
    return renderedWorkload(name);
  }
  return {name,
          {"DaemonSet", kCephNamespace, name + "-nodeplugin"},
          {"Deployment", kCephNamespace, name + "-ctrlplugin"}};
}

Subject csiOperatorSubject(const std::string& binary, const std::filesystem::path& kubeconfig,
                           const Ports& ports) {
  Subject s;
  s.kind = Subject::Kind::CsiOperator;
  s.title = "csi-operator";
  s.resource = r::driverdeployments;
  s.argv = testsupport::operatorCommand(binary, "run", kubeconfig, ports);
  s.reconcileMetric = "csiop_reconcile_total";
  s.requestMetric = "csiop_api_requests_total";
  return s;
}

Subject cephCsiOperatorSubject(const std::string& binary, const std::filesystem::path& source,
                               const std::filesystem::path& kubeconfig, const Ports& ports) {
  Subject s;
  s.kind = Subject::Kind::CephCsiOperator;
  s.title = "ceph-csi-operator";
  s.resource = cephDrivers;
  const std::filesystem::path crdDir = source / "config" / "crd" / "bases";
  if (!std::filesystem::is_directory(crdDir)) {
    throw std::runtime_error(crdDir.string() + " is not a directory: --peer-source must be a " +
                             "checkout of ceph-csi-operator");
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(crdDir)) {
    if (entry.path().extension() == ".yaml") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    for (Json& crd : api::parseYaml(readFile(file))) {
      if (api::stringField(crd, "kind") == "CustomResourceDefinition") {
        s.crds.push_back(api::metadataField(crd, "name"));
        s.setup.push_back(std::move(crd));
      }
    }
  }
  if (s.crds.empty()) {
    throw std::runtime_error("no CustomResourceDefinition in " + crdDir.string());
  }
  s.setup.push_back(namedObject("v1", "Namespace", "", kCephNamespace));
  for (const char* account : {"rbd-ctrlplugin-sa", "rbd-nodeplugin-sa"}) {
    s.setup.push_back(namedObject("v1", "ServiceAccount", kCephNamespace, account));
  }
  s.argv = {binary,
            "--kubeconfig=" + kubeconfig.string(),
            "--metrics-bind-address=127.0.0.1:" + std::to_string(ports.metrics),
            "--metrics-secure=false",
            "--health-probe-bind-address=127.0.0.1:" + std::to_string(ports.health),
            "--zap-devel=false"};
  s.env = {{"OPERATOR_NAMESPACE", kCephNamespace}};
  // /readyz answers before the caches are synced; the Driver controller's workers start after.
  s.readyLogLine = {"Starting workers", R"("controller":"driver")"};
  s.reconcileMetric = "controller_runtime_reconcile_total";
  s.requestMetric = "rest_client_requests_total";
  s.deletesCsiDriver = false;
  return s;
}

} // namespace csiop::bench
