// csi-operator on a real node: a kubelet with containerd joined to the suite's own control plane
// (`test/cluster/up --real-node`, no kwok nodes), the operator installed with `helm install` and
// running as the chart's pods from an image built from the binary under test, and the driver it
// deploys serving real volumes: registered by the kubelet in CSINode, a PVC provisioned,
// attached, mounted into a pod, written, expanded; the driver's pods deleted and upgraded under
// a mounted volume; the driver's deletion refused by the chart's webhook and, with the webhook
// not seeing it, held by the finalizer while the pod still uses its volume, completing by itself
// once the workload is gone, with no mount left on the node.
//
// Real: kube-apiserver, etcd, kube-controller-manager (PV binder, attach-detach and expand
// controllers), kube-scheduler, kubelet, containerd, runc, kube-proxy, helm, the operator. Stand-
// ins (test/csi, test/cluster/images): the CSI driver and sidecars (the kubernetes-csi ones cannot
// be built here) and the cluster DNS. The cluster is the machine's one real node, so the suite
// runs serially and always tears it down (CSIOP_E2E_KEEP_CLUSTER=1 keeps it for debugging).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "harness.hpp"
#include "operator_process.hpp"
#include "own_cluster.hpp"

namespace csiop::e2e {
namespace {

const std::string kClusterName = "e2e-real";
const std::string kNode = "127.0.0.1"; // the real node's name
const std::string kNamespace = "csiop-system";
const std::string kRelease = "csiop";
const std::string kFullname = "csiop-csi-operator";
const std::string kDriver = "hostpath.csi.k8s.io";
const std::string kDriverNamespace = "csi-hostpath";
const std::string kWorkloadNamespace = "default";
const std::string kDataDir = "/var/lib/csi-hostpath-data"; // examples/hostpath.yaml's hostPath
const std::string kBusybox = "localhost/csiop-test/busybox:1";
const std::string kUpgradedDriverImage = "localhost/csiop-test/hostpathplugin:2";
// The chart's Deployment's pods (the helm test pod carries the same app labels).
const std::string kOperatorPods = "app.kubernetes.io/instance=" + kRelease + ",pod-template-hash";

// The mount points of this machine (the node shares its mount namespace with this process).
std::vector<std::string> mountPoints() {
  std::ifstream in("/proc/self/mountinfo");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, devices, root, point;
    fields >> id >> parent >> devices >> root >> point;
    out.push_back(point);
  }
  return out;
}

std::vector<std::string> csiMountsOnTheNode() {
  std::vector<std::string> out;
  for (const auto& m : mountPoints()) {
    if (m.find("kubernetes.io~csi") != std::string::npos ||
        m.find("/plugins/kubernetes.io/csi/") != std::string::npos)
      out.push_back(m);
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += (out.empty() ? "" : "\n") + s;
  return out;
}

Json podsOf(const std::string& ns, const std::string& selector) {
  return kubectlJson({"get", "pods", "-n", ns, "-l", selector});
}

// Every container of every pod Ready (and at least one pod); `seen` gets the pods' states.
bool allContainersReady(const Json& pods, std::string& seen) {
  seen.clear();
  bool ready = !pods["items"].empty();
  for (const auto& p : pods["items"]) {
    seen += p["metadata"].value("name", "") + ":";
    if (p["metadata"].contains("deletionTimestamp"))
      ready = false;
    const auto statuses =
        p.value("status", Json::object()).value("containerStatuses", Json::array());
    if (statuses.size() != p["spec"]["containers"].size())
      ready = false;
    for (const auto& c : statuses) {
      seen +=
          " " + c.value("name", "") + "=" + (c.value("ready", false) ? "ready" : c["state"].dump());
      ready = ready && c.value("ready", false);
    }
    seen += "\n";
  }
  return ready;
}

std::string ddStatus(const std::string& dd) {
  return kubectl({"get", "dd", dd, "-o", "jsonpath={.status}"}).out;
}

std::string conditionField(const std::string& dd, const std::string& type,
                           const std::string& field) {
  return kubectl({"get", "dd", dd, "-o",
                  "jsonpath={.status.conditions[?(@.type==\"" + type + "\")]." + field + "}"})
      .out;
}

bool ddReadyAtCurrentGeneration(const std::string& dd, std::string& seen) {
  const Json o = kubectlJson({"get", "dd", dd});
  seen = o.value("status", Json::object()).dump();
  const auto generation = o["metadata"].value("generation", 0);
  for (const auto& c : o.value("status", Json::object()).value("conditions", Json::array())) {
    if (c.value("type", "") == "Ready")
      return c.value("status", "") == "True" && c.value("observedGeneration", -1) == generation;
  }
  return false;
}

// The drivers the node's CSINode lists.
std::set<std::string> registeredDrivers() {
  const auto r = kubectl({"get", "csinode", kNode, "-o", "jsonpath={.spec.drivers[*].name}"});
  std::set<std::string> out;
  std::istringstream in(r.out);
  for (std::string name; in >> name;)
    out.insert(name);
  return out;
}

RunResult execInWorkload(const std::string& script) {
  return kubectl({"exec", "-n", kWorkloadNamespace, "writer", "--", "sh", "-c", script});
}

// A pod on the real node that writes `file` into the claim `claim` at start and is ready while
// it can read it back.
std::string claimUser(const std::string& name, const std::string& claim, const std::string& file,
                      const std::string& content) {
  return R"(apiVersion: v1
kind: Pod
metadata:
  name: )" +
         name + R"(
  namespace: )" +
         kWorkloadNamespace + R"(
spec:
  nodeSelector:
    kubernetes.io/hostname: ")" +
         kNode + R"("
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: )" +
         kBusybox + R"(
    imagePullPolicy: Never
    command: [sh, -c, "echo )" +
         content + " > /data/" + file + R"( && exec sleep 3600"]
    readinessProbe:
      exec:
        command: [cat, /data/)" +
         file + R"(]
      periodSeconds: 1
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    persistentVolumeClaim:
      claimName: )" +
         claim + "\n";
}

