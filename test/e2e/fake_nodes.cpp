#include "fake_nodes.hpp"

#include "harness.hpp"

namespace csiop::e2e {

namespace {

const std::string kPool = "csiop.dev/test-pool";

// kwok's standard fake node (test/cluster/up's), tainted and labelled as one of the pool.
std::string nodeManifest(const std::string& name, const std::vector<std::string>& startupTaints) {
  std::string taints;
  for (const std::string& key : startupTaints) {
    taints += "  - key: " + key + "\n    effect: NoSchedule\n";
  }
  return R"(apiVersion: v1
kind: Node
metadata:
  name: )" +
         name +
         R"(
  annotations:
    node.alpha.kubernetes.io/ttl: "0"
    kwok.x-k8s.io/node: fake
  labels:
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: )" +
         name + R"(
    kubernetes.io/os: linux
    type: kwok
    )" + kPool +
         R"(: fake
spec:
  taints:
  - key: )" +
         kPool +
         R"(
    value: fake
    effect: NoSchedule
)" + taints +
         R"(status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
  nodeInfo:
    architecture: amd64
    kubeProxyVersion: fake
    kubeletVersion: fake
    operatingSystem: linux
  phase: Running
)";
}

} // namespace

FakeNodes::FakeNodes(const std::string& prefix, int count,
                     const std::vector<std::string>& startupTaints) {
  std::string manifests;
  for (int i = 0; i < count; ++i) {
    names_.push_back(prefix + "-" + std::to_string(i));
    manifests += "---\n" + nodeManifest(names_.back(), startupTaints);
  }
  const auto apply = kubectl({"apply", "-f", "-"}, manifests);
  if (!apply.ok())
    throw E2EError("creating the fake nodes: " + apply.err);
  const bool ready = waitFor("the fake nodes Ready", 60s, [&](std::string& seen) {
    seen =
        kubectl(
            {"get", "nodes", "-l", kPool + "=fake", "-o",
             R"(jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end})"})
            .out;
    std::size_t readyNodes = 0;
    for (const std::string& name : names_)
      readyNodes += seen.find(name + "=True") != std::string::npos ? 1 : 0;
    return readyNodes == names_.size();
  });
  if (!ready) {
    remove();
    throw E2EError("the fake nodes are not Ready");
  }
  registration_.emplace(names_);
}

FakeNodes::~FakeNodes() {
  registration_.reset();
  remove();
}

void FakeNodes::remove() {
  if (names_.empty())
    return;
  // The nodes first, so that no DaemonSet puts a pod there again.
  std::vector<std::string> args = {"delete", "nodes", "--ignore-not-found"};
  args.insert(args.end(), names_.begin(), names_.end());
  kubectl(args);
  for (const std::string& node : names_) {
    kubectl({"delete", "pods", "-A", "--field-selector", "spec.nodeName=" + node, "--force",
             "--grace-period=0", "--ignore-not-found"});
  }
  args = {"delete", "csinodes", "--ignore-not-found", "--wait=false"};
  args.insert(args.end(), names_.begin(), names_.end());
  kubectl(args);
}

} // namespace csiop::e2e