std::string writerPod() {
  return claimUser("writer", "data", "hello", "written-by-the-pod");
}

std::string workloadManifest() {
  return R"(apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: )" +
         kWorkloadNamespace +
         R"(
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: csi-hostpath-sc
  resources:
    requests:
      storage: 1Gi
---
)" + writerPod();
}

class RealNode : public OwnClusterTest {
protected:
  static void SetUpTestSuite() {
    start(kClusterName, 0, {}, {"--real-node"});
    if (!started)
      return;
    binDir = cluster().binDir;
    // The operator image: the binary under test with exactly its shared libraries, imported
    // into the node's containerd under the chart's default image name.
    const auto image = run({(sourceDir() / "test/cluster/images").string(), "--name", kClusterName,
                            "--operator-binary", operatorBinary().string(), "--import"},
                           {.timeout = std::chrono::minutes(15)});
    if (!image.ok()) {
      ADD_FAILURE() << image;
      imageLoaded = false;
    }
  }
  static void TearDownTestSuite() {
    if (started && HasFailure()) {
      // What the node saw, for the log of a failed run.
      std::cerr << kubectl({"get", "pods", "-A", "-o", "wide"}).out
                << kubectl({"get", "events", "-A", "--sort-by=.lastTimestamp"}).out;
    }
    finish(kClusterName);
  }
  void SetUp() override {
    OwnClusterTest::SetUp();
    if (!IsSkipped() && !imageLoaded)
      GTEST_FAIL() << "the operator image could not be built and imported";
  }

  static RunResult helm(std::vector<std::string> args, std::chrono::milliseconds timeout = 300s) {
    args.insert(args.begin(), (binDir / "helm").string());
    args.insert(args.end(), {"--kubeconfig", cluster().kubeconfig.string()});
    return run(args, {.timeout = timeout});
  }

  static std::string leaseHolder() {
    return kubectl({"get", "lease", kFullname, "-n", kNamespace, "-o",
                    "jsonpath={.spec.holderIdentity}"})
        .out;
  }

  static std::set<std::string> operatorPods() {
    std::set<std::string> out;
    const Json pods = podsOf(kNamespace, kOperatorPods);
    for (const auto& p : pods["items"]) {
      if (!p["metadata"].contains("deletionTimestamp"))
        out.insert(p["metadata"]["name"].get<std::string>());
    }
    return out;
  }

  static RunResult applyDuplicate() {
    std::string duplicate = readFile(sourceDir() / "examples/hostpath.yaml");
    duplicate.replace(duplicate.find("name: hostpath\n"), 15, "name: hostpath-again\n");
    return kubectl({"apply", "-f", "-"}, duplicate);
  }

  static void expectWebhookDeniesDuplicate() {
    const auto denied = applyDuplicate();
    EXPECT_FALSE(denied.ok()) << denied;
    EXPECT_NE(denied.err.find("admission webhook \"validate.driverdeployments.csiop.dev\" denied"),
              std::string::npos)
        << denied;
  }

  static std::string volumeHandle() {
    const std::string pv = kubectl({"get", "pvc", "data", "-n", kWorkloadNamespace, "-o",
                                    "jsonpath={.spec.volumeName}"})
                               .out;
    return kubectl({"get", "pv", pv, "-o", "jsonpath={.spec.csi.volumeHandle}"}).out;
  }

  static inline std::filesystem::path binDir;
  static inline bool imageLoaded = true;
};

TEST_F(RealNode, HelmInstallRunsTwoOperatorPodsWithLeaderElectionAndHelmTestPasses) {
  const auto install = helm({"install", kRelease, (sourceDir() / "charts/csi-operator").string(),
                             "-n", kNamespace, "--create-namespace", "--wait", "--timeout", "5m"});
  ASSERT_TRUE(install.ok()) << install;

  std::string seen;
  const Json pods = podsOf(kNamespace, kOperatorPods);
  EXPECT_TRUE(allContainersReady(pods, seen)) << seen;
  ASSERT_EQ(pods["items"].size(), 2u) << seen;
  for (const auto& p : pods["items"]) {
    EXPECT_EQ(p["spec"]["nodeName"], kNode);
    EXPECT_EQ(p["status"]["phase"], "Running");
    const std::string image = p["status"]["containerStatuses"][0]["image"];
    EXPECT_NE(image.find("csi-operator"), std::string::npos) << image;
  }
  // One of the two pods leads.
  EXPECT_TRUE(waitFor("a pod holds the operator's Lease", 60s, [](std::string& s) {
    s = leaseHolder();
    const auto names = operatorPods();
    return std::any_of(names.begin(), names.end(),
                       [&](const std::string& n) { return s.find(n) != std::string::npos; });
  }));

  // The chart's test hook runs as a real pod: the webhook answers through the Service's DNS
  // name with a certificate for it.
  const auto test = helm({"test", kRelease, "-n", kNamespace, "--timeout", "3m"});
  EXPECT_TRUE(test.ok()) << test;
  EXPECT_NE(test.out.find("Phase:          Succeeded"), std::string::npos) << test;
}

TEST_F(RealNode, HostpathRegistersWithTheKubeletAndBecomesReady) {
  const auto apply = kubectl({"apply", "-f", (sourceDir() / "examples/hostpath.yaml").string()});
  ASSERT_TRUE(apply.ok()) << apply;
  EXPECT_TRUE(waitFor("hostpath Ready", 240s, [](std::string& seen) {
    return ddReadyAtCurrentGeneration("hostpath", seen);
  }));
  EXPECT_EQ(kubectl({"get", "dd", "hostpath", "-o", "jsonpath={.status.nodes.registered}"}).out,
            "1");

  // Every container of the node plugin and of the controller is Ready.
  std::string seen;
  EXPECT_TRUE(
      allContainersReady(podsOf(kDriverNamespace, "csiop.dev/driverdeployment=hostpath"), seen))
      << seen;
  const Json dsPods = podsOf(kDriverNamespace, "csiop.dev/driverdeployment=hostpath");
  EXPECT_EQ(dsPods["items"].size(), 2u) << "one node plugin pod and one controller pod: " << seen;

  // The kubelet wrote the registration: CSINode lists the driver with the node's ID and the
  // topology key the driver reported, and the kubelet is the manager of that field.
  const Json csiNode = kubectlJson({"get", "csinode", kNode, "--show-managed-fields"});
  bool listed = false;
  for (const auto& d : csiNode["spec"].value("drivers", Json::array())) {
    if (d.value("name", "") == kDriver) {
      listed = true;
      EXPECT_EQ(d.value("nodeID", ""), kNode);
      EXPECT_EQ(d.value("topologyKeys", Json::array()),
                Json::array({"topology.hostpath.csi/node"}));
    }
  }
  EXPECT_TRUE(listed) << csiNode.dump(2);
  std::set<std::string> managers;
  for (const auto& m : csiNode["metadata"].value("managedFields", Json::array()))
    managers.insert(m.value("manager", ""));
  EXPECT_EQ(managers, std::set<std::string>{"kubelet"}) << csiNode.dump(2);
  // The kubelet labelled the node with the driver's topology.
  EXPECT_EQ(kubectl({"get", "node", kNode, "-o",
                     "jsonpath={.metadata.labels.topology\\.hostpath\\.csi/node}"})
                .out,
            kNode);
}

TEST_F(RealNode, PvcIsProvisionedAttachedMountedAndWritten) {
  const auto apply = kubectl({"apply", "-f", "-"}, workloadManifest());
  ASSERT_TRUE(apply.ok()) << apply;
  ASSERT_TRUE(waitFor("PVC bound", 120s, [](std::string& seen) {
    seen =
        kubectl({"get", "pvc", "data", "-n", kWorkloadNamespace, "-o", "jsonpath={.status}"}).out;
    return seen.find("\"phase\":\"Bound\"") != std::string::npos;
  }));
  ASSERT_TRUE(waitFor("the writer pod Ready", 180s, [](std::string& seen) {
    return allContainersReady(kubectlJson({"get", "pods", "-n", kWorkloadNamespace,
                                           "--field-selector", "metadata.name=writer"}),
                              seen);
  }));

  // The pod reads back what it wrote; the file is in the driver's directory on the host.
  const auto read = execInWorkload("cat /data/hello");
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(trimmed(read.out), "written-by-the-pod");
  const std::string handle = volumeHandle();
  ASSERT_FALSE(handle.empty());
  EXPECT_EQ(trimmed(readFile(kDataDir + "/" + handle + "/hello")), "written-by-the-pod");
  EXPECT_FALSE(csiMountsOnTheNode().empty()) << "the kubelet's CSI mounts are on the host";

  // The attach path ran: the attach-detach controller's VolumeAttachment, attached by the
  // attacher through ControllerPublishVolume.
  const Json attachments = kubectlJson({"get", "volumeattachments"});
  ASSERT_EQ(attachments["items"].size(), 1u) << attachments.dump(2);
  const Json& va = attachments["items"][0];
  EXPECT_EQ(va["spec"]["attacher"], kDriver);
  EXPECT_EQ(va["spec"]["nodeName"], kNode);
  EXPECT_EQ(va["status"].value("attached", false), true) << va.dump(2);
}

TEST_F(RealNode, ExpandingThePvcGoesThroughTheResizer) {
  const auto patch = kubectl({"patch", "pvc", "data", "-n", kWorkloadNamespace, "--type=merge",
                              "-p", R"({"spec":{"resources":{"requests":{"storage":"2Gi"}}}})"});
  ASSERT_TRUE(patch.ok()) << patch;
  EXPECT_TRUE(waitFor("PVC capacity 2Gi", 120s, [](std::string& seen) {
    seen =
        kubectl({"get", "pvc", "data", "-n", kWorkloadNamespace, "-o", "jsonpath={.status}"}).out;
    return kubectl({"get", "pvc", "data", "-n", kWorkloadNamespace, "-o",
                    "jsonpath={.status.capacity.storage}"})
               .out == "2Gi";
  }));
  const std::string pv =
      kubectl({"get", "pvc", "data", "-n", kWorkloadNamespace, "-o", "jsonpath={.spec.volumeName}"})
          .out;
  EXPECT_EQ(kubectl({"get", "pv", pv, "-o", "jsonpath={.spec.capacity.storage}"}).out, "2Gi");
  EXPECT_TRUE(execInWorkload("cat /data/hello").ok());
}

TEST_F(RealNode, DeletedNodePluginPodComesBackReRegisteredAndTheVolumeStaysReadable) {
  const Json before = podsOf(kDriverNamespace, "app.kubernetes.io/component=node-plugin");
  ASSERT_EQ(before["items"].size(), 1u) << before.dump(2);
  const std::string old = before["items"][0]["metadata"]["name"];
  const auto del = kubectl({"delete", "pod", "-n", kDriverNamespace, old, "--wait=true"});
  ASSERT_TRUE(del.ok()) << del;

  std::string fresh;
  ASSERT_TRUE(waitFor("a new node plugin pod Ready", 120s, [&](std::string& seen) {
    const Json pods = podsOf(kDriverNamespace, "app.kubernetes.io/component=node-plugin");
    if (!allContainersReady(pods, seen) || pods["items"].size() != 1)
      return false;
    fresh = pods["items"][0]["metadata"]["name"];
    return fresh != old;
  }));
  // The new registrar registered again with the kubelet (the kubelet told it so).
  EXPECT_TRUE(waitFor("the kubelet confirmed the new registration", 60s, [&](std::string& seen) {
    seen = kubectl({"logs", "-n", kDriverNamespace, fresh, "-c", "node-driver-registrar"}).out;
    return seen.find("kubelet registered driver \"" + kDriver + "\"") != std::string::npos;
  }));
  EXPECT_EQ(registeredDrivers().count(kDriver), 1u);
  EXPECT_TRUE(waitFor("hostpath Ready", 120s, [](std::string& seen) {
    return ddReadyAtCurrentGeneration("hostpath", seen);
  }));
  // The bind mount belongs to the kubelet's pod directory, not to the plugin process.
  const auto read =
      execInWorkload("cat /data/hello && echo after-restart > /data/second && cat /data/second");
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(read.out, "written-by-the-pod\nafter-restart\n");
}

TEST_F(RealNode, DeletedLeaderPodHandsOverToALiveReplicaAndTheWebhookKeepsAnswering) {
  const std::string holder = leaseHolder();
  const auto pods = operatorPods();
  ASSERT_EQ(pods.size(), 2u);
  std::string leader, follower;
  for (const auto& p : pods)
    (holder.find(p) != std::string::npos ? leader : follower) = p;
  ASSERT_FALSE(leader.empty()) << "lease holder " << holder;
  ASSERT_FALSE(follower.empty());

  const auto del = kubectl({"delete", "pod", "-n", kNamespace, leader, "--wait=false"});
  ASSERT_TRUE(del.ok()) << del;
  // While the leader is gone, the webhook is served by the remaining ready replica.
  expectWebhookDeniesDuplicate();
  // The leader hands the Lease back on SIGTERM; a live replica takes it: the waiting one, or
  // the Deployment's replacement pod if it asks first.
  EXPECT_TRUE(waitFor("a live replica takes the Lease", 120s, [&](std::string& seen) {
    seen = leaseHolder();
    if (seen.empty() || seen.find(leader) != std::string::npos)
      return false;
    const auto live = operatorPods();
    return std::any_of(live.begin(), live.end(),
                       [&](const std::string& p) { return seen.find(p) != std::string::npos; });
  }));
  // The new leader reconciles: a child deleted now is recreated.
  const std::string oldUid =
      kubectl({"get", "storageclass", "csi-hostpath-sc", "-o", "jsonpath={.metadata.uid}"}).out;
  ASSERT_FALSE(oldUid.empty());
  const auto gone = kubectl({"delete", "storageclass", "csi-hostpath-sc"});
  ASSERT_TRUE(gone.ok()) << gone;
  EXPECT_TRUE(waitFor("the new leader recreates the StorageClass", 60s, [&](std::string& seen) {
    seen =
        kubectl({"get", "storageclass", "csi-hostpath-sc", "-o", "jsonpath={.metadata.uid}"}).out;
    return !seen.empty() && seen != oldUid;
  }));
  EXPECT_TRUE(waitFor("the Deployment is back to 2 ready replicas", 180s, [](std::string& seen) {
    return allContainersReady(podsOf(kNamespace, kOperatorPods), seen) &&
           operatorPods().size() == 2;
  }));
  expectWebhookDeniesDuplicate();
  EXPECT_EQ(ddCondition("hostpath", "Ready"), "True");
}

TEST_F(RealNode, DriverImageThatDoesNotExistIsReportedAndBreaksNothingElse) {
  const std::string broken = R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata:
  name: broken
spec:
  driverName: broken.csi.example.com
  csiDriver:
    attachRequired: false
  driver:
    image: localhost/csiop-test/no-such-driver:1
    imagePullPolicy: Never
)";
  const auto apply = kubectl({"apply", "-f", "-"}, broken);
  ASSERT_TRUE(apply.ok()) << apply;
  EXPECT_TRUE(waitFor("broken says why it is not Ready", 120s, [](std::string& seen) {
    seen = ddStatus("broken");
    return conditionField("broken", "Ready", "status") == "False" &&
           conditionField("broken", "Ready", "message").find("ErrImageNeverPull") !=
               std::string::npos &&
           conditionField("broken", "Degraded", "reason") == "PodsFailing";
  }));
  EXPECT_NE(
      conditionField("broken", "Degraded", "message").find("localhost/csiop-test/no-such-driver:1"),
      std::string::npos)
      << ddStatus("broken");
  // Nothing else is affected.
  EXPECT_EQ(ddCondition("hostpath", "Ready"), "True");
  EXPECT_TRUE(execInWorkload("cat /data/hello").ok());
  deleteDd("broken");
  EXPECT_FALSE(exists({"dd", "broken"}));
  EXPECT_FALSE(exists({"daemonset", "-n", "csi-broken", "broken-node"}));
  EXPECT_FALSE(exists({"csidriver", "broken.csi.example.com"}));
}

TEST_F(RealNode, DriverUpgradeRollsTheNodePluginAndTheMountedVolumeStaysReadable) {
  const std::string oldPod = podsOf(
      kDriverNamespace, "app.kubernetes.io/component=node-plugin")["items"][0]["metadata"]["name"];
  const auto patch =
      kubectl({"patch", "dd", "hostpath", "--type=merge", "-p",
               R"({"spec":{"driver":{"image":")" + kUpgradedDriverImage + R"("}}})"});
  ASSERT_TRUE(patch.ok()) << patch;
  EXPECT_TRUE(waitFor("the node plugin runs the new image", 180s, [&](std::string& seen) {
    const Json pods = podsOf(kDriverNamespace, "app.kubernetes.io/component=node-plugin");
    if (!allContainersReady(pods, seen) || pods["items"].size() != 1)
      return false;
    const Json& pod = pods["items"][0];
    for (const auto& c : pod["spec"]["containers"]) {
      if (c["name"] == "csi-driver")
        return pod["metadata"]["name"] != oldPod && c["image"] == kUpgradedDriverImage;
    }
    return false;
  }));
  // The DaemonSet rolled per its update strategy (RollingUpdate, the default).
  const Json ds = kubectlJson({"get", "daemonset", "hostpath-node", "-n", kDriverNamespace});
  EXPECT_EQ(ds["spec"]["updateStrategy"]["type"], "RollingUpdate");
  EXPECT_EQ(ds["status"].value("updatedNumberScheduled", 0), 1);
  EXPECT_TRUE(waitFor("hostpath Ready after the upgrade", 180s, [](std::string& seen) {
    return ddReadyAtCurrentGeneration("hostpath", seen);
  }));
  const auto read = execInWorkload("cat /data/hello /data/second");
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(read.out, "written-by-the-pod\nafter-restart\n");
}

// The pod of the FUSE-style volume (a PVC of StorageClass csi-hostpath-fuse, whose volumes the
// driver serves from its own process, as FUSE-based drivers do).
std::string fusePod() {
  return claimUser("fuse-user", "fuse-data", "fuse", "served-by-the-plugin");
}

std::string nodePluginPod() {
  const Json pods = podsOf(kDriverNamespace, "app.kubernetes.io/component=node-plugin");
  for (const auto& p : pods["items"]) {
    if (!p["metadata"].contains("deletionTimestamp"))
      return p["metadata"]["name"];
  }
  return "";
}

std::vector<std::string> fuseMountsOnTheNode() {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.find(" - fuse.hostpathplugin ") != std::string::npos)
      out.push_back(line);
  }
  return out;
}

RunResult inFusePod(const std::string& script) {
  return kubectl({"exec", "-n", kWorkloadNamespace, "fuse-user", "--", "sh", "-c", script});
}

TEST_F(RealNode, WhenVolumesUnusedKeepsAFuseVolumeUsableWhileTheDriverImageChanges) {
  // The FUSE pod is to be the only user of the driver's volumes on the node: the writer pod
  // goes for now (its claim and data stay; it comes back after the next test).
  ASSERT_TRUE(kubectl({"delete", "pod", "writer", "-n", kWorkloadNamespace, "--wait=true"}).ok());
  // The mount-safe strategy, and a StorageClass whose volumes the plugin process serves.
  const auto patch = kubectl(
      {"patch", "dd", "hostpath", "--type=json", "-p",
       R"([{"op":"add","path":"/spec/node","value":{"updateStrategy":{"type":"WhenVolumesUnused"}}},
           {"op":"add","path":"/spec/storageClasses/-","value":{"name":"csi-hostpath-fuse",
            "parameters":{"mountMode":"fuse"},"volumeBindingMode":"Immediate"}}])"});
  ASSERT_TRUE(patch.ok()) << patch;
  ASSERT_TRUE(
      waitFor("the DaemonSet updates OnDelete and hostpath is Ready", 120s, [](std::string& seen) {
        seen = kubectl({"get", "ds", "hostpath-node", "-n", kDriverNamespace, "-o",
                        "jsonpath={.spec.updateStrategy.type}"})
                   .out;
        return seen == "OnDelete" && ddReadyAtCurrentGeneration("hostpath", seen);
      }));
  const std::string pvc = R"(apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: fuse-data, namespace: )" +
                          kWorkloadNamespace +
                          R"(}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: csi-hostpath-fuse
  resources: {requests: {storage: 1Gi}}
)";
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, pvc + "---\n" + fusePod()).ok());
  ASSERT_TRUE(waitFor("the pod reads its FUSE volume", 120s, [](std::string& seen) {
    seen = kubectl({"get", "pod", "fuse-user", "-n", kWorkloadNamespace, "-o",
                    "jsonpath={.status.conditions}"})
               .out;
    return seen.find(R"("type":"Ready")") != std::string::npos &&
           seen.find(R"("status":"True","type":"Ready")") != std::string::npos;
  }));
  ASSERT_EQ(fuseMountsOnTheNode().size(), 1u) << "the volume is a FUSE mount of the plugin";

  // A new driver image: the node plugin is not replaced while the pod uses the volume.
  const std::string plugin = nodePluginPod();
  const std::string image = "registry.k8s.io/sig-storage/hostpathplugin:v1.17.0";
  ASSERT_TRUE(kubectl({"patch", "dd", "hostpath", "--type=merge", "-p",
                       R"({"spec":{"driver":{"image":")" + image + R"("}}})"})
                  .ok());
  EXPECT_TRUE(waitFor("status: the node waits, naming the pod", 60s, [](std::string& seen) {
    seen = kubectl({"get", "dd", "hostpath", "-o", "jsonpath={.status.nodes.waiting}"}).out;
    return seen.find(R"("node":"127.0.0.1")") != std::string::npos &&
           seen.find(R"("reason":"VolumesInUse")") != std::string::npos &&
           seen.find("default/fuse-user") != std::string::npos &&
           conditionField("hostpath", "Progressing", "reason") == "NodePluginUpdateWaiting";
  }));
  std::this_thread::sleep_for(10s);
  EXPECT_EQ(nodePluginPod(), plugin) << "the node plugin was replaced under a FUSE volume";
  EXPECT_EQ(conditionField("hostpath", "Ready", "status"), "True") << "the old plugin serves";
  const auto use = inFusePod("echo still-served >> /data/fuse && cat /data/fuse");
  ASSERT_TRUE(use.ok()) << use;
  EXPECT_EQ(use.out, "served-by-the-plugin\nstill-served\n");

  // The pod goes: the plugin is replaced at once, with the new image.
  ASSERT_TRUE(
      kubectl({"delete", "pod", "fuse-user", "-n", kWorkloadNamespace, "--wait=true"}).ok());
  EXPECT_TRUE(
      waitFor("the node plugin is replaced with the new image", 120s, [&](std::string& seen) {
        const std::string now = nodePluginPod();
        seen = now;
        if (now.empty() || now == plugin)
          return false;
        const Json pod = kubectlJson({"get", "pod", now, "-n", kDriverNamespace});
        return pod["spec"]["containers"][0]["image"] == image;
      }));
  EXPECT_TRUE(waitFor(
      "the rollout completes: updated 1, nothing waits, Ready", 120s, [](std::string& seen) {
        seen = kubectl({"get", "dd", "hostpath", "-o", "jsonpath={.status.nodes}"}).out;
        return seen.find(R"("updated":1)") != std::string::npos &&
               seen.find("waiting") == std::string::npos &&
               ddReadyAtCurrentGeneration("hostpath", seen);
      }));
  const auto events = kubectl({"get", "events", "-n", "default", "--field-selector",
                               "involvedObject.name=hostpath,reason=NodePluginReplaced", "-o",
                               "jsonpath={.items[*].message}"});
  EXPECT_NE(events.out.find("on node 127.0.0.1: no pod on the node uses a volume of the driver"),
            std::string::npos)
      << events;
}

TEST_F(RealNode, RestartingTheNodePluginUnderAFuseVolumeBreaksItWhichIsWhatTheStrategyPrevents) {
  // The failure mode itself: the same volume, the plugin deleted by hand under it.
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, fusePod()).ok());
  ASSERT_TRUE(waitFor("the pod reads its FUSE volume again", 120s, [](std::string& seen) {
    const auto r = inFusePod("cat /data/fuse");
    seen = r.out + r.err;
    return r.ok();
  }));
  const std::string plugin = nodePluginPod();
  ASSERT_TRUE(kubectl({"delete", "pod", plugin, "-n", kDriverNamespace, "--wait=true"}).ok());
  EXPECT_TRUE(waitFor("the volume is dead: transport endpoint is not connected", 60s,
                      [](std::string& seen) {
                        const auto r = inFusePod("cat /data/fuse");
                        seen = r.out + r.err;
                        return !r.ok() && seen.find("not connected") != std::string::npos;
                      }));
  // Cleaning up works on the dead mount: the new plugin detaches it.
  ASSERT_TRUE(
      kubectl({"delete", "pod", "fuse-user", "-n", kWorkloadNamespace, "--wait=true"}).ok());
  ASSERT_TRUE(
      kubectl({"delete", "pvc", "fuse-data", "-n", kWorkloadNamespace, "--wait=true"}).ok());
  EXPECT_TRUE(waitFor("no FUSE mount is left", 60s, [](std::string& seen) {
    const auto m = fuseMountsOnTheNode();
    seen = std::to_string(m.size()) + " FUSE mounts";
    return m.empty();
  }));
  // The writer comes back on its claim (the pod alone: the claim has grown since); the FUSE
  // volume's PV and attachment are gone.
  const auto writer = kubectl({"apply", "-f", "-"}, writerPod());
  ASSERT_TRUE(writer.ok()) << writer;
  EXPECT_TRUE(waitFor(
      "the writer reads its volume again, the only one of the driver", 120s, [](std::string& seen) {
        const auto r = execInWorkload("cat /data/hello");
        seen = r.out + r.err + kubectl({"get", "pv,volumeattachments", "-o", "name"}).out;
        const Json pvs = kubectlJson({"get", "pv"});
        const Json vas = kubectlJson({"get", "volumeattachments"});
        return r.ok() && pvs["items"].size() == 1 && vas["items"].size() == 1;
      }));
}

TEST_F(RealNode, DeletingTheDriverUnderAMountedVolumeIsRefusedByTheChartsWebhook) {
  const std::string pv =
      kubectl({"get", "pvc", "data", "-n", kWorkloadNamespace, "-o", "jsonpath={.spec.volumeName}"})
          .out;
  ASSERT_FALSE(pv.empty());
  const auto denied = kubectl({"delete", "dd", "hostpath", "--wait=false"});
  EXPECT_FALSE(denied.ok()) << denied;
  EXPECT_NE(denied.err.find("admission webhook \"validate.driverdeployments.csiop.dev\" denied "
                            "the request: DriverDeployment \"hostpath\" is in use: 1 "
                            "PersistentVolume (" +
                            pv + ") and 1 VolumeAttachment (csi-"),
            std::string::npos)
      << denied;
  EXPECT_NE(denied.err.find("use driver hostpath.csi.k8s.io"), std::string::npos) << denied;
  EXPECT_FALSE(kubectlJson({"get", "dd", "hostpath"})["metadata"].contains("deletionTimestamp"));
}

TEST_F(RealNode, WithoutTheWebhookTheFinalizerHoldsTheDriverUnderTheMountedVolume) {
  // A webhook that does not see deletions (down with Ignore, an older chart): the finalizer is
  // the guard. The chart's configuration is changed to CREATE and UPDATE only.
  const auto patched = kubectl(
      {"patch", "validatingwebhookconfiguration", kFullname, "--type=json", "-p",
       R"([{"op":"replace","path":"/webhooks/0/rules/0/operations","value":["CREATE","UPDATE"]}])"});
  ASSERT_TRUE(patched.ok()) << patched;
  ASSERT_TRUE(waitFor("the deletion is admitted", 30s, [](std::string& seen) {
    const auto r = kubectl({"delete", "dd", "hostpath", "--wait=false"});
    seen = r.out + r.err;
    return r.ok();
  }));
  EXPECT_TRUE(waitFor("DeletionBlocked=True naming the volume", 60s, [](std::string& seen) {
    seen = conditionField("hostpath", "DeletionBlocked", "message");
    return conditionField("hostpath", "DeletionBlocked", "status") == "True" &&
           seen.find("1 PersistentVolume") != std::string::npos;
  }));
  // The driver is not pulled out from under the pod: its pods run and the volume is usable.
  std::this_thread::sleep_for(5s);
  const Json pods = podsOf(kDriverNamespace, "app.kubernetes.io/component=node-plugin");
  std::string seen;
  EXPECT_TRUE(allContainersReady(pods, seen)) << seen;
  EXPECT_TRUE(exists({"csidriver", kDriver}));
  const auto write = execInWorkload("echo while-deleting > /data/third && cat /data/third");
  ASSERT_TRUE(write.ok()) << write;
  EXPECT_EQ(write.out, "while-deleting\n");
}

TEST_F(RealNode, TheDeletionCompletesWhenTheWorkloadIsGoneLeavingNoVolumeNoMountAndNoDriver) {
  const std::string handle = volumeHandle();
  ASSERT_FALSE(handle.empty());
  const auto workload =
      kubectl({"delete", "-f", "-", "--wait=true", "--timeout=120s"}, workloadManifest());
  ASSERT_TRUE(workload.ok()) << workload;
  // The driver, still running, deleted the volume (DeleteVolume) and then the PV; the attacher
  // detached.
  EXPECT_TRUE(waitFor("no PersistentVolume and no VolumeAttachment", 120s, [](std::string& seen) {
    seen = kubectl({"get", "pv,volumeattachments", "-o", "name"}).out;
    return trimmed(seen).empty();
  }));
  EXPECT_FALSE(std::filesystem::exists(kDataDir + "/" + handle));
  EXPECT_EQ(joined(csiMountsOnTheNode()), "");

  // Nothing else to do: the blocked deletion goes on by itself.
  EXPECT_TRUE(waitFor("the DriverDeployment is gone", 120s, [](std::string& seen) {
    const auto r = kubectl({"get", "dd", "hostpath"});
    seen = r.out + r.err;
    return !r.ok() && seen.find("NotFound") != std::string::npos;
  }));
  EXPECT_FALSE(exists({"dd", "hostpath"}));
  EXPECT_FALSE(exists({"csidriver", kDriver}));
  EXPECT_FALSE(exists({"daemonset", "-n", kDriverNamespace, "hostpath-node"}));
  EXPECT_FALSE(exists({"statefulset", "-n", kDriverNamespace, "hostpath-controller"}));
  EXPECT_FALSE(exists({"storageclass", "csi-hostpath-sc"}));
  EXPECT_TRUE(waitFor("the driver's pods are gone", 120s, [](std::string& seen) {
    seen = kubectl({"get", "pods", "-n", kDriverNamespace, "-o", "name"}).out;
    return trimmed(seen).empty();
  }));
  // The registrar's socket went with its pod, so the kubelet unregistered the driver.
  EXPECT_TRUE(waitFor("CSINode no longer lists the driver", 60s, [](std::string& seen) {
    const auto drivers = registeredDrivers();
    seen = std::to_string(drivers.size()) + " drivers";
    return drivers.count(kDriver) == 0;
  }));
  EXPECT_EQ(joined(csiMountsOnTheNode()), "");
}

} // namespace
} // namespace csiop::e2e
