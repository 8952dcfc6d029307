// csi-operator on a real node, with the real kubernetes-csi stack: a kubelet with containerd
// joined to the suite's own control plane (`test/cluster/up --real-node`, no kwok nodes but the
// four fake nodes one test adds for a verified rollout's batches: fake_nodes.hpp), the
// operator installed with `helm install` and running as the chart's pods from an image built
// from the binary under test, and examples/hostpath.yaml deploying the upstream hostpath driver
// with the upstream sidecars (node-driver-registrar, livenessprobe, external-provisioner,
// -attacher, -resizer, -snapshotter), at exactly the operator's default tags, serving real
// volumes: registered by the kubelet in CSINode, a PVC provisioned, attached through
// ControllerPublishVolume, mounted, written, expanded on the node, snapshotted and restored with
// its data, a CSI ephemeral inline volume, livenessprobe's health endpoint, the node plugin
// deleted and upgraded under a mounted volume, the driver's deletion refused by the chart's
// webhook and held by the finalizer while a pod uses its volume, and a clean removal with no
// mount left. Every driver container's log is scanned for RBAC denials and flag errors.
//
// The images: the real ones come from the image archives of CSIOP_IMAGE_ARCHIVES (see
// test/cluster/images; their IDs are checked against its IMAGE-IDS at import and here against
// what the containers run), else the node pulls them as any cluster would. The snapshot CRDs and
// snapshot-controller are installed by test/cluster/snapshot-controller. Stand-ins: the cluster
// DNS (test/cluster), the busybox of the workload pods, the plugin registration on the fake
// nodes (fake_nodes.hpp: kwok has none), and, for the two tests of the
// WhenVolumesUnused update strategy under a FUSE volume, the test driver of test/csi (whose FUSE
// mount mode, a volume served by the plugin process itself, has no upstream equivalent) run as a
// second DriverDeployment with the real sidecars.
//
// Each test sets up what it needs (the operator, the driver, the workload) when an earlier test
// did not leave it, so one failure does not fail the tests after it. The cluster is the
// machine's one real node, so the suite runs serially and always tears it down
// (CSIOP_E2E_KEEP_CLUSTER=1 keeps it for debugging).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "fake_nodes.hpp"
#include "harness.hpp"
#include "node_only_driver.hpp"
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
// The real driver as a distinct image (test/cluster/images, from the image archives).
const std::string kUpgradedDriverImage = "localhost/csiop-test/upstream-hostpathplugin:2";
// The chart's Deployment's pods (the helm test pod carries the same app labels).
const std::string kOperatorPods = "app.kubernetes.io/instance=" + kRelease + ",pod-template-hash";
const std::string kHostpathPods = "csiop.dev/driverdeployment=hostpath";

// The FUSE stand-in (test/csi's driver), deployed as DriverDeployment "fuse".
const std::string kFuseDriver = "fuse.hostpath.csiop.dev";
const std::string kFuseNamespace = "csi-fuse";
const std::string kFuseDataDir = "/var/lib/csiop-test-fuse-data";
const std::string kFuseImage1 = "localhost/csiop-test/hostpathplugin:1";
const std::string kFuseImage2 = "localhost/csiop-test/hostpathplugin:2";
const std::string kFusePods = "csiop.dev/driverdeployment=fuse";

// What a driver container must never log: RBAC denials and command-line errors.
const std::vector<std::string> kLogProblems = {
    "forbidden",                     // an RBAC denial ("... is forbidden: User ...")
    "flag provided but not defined", // Go's flag package
    "unknown flag",                  // pflag
    "unknown shorthand flag",        // pflag
    "invalid value \"",              // a flag's value refused
    "invalid argument \"",           // pflag's wording of the same
    "Error parsing flags",           //
};

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

RunResult inPod(const std::string& pod, const std::string& script) {
  return kubectl({"exec", "-n", kWorkloadNamespace, pod, "--", "sh", "-c", script});
}

RunResult execInWorkload(const std::string& script) {
  return inPod("writer", script);
}

bool podReady(const std::string& name, std::string& seen) {
  return allContainersReady(kubectlJson({"get", "pods", "-n", kWorkloadNamespace,
                                         "--field-selector", "metadata.name=" + name}),
                            seen);
}

// A pod on the real node that runs `script` at start, then sleeps; ready while `ready` succeeds.
std::string busyboxPod(const std::string& name, const std::string& script, const std::string& ready,
                       const std::string& volume) {
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
    command: [sh, -c, ")" +
         script + R"( && exec sleep 3600"]
    readinessProbe:
      exec:
        command: [sh, -c, ")" +
         ready + R"("]
      periodSeconds: 1
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
)" + volume;
}

std::string claimVolume(const std::string& claim) {
  return "    persistentVolumeClaim:\n      claimName: " + claim + "\n";
}

// A pod that writes `content` into `file` of the claim at start and is ready while it can read
// it back.
std::string claimUser(const std::string& name, const std::string& claim, const std::string& file,
                      const std::string& content) {
  return busyboxPod(name, "echo " + content + " > /data/" + file, "cat /data/" + file,
                    claimVolume(claim));
}

std::string writerPod() {
  return claimUser("writer", "data", "hello", "written-by-the-pod");
}

std::string claim(const std::string& name, const std::string& storageClass, const std::string& size,
                  const std::string& dataSource = "") {
  return R"(apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: )" +
         name + R"(
  namespace: )" +
         kWorkloadNamespace + R"(
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: )" +
         storageClass + R"(
  resources:
    requests:
      storage: )" +
         size + "\n" + dataSource;
}

// A VolumeSnapshot of the claim `pvc` of the workload namespace.
std::string volumeSnapshot(const std::string& name, const std::string& snapshotClass,
                           const std::string& pvc) {
  return "apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshot\nmetadata:\n  name: " +
         name + "\n  namespace: " + kWorkloadNamespace +
         "\nspec:\n  volumeSnapshotClassName: " + snapshotClass +
         "\n  source:\n    persistentVolumeClaimName: " + pvc + "\n";
}

bool snapshotReady(const std::string& name, std::string& seen) {
  seen =
      kubectl({"get", "volumesnapshot", name, "-n", kWorkloadNamespace, "-o", "jsonpath={.status}"})
          .out;
  return seen.find("\"readyToUse\":true") != std::string::npos;
}

// A claim of `size` restored from `snapshot`, and the pod `reader`, ready while it can read the
// restored /data/hello.
std::string restoredClaimAndReader(const std::string& name, const std::string& storageClass,
                                   const std::string& snapshot, const std::string& reader) {
  return claim(name, storageClass, "2Gi",
               "  dataSource:\n    apiGroup: snapshot.storage.k8s.io\n    kind: VolumeSnapshot\n"
               "    name: " +
                   snapshot + "\n") +
         "---\n" + busyboxPod(reader, "true", "cat /data/hello", claimVolume(name));
}

std::string workloadManifest() {
  return claim("data", "csi-hostpath-sc", "1Gi") + "---\n" + writerPod();
}

std::string pvOf(const std::string& pvc) {
  return kubectl({"get", "pvc", pvc, "-n", kWorkloadNamespace, "-o", "jsonpath={.spec.volumeName}"})
      .out;
}

std::string volumeHandle() {
  const std::string pv = pvOf("data");
  return pv.empty() ? ""
                    : kubectl({"get", "pv", pv, "-o", "jsonpath={.spec.csi.volumeHandle}"}).out;
}

// Name of a live pod of the selector in `ns` ("" if none).
std::string livePod(const std::string& ns, const std::string& selector) {
  const Json pods = podsOf(ns, selector);
  for (const auto& p : pods["items"]) {
    if (!p["metadata"].contains("deletionTimestamp"))
      return p["metadata"]["name"];
  }
  return "";
}

std::string nodePluginPod() {
  return livePod(kDriverNamespace, "app.kubernetes.io/component=node-plugin");
}

// Lines of every container log (current and, after a restart, previous) of the pods of
// `selector` in `ns` that show one of kLogProblems, each prefixed with pod/container.
std::vector<std::string> logProblems(const std::string& ns, const std::string& selector) {
  std::vector<std::string> hits;
  const Json pods = podsOf(ns, selector);
  for (const auto& p : pods["items"]) {
    const std::string pod = p["metadata"]["name"];
    for (const auto& c :
         p.value("status", Json::object()).value("containerStatuses", Json::array())) {
      const std::string container = c.value("name", "");
      std::vector<std::vector<std::string>> queries = {{"logs", "-n", ns, pod, "-c", container}};
      if (c.value("restartCount", 0) > 0)
        queries.push_back({"logs", "-n", ns, pod, "-c", container, "--previous"});
      for (const auto& q : queries) {
        std::istringstream lines(kubectl(q).out);
        for (std::string line; std::getline(lines, line);) {
          for (const auto& problem : kLogProblems) {
            if (line.find(problem) != std::string::npos) {
              hits.push_back(pod + "/" + container + ": " + line);
              break;
            }
          }
        }
      }
    }
  }
  return hits;
}

// The image IDs of the real images, by reference, from IMAGE-IDS of the image archives the
// node was given ({} when it was given none and pulls them).
std::map<std::string, std::string> archivedImageIds() {
  const auto env = readEnvFile(cluster().kubeconfig.parent_path() / "cluster.env");
  const auto dir = env.find("IMAGE_ARCHIVES");
  std::map<std::string, std::string> ids;
  if (dir == env.end() || dir->second.empty())
    return ids;
  std::ifstream in(std::filesystem::path(dir->second) / "IMAGE-IDS");
  std::string name, ref, id;
  while (in >> name >> ref >> id)
    ids[ref] = id;
  return ids;
}

class RealNode : public OwnClusterTest {
protected:
  static void SetUpTestSuite() {
    start(kClusterName, 0, {}, {"--real-node"});
    if (!started)
      return;
    binDir = cluster().binDir;
    // The real hostpath driver loads whatever state an earlier run left in its data dir.
    std::filesystem::remove_all(kDataDir);
    std::filesystem::remove_all(kFuseDataDir);
    // The operator image: the binary under test with exactly its shared libraries, imported
    // into the node's containerd under the chart's default image name.
    const auto image = run({(sourceDir() / "test/cluster/images").string(), "--name", kClusterName,
                            "--operator-binary", operatorBinary().string(), "--import"},
                           {.timeout = std::chrono::minutes(15)});
    if (!image.ok()) {
      ADD_FAILURE() << image;
      prepared = false;
    }
    // What a cluster admin installs before a driver with a snapshotter.
    const auto snapshots =
        run({(sourceDir() / "test/cluster/snapshot-controller").string(), "--name", kClusterName},
            {.timeout = std::chrono::minutes(5)});
    if (!snapshots.ok()) {
      ADD_FAILURE() << snapshots;
      prepared = false;
    }
  }
  static void TearDownTestSuite() {
    if (started && HasFailure()) {
      // What the node saw, for the log of a failed run.
      std::cerr << kubectl({"get", "pods", "-A", "-o", "wide"}).out
                << kubectl({"get", "events", "-A", "--sort-by=.lastTimestamp"}).out;
    }
    finish(kClusterName);
    std::filesystem::remove_all(kDataDir);
    std::filesystem::remove_all(kFuseDataDir);
  }
  void SetUp() override {
    OwnClusterTest::SetUp();
    if (!IsSkipped() && !prepared)
      GTEST_FAIL() << "the operator image or the snapshot support could not be installed";
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

  // The operator pod that holds the lease ("" if none).
  static std::string leaderPod() {
    const std::string holder = leaseHolder();
    for (const auto& p : operatorPods()) {
      if (holder.find(p) != std::string::npos) {
        return p;
      }
    }
    return "";
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

  // The operator, installed by helm with the chart's defaults (an earlier test's install, or
  // now).
  static void ensureOperator() {
    if (helm({"status", kRelease, "-n", kNamespace}).ok())
      return;
    const auto install =
        helm({"install", kRelease, (sourceDir() / "charts/csi-operator").string(), "-n", kNamespace,
              "--create-namespace", "--wait", "--timeout", "5m"});
    ASSERT_TRUE(install.ok()) << install;
  }

  // examples/hostpath.yaml applied and Ready.
  static void ensureHostpath() {
    ASSERT_NO_FATAL_FAILURE(ensureOperator());
    if (!exists({"dd", "hostpath"})) {
      const auto apply =
          kubectl({"apply", "-f", (sourceDir() / "examples/hostpath.yaml").string()});
      ASSERT_TRUE(apply.ok()) << apply;
    }
    ASSERT_TRUE(waitFor("hostpath Ready", 240s, [](std::string& seen) {
      return ddReadyAtCurrentGeneration("hostpath", seen);
    }));
  }

  // The claim "data" of the example's StorageClass, used by the ready pod "writer".
  static void ensureWriter() {
    ASSERT_NO_FATAL_FAILURE(ensureHostpath());
    if (!exists({"pvc", "data", "-n", kWorkloadNamespace})) {
      const auto apply = kubectl({"apply", "-f", "-"}, workloadManifest());
      ASSERT_TRUE(apply.ok()) << apply;
    } else if (!exists({"pod", "writer", "-n", kWorkloadNamespace})) {
      const auto apply = kubectl({"apply", "-f", "-"}, writerPod());
      ASSERT_TRUE(apply.ok()) << apply;
    }
    ASSERT_TRUE(waitFor("PVC bound", 120s, [](std::string& seen) {
      seen =
          kubectl({"get", "pvc", "data", "-n", kWorkloadNamespace, "-o", "jsonpath={.status}"}).out;
      return seen.find("\"phase\":\"Bound\"") != std::string::npos;
    }));
    ASSERT_TRUE(waitFor("the writer pod Ready", 180s,
                        [](std::string& seen) { return podReady("writer", seen); }));
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

  // No driver container of `dd` has logged an RBAC denial or a flag error (checked before the
  // tests that replace its pods, and at the end).
  static void expectCleanLogs(const std::string& ns, const std::string& selector) {
    const auto hits = logProblems(ns, selector);
    EXPECT_TRUE(hits.empty()) << joined(hits);
  }

  static inline std::filesystem::path binDir;
  static inline bool prepared = true;
};

TEST_F(RealNode, HelmInstallRunsTwoOperatorPodsWithLeaderElectionAndHelmTestPasses) {
  ASSERT_NO_FATAL_FAILURE(ensureOperator());

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

TEST_F(RealNode, TheUpstreamHostpathDriverRegistersWithTheKubeletInOnePodPerNode) {
  ASSERT_NO_FATAL_FAILURE(ensureHostpath());
  EXPECT_EQ(kubectl({"get", "dd", "hostpath", "-o", "jsonpath={.status.nodes.registered}"}).out,
            "1");

  // One pod per node runs the driver process and every sidecar (placement NodePlugin): no
  // controller workload.
  std::string seen;
  const Json pods = podsOf(kDriverNamespace, kHostpathPods);
  EXPECT_TRUE(allContainersReady(pods, seen)) << seen;
  ASSERT_EQ(pods["items"].size(), 1u) << seen;
  std::set<std::string> containers;
  for (const auto& c : pods["items"][0]["spec"]["containers"])
    containers.insert(c["name"].get<std::string>());
  EXPECT_EQ(containers, (std::set<std::string>{"csi-driver", "node-driver-registrar",
                                               "liveness-probe", "csi-provisioner", "csi-attacher",
                                               "csi-resizer", "csi-snapshotter"}));
  EXPECT_FALSE(exists({"statefulset", "-n", kDriverNamespace, "hostpath-controller"}));
  EXPECT_FALSE(exists({"deployment", "-n", kDriverNamespace, "hostpath-controller"}));

  // The containers run the real images: the IDs of the image archives' IMAGE-IDS.
  const auto ids = archivedImageIds();
  if (!ids.empty()) {
    std::map<std::string, std::string> specImage;
    for (const auto& c : pods["items"][0]["spec"]["containers"])
      specImage[c["name"]] = c["image"];
    for (const auto& c : pods["items"][0]["status"]["containerStatuses"]) {
      const std::string image = specImage[c["name"]];
      const auto id = ids.find(image);
      ASSERT_NE(id, ids.end()) << image << " is not one of the archived upstream images";
      EXPECT_EQ(c.value("imageID", ""), id->second) << c["name"] << " (" << image << ")";
    }
  }

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
  expectCleanLogs(kDriverNamespace, kHostpathPods);
}

TEST_F(RealNode, LivenessprobeReportsTheDriverHealthyToTheKubelet) {
  ASSERT_NO_FATAL_FAILURE(ensureHostpath());
  const std::string pod = nodePluginPod();
  ASSERT_FALSE(pod.empty());
  // livenessprobe's endpoint, reached through the API server's pod proxy: it probes the driver
  // over CSI (Probe) and answers ok.
  const auto health =
      kubectl({"get", "--raw",
               "/api/v1/namespaces/" + kDriverNamespace + "/pods/" + pod + ":9808/proxy/healthz"});
  ASSERT_TRUE(health.ok()) << health;
  EXPECT_EQ(trimmed(health.out), "ok");
  // The kubelet's livenessProbe of the driver container is that endpoint, and has never failed.
  const Json p = kubectlJson({"get", "pod", pod, "-n", kDriverNamespace});
  for (const auto& c : p["spec"]["containers"]) {
    if (c["name"] == "csi-driver") {
      EXPECT_EQ(c["livenessProbe"]["httpGet"]["port"], "healthz") << c.dump(2);
    }
  }
  for (const auto& c : p["status"]["containerStatuses"])
    EXPECT_EQ(c.value("restartCount", -1), 0) << c.dump(2);
}

TEST_F(RealNode, PvcIsProvisionedAttachedMountedAndWritten) {
  ASSERT_NO_FATAL_FAILURE(ensureWriter());

  // The pod reads back what it wrote; the file is in the driver's directory on the host.
  const auto read = execInWorkload("cat /data/hello");
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(trimmed(read.out), "written-by-the-pod");
  const std::string handle = volumeHandle();
  ASSERT_FALSE(handle.empty());
  EXPECT_EQ(trimmed(readFile(kDataDir + "/" + handle + "/hello")), "written-by-the-pod");
  EXPECT_FALSE(csiMountsOnTheNode().empty()) << "the kubelet's CSI mounts are on the host";

  // The attach path ran: the attach-detach controller's VolumeAttachment, attached by the
  // attacher through the driver's ControllerPublishVolume (--enable-attach: the driver stages a
  // volume only after that call).
  const Json attachments = kubectlJson({"get", "volumeattachments"});
  ASSERT_EQ(attachments["items"].size(), 1u) << attachments.dump(2);
  const Json& va = attachments["items"][0];
  EXPECT_EQ(va["spec"]["attacher"], kDriver);
  EXPECT_EQ(va["spec"]["nodeName"], kNode);
  EXPECT_EQ(va["status"].value("attached", false), true) << va.dump(2);
  const std::string driverLog =
      kubectl({"logs", "-n", kDriverNamespace, nodePluginPod(), "-c", "csi-driver"}).out;
  EXPECT_NE(driverLog.find("/csi.v1.Controller/ControllerPublishVolume"), std::string::npos);
  EXPECT_NE(driverLog.find("/csi.v1.Node/NodeStageVolume"), std::string::npos);
}

TEST_F(RealNode, ExpandingThePvcGrowsTheVolumeAndItsFilesystemOnTheNode) {
  ASSERT_NO_FATAL_FAILURE(ensureWriter());
  const auto patch = kubectl({"patch", "pvc", "data", "-n", kWorkloadNamespace, "--type=merge",
                              "-p", R"({"spec":{"resources":{"requests":{"storage":"2Gi"}}}})"});
  ASSERT_TRUE(patch.ok()) << patch;
  // The PVC's capacity changes only once the kubelet's NodeExpandVolume is done: the resizer's
  // ControllerExpandVolume alone leaves it at FileSystemResizePending.
  EXPECT_TRUE(waitFor("PVC capacity 2Gi, no resize pending", 180s, [](std::string& seen) {
    seen =
        kubectl({"get", "pvc", "data", "-n", kWorkloadNamespace, "-o", "jsonpath={.status}"}).out;
    return kubectl({"get", "pvc", "data", "-n", kWorkloadNamespace, "-o",
                    "jsonpath={.status.capacity.storage}"})
                   .out == "2Gi" &&
           seen.find("Resiz") == std::string::npos;
  }));
  EXPECT_EQ(kubectl({"get", "pv", pvOf("data"), "-o", "jsonpath={.spec.capacity.storage}"}).out,
            "2Gi");
  const std::string driverLog =
      kubectl({"logs", "-n", kDriverNamespace, nodePluginPod(), "-c", "csi-driver"}).out;
  EXPECT_NE(driverLog.find("/csi.v1.Controller/ControllerExpandVolume"), std::string::npos);
  EXPECT_NE(driverLog.find("/csi.v1.Node/NodeExpandVolume"), std::string::npos);
  EXPECT_TRUE(execInWorkload("cat /data/hello").ok());
}

TEST_F(RealNode, ASnapshotOfTheVolumeIsRestoredIntoANewVolumeWithItsData) {
  ASSERT_NO_FATAL_FAILURE(ensureWriter());
  const std::string manifest = R"(apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata:
  name: csi-hostpath-snapclass
driver: hostpath.csi.k8s.io
deletionPolicy: Delete
---
)" + volumeSnapshot("data-snapshot", "csi-hostpath-snapclass", "data");
  const auto snap = kubectl({"apply", "-f", "-"}, manifest);
  ASSERT_TRUE(snap.ok()) << snap;
  ASSERT_TRUE(waitFor("the snapshot is ready to use", 120s,
                      [](std::string& seen) { return snapshotReady("data-snapshot", seen); }));
  const std::string restored =
      restoredClaimAndReader("restored", "csi-hostpath-sc", "data-snapshot", "reader");
  const auto apply = kubectl({"apply", "-f", "-"}, restored);
  ASSERT_TRUE(apply.ok()) << apply;
  ASSERT_TRUE(waitFor("the reader of the restored volume Ready", 180s,
                      [](std::string& seen) { return podReady("reader", seen); }));
  const auto read = inPod("reader", "cat /data/hello");
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(trimmed(read.out), "written-by-the-pod");
  EXPECT_NE(pvOf("restored"), pvOf("data"));

  // Everything goes again, through the driver (DeleteVolume, DeleteSnapshot).
  const auto gone = kubectl({"delete", "-f", "-", "--wait=true", "--timeout=120s"},
                            restored + "---\n" + manifest);
  ASSERT_TRUE(gone.ok()) << gone;
  EXPECT_TRUE(waitFor("only the writer's volume is left", 120s, [](std::string& seen) {
    seen = kubectl({"get", "pv,volumesnapshotcontents", "-o", "name"}).out;
    return kubectlJson({"get", "pv"})["items"].size() == 1 &&
           kubectlJson({"get", "volumesnapshotcontents"})["items"].empty();
  }));
}

TEST_F(RealNode, ACsiEphemeralInlineVolumeLivesAndDiesWithItsPod) {
  ASSERT_NO_FATAL_FAILURE(ensureHostpath());
  const std::string pod = busyboxPod("inline-user", "echo inline > /data/file", "cat /data/file",
                                     "    csi:\n      driver: hostpath.csi.k8s.io\n");
  const auto apply = kubectl({"apply", "-f", "-"}, pod);
  ASSERT_TRUE(apply.ok()) << apply;
  ASSERT_TRUE(waitFor("the pod with an inline volume Ready", 120s,
                      [](std::string& seen) { return podReady("inline-user", seen); }));
  const std::string uid = kubectl({"get", "pod", "inline-user", "-n", kWorkloadNamespace, "-o",
                                   "jsonpath={.metadata.uid}"})
                              .out;
  const auto inPodMounts = [&] {
    std::vector<std::string> out;
    for (const auto& m : csiMountsOnTheNode()) {
      if (m.find(uid) != std::string::npos)
        out.push_back(m);
    }
    return out;
  };
  EXPECT_FALSE(inPodMounts().empty());
  EXPECT_TRUE(kubectlJson({"get", "pv"})["items"].size() <= 1u) << "no PersistentVolume for it";
  const std::string driverLog =
      kubectl({"logs", "-n", kDriverNamespace, nodePluginPod(), "-c", "csi-driver"}).out;
  EXPECT_NE(driverLog.find("ephemeral"), std::string::npos);

  ASSERT_TRUE(
      kubectl({"delete", "pod", "inline-user", "-n", kWorkloadNamespace, "--wait=true"}).ok());
  EXPECT_TRUE(waitFor("the inline volume is unmounted", 60s, [&](std::string& seen) {
    const auto left = inPodMounts();
    seen = joined(left);
    return left.empty();
  }));
}

// The hostpath driver in its distributed mode (examples/hostpath-distributed.yaml): the real
// external-provisioner runs in the node plugin pod with --node-deployment, publishes the node's
// capacity for each WaitForFirstConsumer class in CSIStorageCapacity objects owned by the node
// plugin DaemonSet, and provisions the claim of a pod scheduled on its node. No controller.
TEST_F(RealNode, NodeLocalProvisioningPublishesTheNodesCapacityAndProvisionsOnIt) {
  ASSERT_NO_FATAL_FAILURE(ensureOperator());
  const auto apply =
      kubectl({"apply", "-f", (sourceDir() / "examples/hostpath-distributed.yaml").string()});
  ASSERT_TRUE(apply.ok()) << apply;
  ASSERT_TRUE(waitFor("hostpath-local Ready", 240s, [](std::string& seen) {
    return ddReadyAtCurrentGeneration("hostpath-local", seen);
  }));
  EXPECT_TRUE(
      waitFor("a CSIStorageCapacity per class, owned by the node plugin", 120s, [](std::string& s) {
        const Json list = kubectlJson({"get", "csistoragecapacities", "-n", "csi-hostpath-local"});
        std::set<std::string> found;
        for (const auto& c : list["items"]) {
          const Json owners = c["metadata"].value("ownerReferences", Json::array());
          found.insert(c.value("storageClassName", "") + " " + c.value("capacity", "") + " " +
                       (owners.empty()
                            ? "-"
                            : owners[0].value("kind", "") + "/" + owners[0].value("name", "")));
        }
        s = joined({found.begin(), found.end()});
        return found ==
               std::set<std::string>{"csi-hostpath-local-fast 100Gi DaemonSet/hostpath-local-node",
                                     "csi-hostpath-local-slow 10Gi DaemonSet/hostpath-local-node"};
      }));

  const auto workload = kubectl(
      {"apply", "-f", "-"}, claim("local", "csi-hostpath-local-fast", "1Gi") + "---\n" +
                                claimUser("local-writer", "local", "hello", "written-on-its-node"));
  ASSERT_TRUE(workload.ok()) << workload;
  EXPECT_TRUE(waitFor("the pod on the node-local volume Ready", 180s,
                      [](std::string& seen) { return podReady("local-writer", seen); }));
  const std::string pv = pvOf("local");
  ASSERT_FALSE(pv.empty());
  EXPECT_EQ(kubectl({"get", "pv", pv, "-o", "jsonpath={.spec.csi.driver}"}).out,
            "hostpath-local.csi.k8s.io");
  // The node's own provisioner made it: the volume is pinned to the node by its topology.
  EXPECT_NE(kubectl({"get", "pv", pv, "-o", "jsonpath={.spec.nodeAffinity}"})
                .out.find("topology.hostpath.csi/node"),
            std::string::npos);
  EXPECT_NE(kubectl({"get", "events", "-n", kWorkloadNamespace, "--field-selector",
                     "involvedObject.name=local,reason=ProvisioningSucceeded", "-o", "name"})
                .out,
            "");
  kubectl({"delete", "pod", "local-writer", "-n", kWorkloadNamespace, "--wait=true"});
  kubectl({"delete", "pvc", "local", "-n", kWorkloadNamespace, "--wait=true"});
  EXPECT_TRUE(waitFor("the node-local volume is deleted", 120s, [&](std::string& seen) {
    seen = kubectl({"get", "pv", pv, "-o", "name", "--ignore-not-found"}).out;
    return seen.empty();
  }));
  deleteDd("hostpath-local");
  EXPECT_TRUE(waitFor("the distributed driver is gone, its capacity objects with it", 120s,
                      [](std::string& seen) {
                        seen = kubectl({"get", "csistoragecapacities,daemonset", "-n",
                                        "csi-hostpath-local", "-o", "name"})
                                   .out;
                        return seen.empty();
                      }));
  kubectl({"delete", "namespace", "csi-hostpath-local", "--wait=false"});
}

// The hostpath driver in the layout upstream deploys it in (examples/hostpath-single-pod.yaml,
// placement SinglePod): one pod, a StatefulSet's, runs the driver, the registrar and every
// controller sidecar, so every CSI call reaches the one process that knows the volumes. The
// volume's whole life through it: provisioned, written, expanded, snapshotted, restored, deleted
// with its data gone from the node.
const std::string kSingleDd = "hostpath-single";
const std::string kSingleDriver = "hostpath-single.csi.k8s.io";
const std::string kSingleNamespace = "csi-hostpath-single";
const std::string kSingleDataDir = "/var/lib/csi-hostpath-single-data"; // the example's hostPath

// What the single pod's driver keeps on the node: its volumes and snapshots, beside state.json.
std::set<std::string> singleDriverData() {
  std::set<std::string> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(kSingleDataDir, error)) {
    if (entry.path().filename() != "state.json")
      out.insert(entry.path().filename().string());
  }
  return out;
}

TEST_F(RealNode, TheUpstreamLayoutServesAVolumesWholeLifeFromOnePod) {
  ASSERT_NO_FATAL_FAILURE(ensureOperator());
  const auto apply =
      kubectl({"apply", "-f", (sourceDir() / "examples/hostpath-single-pod.yaml").string()});
  ASSERT_TRUE(apply.ok()) << apply;
  ASSERT_TRUE(waitFor("hostpath-single Ready, registered on its node", 240s, [](std::string& seen) {
    return ddReadyAtCurrentGeneration(kSingleDd, seen) &&
           kubectl({"get", "dd", kSingleDd, "-o", "jsonpath={.status.nodes.registered}"}).out ==
               "1" &&
           registeredDrivers().contains(kSingleDriver);
  }));
  // One pod of a StatefulSet, no DaemonSet, no controller workload: every container in it.
  EXPECT_EQ(kubectl({"get", "daemonset,deployment", "-n", kSingleNamespace, "-o", "name"}).out, "");
  const Json pods = podsOf(kSingleNamespace, "csiop.dev/driverdeployment=" + kSingleDd);
  ASSERT_EQ(pods["items"].size(), 1u) << pods.dump(2);
  const Json& pod = pods["items"][0];
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
  std::set<std::string> containers;
  for (const auto& c : pod["spec"]["containers"])
    containers.insert(c.value("name", ""));
  EXPECT_EQ(containers,
            (std::set<std::string>{"csi-driver", "node-driver-registrar", "liveness-probe",
                                   "csi-provisioner", "csi-attacher", "csi-resizer",
                                   "csi-snapshotter", "csi-external-health-monitor-controller"}));
  const std::string podName = pod["metadata"]["name"];
  const auto driverLog = [&] {
    return kubectl({"logs", "-n", kSingleNamespace, podName, "-c", "csi-driver"}).out;
  };

  // Provisioned and written: the file is in the driver's directory on the node.
  const std::string workload = claim("single", "csi-hostpath-single-sc", "1Gi") + "---\n" +
                               claimUser("single-writer", "single", "hello", "written-in-one-pod");
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, workload).ok());
  ASSERT_TRUE(waitFor("the writer Ready", 180s,
                      [](std::string& seen) { return podReady("single-writer", seen); }));
  const std::string pv = pvOf("single");
  const std::string handle =
      kubectl({"get", "pv", pv, "-o", "jsonpath={.spec.csi.volumeHandle}"}).out;
  ASSERT_FALSE(handle.empty());
  EXPECT_EQ(trimmed(readFile(kSingleDataDir + "/" + handle + "/hello")), "written-in-one-pod");

  // Expanded: the controller's and the node's halves, by the same process.
  ASSERT_TRUE(kubectl({"patch", "pvc", "single", "-n", kWorkloadNamespace, "--type=merge", "-p",
                       R"({"spec":{"resources":{"requests":{"storage":"2Gi"}}}})"})
                  .ok());
  EXPECT_TRUE(waitFor("capacity 2Gi, no resize pending", 180s, [](std::string& seen) {
    seen =
        kubectl({"get", "pvc", "single", "-n", kWorkloadNamespace, "-o", "jsonpath={.status}"}).out;
    return seen.find(R"("storage":"2Gi")") != std::string::npos &&
           seen.find("Resiz") == std::string::npos;
  }));

  // Snapshotted and restored into a new volume with the data.
  const std::string snapshot =
      volumeSnapshot("single-snapshot", "csi-hostpath-single-snapclass", "single");
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, snapshot).ok());
  ASSERT_TRUE(waitFor("the snapshot ready to use", 120s,
                      [](std::string& seen) { return snapshotReady("single-snapshot", seen); }));
  const std::string restored = restoredClaimAndReader("single-restored", "csi-hostpath-single-sc",
                                                      "single-snapshot", "single-reader");
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, restored).ok());
  ASSERT_TRUE(waitFor("the reader of the restored volume Ready", 180s,
                      [](std::string& seen) { return podReady("single-reader", seen); }));
  const auto read = inPod("single-reader", "cat /data/hello");
  EXPECT_EQ(trimmed(read.out), "written-in-one-pod") << read;
  EXPECT_EQ(singleDriverData().size(), 3u) << "two volumes and a snapshot on the node";

  // Deleted, through the driver that made them: nothing of them is left on the node.
  const auto gone = kubectl({"delete", "-f", "-", "--wait=true", "--timeout=120s"},
                            restored + "---\n" + snapshot + "---\n" + workload);
  EXPECT_TRUE(gone.ok()) << gone;
  EXPECT_TRUE(
      waitFor("no volume, snapshot or attachment of the driver left", 120s, [](std::string& seen) {
        seen = kubectl({"get", "pv,volumesnapshotcontents,volumeattachments", "-o",
                        "jsonpath={range .items[*]}{.spec.csi.driver}"
                        "{.spec.driver}{.spec.attacher} {end}"})
                   .out;
        return seen.find(kSingleDriver) == std::string::npos;
      }));
  EXPECT_TRUE(waitFor("the driver's data gone from the node", 60s, [](std::string& seen) {
    const std::set<std::string> left = singleDriverData();
    seen = joined({left.begin(), left.end()});
    return left.empty();
  }));
  const std::string log = driverLog();
  for (const char* call : {"/csi.v1.Controller/CreateVolume", "/csi.v1.Node/NodePublishVolume",
                           "/csi.v1.Controller/ControllerExpandVolume",
                           "/csi.v1.Node/NodeExpandVolume", "/csi.v1.Controller/CreateSnapshot",
                           "/csi.v1.Controller/DeleteSnapshot", "/csi.v1.Controller/DeleteVolume"})
    EXPECT_NE(log.find(call), std::string::npos) << call << " not in the one driver's log";
  EXPECT_EQ(logProblems(kSingleNamespace, "csiop.dev/driverdeployment=" + kSingleDd),
            std::vector<std::string>{});

  deleteDd(kSingleDd);
  EXPECT_TRUE(waitFor("the driver unregistered from the node", 60s, [](std::string& seen) {
    const std::set<std::string> drivers = registeredDrivers();
    seen = joined({drivers.begin(), drivers.end()});
    return !drivers.contains(kSingleDriver);
  }));
  kubectl({"delete", "namespace", kSingleNamespace, "--wait=false"});
}

TEST_F(RealNode, DeletedNodePluginPodComesBackReRegisteredAndTheVolumeStaysReadable) {
  ASSERT_NO_FATAL_FAILURE(ensureWriter());
  expectCleanLogs(kDriverNamespace, kHostpathPods); // before its logs go with the pod
  const std::string old = nodePluginPod();
  ASSERT_FALSE(old.empty());
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
    return seen.find("\"Received NotifyRegistrationStatus call\" "
                     "status=\"plugin_registered:true\"") != std::string::npos;
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
  ASSERT_NO_FATAL_FAILURE(ensureHostpath());
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
  ASSERT_NO_FATAL_FAILURE(ensureHostpath());
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
  deleteDd("broken");
  EXPECT_FALSE(exists({"dd", "broken"}));
  EXPECT_FALSE(exists({"daemonset", "-n", "csi-broken", "broken-node"}));
  EXPECT_FALSE(exists({"csidriver", "broken.csi.example.com"}));
}

TEST_F(RealNode, DriverUpgradeRollsTheNodePluginAndTheMountedVolumeStaysReadable) {
  if (archivedImageIds().empty())
    GTEST_SKIP() << "no image archives (CSIOP_IMAGE_ARCHIVES), so no second image of the real "
                    "driver to upgrade to";
  ASSERT_NO_FATAL_FAILURE(ensureWriter());
  expectCleanLogs(kDriverNamespace, kHostpathPods); // before its logs go with the pod
  const std::string oldPod = nodePluginPod();
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
  const auto read = execInWorkload("cat /data/hello && echo after-upgrade > /data/third");
  ASSERT_TRUE(read.ok()) << read;
  EXPECT_EQ(read.out, "written-by-the-pod\n");
}

// --- The WhenVolumesUnused update strategy under a FUSE volume (the stand-in driver) ----------

std::string fuseDriverManifest(const std::string& image) {
  return R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata:
  name: fuse
spec:
  driverName: )" +
         kFuseDriver + R"(
  csiDriver:
    attachRequired: false
  driver:
    image: )" +
         image + R"(
    imagePullPolicy: Never
    args:
    - --drivername=)" +
         kFuseDriver + R"(
    - --endpoint=$(CSI_ENDPOINT)
    - --nodeid=$(KUBE_NODE_NAME)
    - --statedir=/csi-data-dir
    volumes:
    - name: csi-data-dir
      hostPath:
        path: )" +
         kFuseDataDir + R"(
        type: DirectoryOrCreate
    volumeMounts:
    - name: csi-data-dir
      mountPath: /csi-data-dir
  node:
    updateStrategy:
      type: WhenVolumesUnused
  controller:
    placement: NodePlugin
  storageClasses:
  - name: csiop-test-fuse
    parameters:
      mountMode: fuse
    volumeBindingMode: Immediate
)";
}

// The pod of the FUSE volume (a PVC of StorageClass csiop-test-fuse, whose volumes the driver
// serves from its own process, as FUSE-based drivers do).
std::string fuseWorkload() {
  return claim("fuse-data", "csiop-test-fuse", "1Gi") + "---\n" +
         claimUser("fuse-user", "fuse-data", "fuse", "served-by-the-plugin");
}

std::string fusePluginPod() {
  return livePod(kFuseNamespace, "app.kubernetes.io/component=node-plugin");
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
  return inPod("fuse-user", script);
}

TEST_F(RealNode, WhenVolumesUnusedKeepsAFuseVolumeUsableWhileTheDriverImageChanges) {
  ASSERT_NO_FATAL_FAILURE(ensureOperator());
  const auto apply = kubectl({"apply", "-f", "-"}, fuseDriverManifest(kFuseImage1));
  ASSERT_TRUE(apply.ok()) << apply;
  ASSERT_TRUE(
      waitFor("the DaemonSet updates OnDelete and fuse is Ready", 180s, [](std::string& seen) {
        seen = kubectl({"get", "ds", "fuse-node", "-n", kFuseNamespace, "-o",
                        "jsonpath={.spec.updateStrategy.type}"})
                   .out;
        return seen == "OnDelete" && ddReadyAtCurrentGeneration("fuse", seen);
      }));
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, fuseWorkload()).ok());
  ASSERT_TRUE(waitFor("the pod reads its FUSE volume", 120s,
                      [](std::string& seen) { return podReady("fuse-user", seen); }));
  ASSERT_EQ(fuseMountsOnTheNode().size(), 1u) << "the volume is a FUSE mount of the plugin";

  // A new driver image: the node plugin is not replaced while the pod uses the volume.
  const std::string plugin = fusePluginPod();
  ASSERT_TRUE(kubectl({"patch", "dd", "fuse", "--type=merge", "-p",
                       R"({"spec":{"driver":{"image":")" + kFuseImage2 + R"("}}})"})
                  .ok());
  EXPECT_TRUE(waitFor("status: the node waits, naming the pod", 60s, [](std::string& seen) {
    seen = kubectl({"get", "dd", "fuse", "-o", "jsonpath={.status.nodes.waiting}"}).out;
    return seen.find(R"("node":"127.0.0.1")") != std::string::npos &&
           seen.find(R"("reason":"VolumesInUse")") != std::string::npos &&
           seen.find("default/fuse-user") != std::string::npos &&
           conditionField("fuse", "Progressing", "reason") == "NodePluginUpdateWaiting";
  }));
  std::this_thread::sleep_for(10s);
  EXPECT_EQ(fusePluginPod(), plugin) << "the node plugin was replaced under a FUSE volume";
  EXPECT_EQ(conditionField("fuse", "Ready", "status"), "True") << "the old plugin serves";
  const auto use = inFusePod("echo still-served >> /data/fuse && cat /data/fuse");
  ASSERT_TRUE(use.ok()) << use;
  EXPECT_EQ(use.out, "served-by-the-plugin\nstill-served\n");
  expectCleanLogs(kFuseNamespace, kFusePods); // before its logs go with the pod

  // The pod goes: the plugin is replaced at once, with the new image.
  ASSERT_TRUE(
      kubectl({"delete", "pod", "fuse-user", "-n", kWorkloadNamespace, "--wait=true"}).ok());
  EXPECT_TRUE(
      waitFor("the node plugin is replaced with the new image", 120s, [&](std::string& seen) {
        const std::string now = fusePluginPod();
        seen = now;
        if (now.empty() || now == plugin)
          return false;
        const Json pod = kubectlJson({"get", "pod", now, "-n", kFuseNamespace});
        return pod["spec"]["containers"][0]["image"] == kFuseImage2;
      }));
  EXPECT_TRUE(waitFor("the rollout completes: updated 1, nothing waits, Ready", 120s,
                      [](std::string& seen) {
                        seen = kubectl({"get", "dd", "fuse", "-o", "jsonpath={.status.nodes}"}).out;
                        return seen.find(R"("updated":1)") != std::string::npos &&
                               seen.find("waiting") == std::string::npos &&
                               ddReadyAtCurrentGeneration("fuse", seen);
                      }));
  const auto events = kubectl({"get", "events", "-n", "default", "--field-selector",
                               "involvedObject.name=fuse,reason=NodePluginReplaced", "-o",
                               "jsonpath={.items[*].message}"});
  EXPECT_NE(events.out.find("on node 127.0.0.1: no pod on the node uses a volume of the driver"),
            std::string::npos)
      << events;
}

TEST_F(RealNode, RestartingTheNodePluginUnderAFuseVolumeBreaksItWhichIsWhatTheStrategyPrevents) {
  // The failure mode itself: a FUSE volume, the plugin deleted by hand under it.
  ASSERT_NO_FATAL_FAILURE(ensureOperator());
  if (!exists({"dd", "fuse"})) {
    ASSERT_TRUE(kubectl({"apply", "-f", "-"}, fuseDriverManifest(kFuseImage1)).ok());
  }
  ASSERT_TRUE(waitFor("fuse Ready", 180s,
                      [](std::string& seen) { return ddReadyAtCurrentGeneration("fuse", seen); }));
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, fuseWorkload()).ok());
  ASSERT_TRUE(waitFor("the pod reads its FUSE volume", 120s, [](std::string& seen) {
    const auto r = inFusePod("cat /data/fuse");
    seen = r.out + r.err;
    return r.ok();
  }));
  expectCleanLogs(kFuseNamespace, kFusePods); // before its logs go with the pod
  const std::string plugin = fusePluginPod();
  ASSERT_TRUE(kubectl({"delete", "pod", plugin, "-n", kFuseNamespace, "--wait=true"}).ok());
  EXPECT_TRUE(waitFor("the volume is dead: transport endpoint is not connected", 60s,
                      [](std::string& seen) {
                        const auto r = inFusePod("cat /data/fuse");
                        seen = r.out + r.err;
                        return !r.ok() && seen.find("not connected") != std::string::npos;
                      }));
  // Cleaning up works on the dead mount: the new plugin unmounts it, deletes the volume, and
  // the driver goes.
  ASSERT_TRUE(kubectl({"delete", "-f", "-", "--wait=true", "--timeout=120s"}, fuseWorkload()).ok());
  EXPECT_TRUE(waitFor("no FUSE mount is left", 60s, [](std::string& seen) {
    const auto m = fuseMountsOnTheNode();
    seen = std::to_string(m.size()) + " FUSE mounts";
    return m.empty();
  }));
  EXPECT_TRUE(waitFor("the FUSE volume's PV is gone", 120s, [](std::string& seen) {
    seen = kubectl({"get", "pv", "-o", "jsonpath={.items[*].spec.csi.driver}"}).out;
    return seen.find(kFuseDriver) == std::string::npos;
  }));
  deleteDd("fuse");
  EXPECT_FALSE(exists({"dd", "fuse"}));
  EXPECT_FALSE(exists({"csidriver", kFuseDriver}));
}

// --- A verified rollout (spec.rollout type Verified) on the real node -------------------------

const std::string kVerifiedDriver = "verified.hostpath.csiop.dev";
const std::string kVerifiedNamespace = "csi-verified";
const std::string kHostpathImage = "registry.k8s.io/sig-storage/hostpathplugin:v1.17.0";

// The real hostpath driver, node plugin only (ephemeral inline volumes), rolled out verified:
// the real node is the canary, and its smoke test an ephemeral inline volume of the driver; a
// gate that fails within 40 s rolls it back; the fake nodes follow two at a time. readOnlyState:
// the driver's state directory is mounted read-only (it starts and registers, but cannot create
// a volume to publish).
std::string verifiedDriverManifest(const std::string& image, const std::string& extraArg,
                                   bool readOnlyState = false,
                                   const std::string& pullPolicy = "Never") {
  return nodeOnlyDriverManifest({.name = "verified",
                                 .driverName = kVerifiedDriver,
                                 .namespace_ = kVerifiedNamespace,
                                 .stateDir = "/var/lib/csiop-test-verified-data",
                                 .image = image,
                                 .pullPolicy = pullPolicy,
                                 .firstArg = extraArg,
                                 .readOnlyState = readOnlyState,
                                 .rollout = R"(    type: Verified
    canary:
      nodeSelector:
        csiop.dev/real-node: "true"
    batchSize: 2
    soakSeconds: 0
    gateTimeoutSeconds: 40
    progressDeadlineSeconds: 120
    smokeVolume:
      ephemeral: {}
)"});
}

// The smoke objects of "verified" left in its namespace.
std::string smokeObjects() {
  return kubectl({"get", "pods,pvc", "-n", kVerifiedNamespace, "-l", "csiop.dev/smoke=verified",
                  "-o", "name"})
      .out;
}

std::string rolloutField(const std::string& field) {
  return kubectl({"get", "dd", "verified", "-o", "jsonpath={.status.rollout.node." + field + "}"})
      .out;
}

// The live node plugin pod of "verified" on the real node: "name revision-hash ready".
std::string verifiedPlugin() {
  const Json pods = podsOf(kVerifiedNamespace, "app.kubernetes.io/component=node-plugin");
  for (const Json& pod : pods["items"]) {
    if (pod["metadata"].contains("deletionTimestamp") || pod["spec"]["nodeName"] != kNode)
      continue;
    std::string ready = "false";
    for (const Json& c : pod["status"].value("conditions", Json::array())) {
      if (c.value("type", "") == "Ready")
        ready = c.value("status", "") == "True" ? "true" : "false";
    }
    return pod["metadata"].value("name", "") + " " +
           pod["metadata"]["labels"].value("controller-revision-hash", "") + " " + ready;
  }
  return "";
}

// The node plugin pods of "verified" on the fake nodes: node -> "uid revision-hash", and the
// pods being deleted as "deleting".
std::map<std::string, std::string> fakeNodePlugins() {
  std::map<std::string, std::string> out;
  const Json pods = podsOf(kVerifiedNamespace, "app.kubernetes.io/component=node-plugin");
  for (const Json& pod : pods["items"]) {
    const std::string node = pod["spec"].value("nodeName", "");
    if (node == kNode)
      continue;
    out[node] += (out[node].empty() ? "" : ",") +
                 (pod["metadata"].contains("deletionTimestamp")
                      ? std::string("deleting")
                      : pod["metadata"].value("uid", "") + " " +
                            pod["metadata"]["labels"].value("controller-revision-hash", ""));
  }
  return out;
}

std::string describe(const std::map<std::string, std::string>& pods) {
  std::string out;
  for (const auto& [node, pod] : pods)
    out += node + ": " + pod + "\n";
  return out;
}

std::string verifiedEvents(const std::string& reason) {
  return kubectl({"get", "events", "-n", "default", "--field-selector",
                  "involvedObject.name=verified,reason=" + reason, "-o",
                  "jsonpath={.items[*].message}"})
      .out;
}

// The node plugin's rollout status of "verified", read at once (fields read one by one may
// straddle a pass).
Json nodeRollout() {
  const Json dd = kubectlJson({"get", "dd", "verified"});
  const Json& status = dd.contains("status") ? dd["status"] : Json::object();
  return status.contains("rollout") && status["rollout"].contains("node")
             ? status["rollout"]["node"]
             : Json::object();
}

// Applies `manifest` and waits for its rollout to be rolled back after `gate` failed, then checks
// that the node is back on `revision`'s plugin, Ready and registered. The rollback waited for is
// this manifest's: an earlier rollback's status (the same gate possibly) stays until this rollout
// starts, so its failed template must differ from the one recorded before the apply.
void applyAndExpectRolledBack(const std::string& manifest, const std::string& gate,
                              const std::string& revision) {
  const std::string failedBefore = nodeRollout().value("failedTemplate", "");
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, manifest).ok());
  Json rollout;
  EXPECT_TRUE(
      waitFor("the canary is rolled back, " + gate + " failed", 240s, [&](std::string& seen) {
        rollout = nodeRollout();
        seen = rollout.dump();
        return rollout.value("phase", "") == "RolledBack" &&
               rollout.value("failedGate", "") == gate &&
               rollout.value("failedTemplate", "") != failedBefore;
      }));
  EXPECT_EQ(rollout.value("failedNode", ""), kNode);
  EXPECT_EQ(conditionField("verified", "RolloutFailed", "status"), "True");
  EXPECT_TRUE(waitFor("the old plugin serves again, registered", 120s, [&](std::string& seen) {
    seen = verifiedPlugin();
    return seen.find(" " + revision + " true") != std::string::npos &&
           registeredDrivers().contains(kVerifiedDriver);
  }));
}

TEST_F(RealNode, AVerifiedRolloutRollsBackABrokenCanaryAndPassesAGoodUpgradeInBatches) {
  if (archivedImageIds().empty())
    GTEST_SKIP() << "no image archives (CSIOP_IMAGE_ARCHIVES), so no second image of the real "
                    "driver to upgrade to";
  ASSERT_NO_FATAL_FAILURE(ensureOperator());
  // Four fake nodes beside the real one, for the batches (fake_nodes.hpp: kwok plays their
  // kubelets, and a stand-in their plugin registration).
  std::optional<FakeNodes> fake;
  ASSERT_NO_THROW(fake.emplace("csiop-fake", 4));
  const std::string nameArg = "--drivername=" + kVerifiedDriver;
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, verifiedDriverManifest(kHostpathImage, nameArg)).ok());
  ASSERT_TRUE(waitFor("verified Ready, registered on the 5 nodes, its rollout Complete", 180s,
                      [](std::string& seen) {
                        return ddReadyAtCurrentGeneration("verified", seen) &&
                               registeredDrivers().contains(kVerifiedDriver) &&
                               kubectl({"get", "dd", "verified", "-o",
                                        "jsonpath={.status.nodes.registered}"})
                                       .out == "5" &&
                               rolloutField("phase") == "Complete";
                      }));
  const Json ds = kubectlJson({"get", "ds", "verified-node", "-n", kVerifiedNamespace});
  EXPECT_EQ(ds["spec"]["updateStrategy"]["type"], "OnDelete");
  const std::string first = rolloutField("revision");
  ASSERT_FALSE(first.empty());
  // What a failed canary must leave alone: the other nodes' pods, same uid, same revision.
  const auto others = fakeNodePlugins();
  ASSERT_EQ(others.size(), 4u) << describe(others);
  const auto expectOthersUntouched = [&](const std::string& step) {
    EXPECT_EQ(fakeNodePlugins(), others) << step << ": a node other than the canary changed";
  };

  // 1. An image the node does not have and may not pull (imagePullPolicy Never): the pre-pull
  //    finds it missing, the canary fails the ImagesPulled gate, and its plugin pod is never
  //    touched.
  const std::string untouched = verifiedPlugin();
  ASSERT_NO_FATAL_FAILURE(applyAndExpectRolledBack(
      verifiedDriverManifest("localhost/csiop-test/not-on-the-node:1", nameArg), "ImagesPulled",
      first));
  EXPECT_NE(rolloutField("message").find("ErrImageNeverPull"), std::string::npos)
      << rolloutField("message");
  EXPECT_EQ(verifiedPlugin(), untouched) << "the canary's plugin pod was replaced";
  EXPECT_TRUE(waitFor("no pre-pull pod left", 60s, [](std::string& seen) {
    seen = kubectl({"get", "pods", "-n", kVerifiedNamespace, "-l", "csiop.dev/pre-pull=verified",
                    "-o", "name"})
               .out;
    return seen.empty();
  }));
  expectOthersUntouched("an image not on the node");

  // 1b. An image whose registry cannot be reached: the pre-pull retries with back-off until its
  //     deadline (gateTimeoutSeconds), then the canary fails ImagesPulled, its plugin untouched.
  ASSERT_NO_FATAL_FAILURE(
      applyAndExpectRolledBack(verifiedDriverManifest("localhost:1/csiop-test/unreachable:1",
                                                      nameArg, false, "IfNotPresent"),
                               "ImagesPulled", first));
  EXPECT_NE(rolloutField("message"), "");
  EXPECT_EQ(verifiedPlugin(), untouched) << "the canary's plugin pod was replaced";
  expectOthersUntouched("an unreachable registry");

  // 2. A flag the driver does not know (a renamed flag): the canary crash-loops.
  ASSERT_NO_FATAL_FAILURE(applyAndExpectRolledBack(
      verifiedDriverManifest(kHostpathImage, "--no-such-flag"), "PodReady", first));
  EXPECT_NE(rolloutField("message").find("crash-loops"), std::string::npos)
      << rolloutField("message");
  const Json back = kubectlJson({"get", "ds", "verified-node", "-n", kVerifiedNamespace});
  EXPECT_EQ(back["spec"]["template"]["spec"]["containers"][0]["args"][0], nameArg)
      << "the DaemonSet carries the previous template";
  EXPECT_NE(verifiedEvents("RolloutFailed"), "");
  EXPECT_NE(verifiedEvents("RolledBack"), "");
  const std::string plugin = verifiedPlugin();
  std::this_thread::sleep_for(10s);
  EXPECT_EQ(verifiedPlugin(), plugin) << "the failed template was tried again";
  expectOthersUntouched("a crash loop");

  // 3. A driver that runs but registers under another name: the Registered gate fails.
  ASSERT_NO_FATAL_FAILURE(applyAndExpectRolledBack(
      verifiedDriverManifest(kHostpathImage, "--drivername=other.csiop.dev"), "Registered", first));
  expectOthersUntouched("a driver that never registers");

  // 4. A driver that starts and registers but cannot publish a volume (its state directory
  //    read-only): the smoke volume fails at its Mount stage, with the kubelet's message.
  ASSERT_NO_FATAL_FAILURE(applyAndExpectRolledBack(
      verifiedDriverManifest(kHostpathImage, nameArg, true), "SmokeVolume", first));
  const std::string smokeFailure = rolloutField("message");
  EXPECT_EQ(smokeFailure.rfind("Mount: ", 0), 0u) << smokeFailure;
  EXPECT_NE(smokeFailure.find("read-only file system"), std::string::npos) << smokeFailure;
  EXPECT_NE(verifiedEvents("SmokeVolumeStarted"), "");
  EXPECT_TRUE(waitFor("no smoke object left", 60s, [](std::string& seen) {
    seen = smokeObjects();
    return seen.empty();
  }));
  expectOthersUntouched("a driver that cannot publish");

  // 5. A good upgrade (the real driver's second image): the canary passes every gate, the smoke
  //    volume included, then the fake nodes follow in two batches of two, and the rollout
  //    completes.
  ASSERT_TRUE(
      kubectl({"apply", "-f", "-"}, verifiedDriverManifest(kUpgradedDriverImage, nameArg)).ok());
  EXPECT_TRUE(waitFor("the rollout completes on the new image", 300s, [&](std::string& seen) {
    seen = kubectl({"get", "dd", "verified", "-o", "jsonpath={.status.rollout.node}"}).out;
    return rolloutField("phase") == "Complete" && rolloutField("revision") != first &&
           rolloutField("updated") == "5" && registeredDrivers().contains(kVerifiedDriver);
  }));
  const std::string second = rolloutField("revision");
  EXPECT_EQ(conditionField("verified", "RolloutFailed", "status"), "False");
  // Every stage of the smoke volume seen (an ephemeral inline volume: no claim to provision, no
  // attachment).
  const std::string canaryPassed = verifiedEvents("CanaryPassed");
  EXPECT_NE(canaryPassed.find("the smoke volume on " + kNode +
                              ": Mount: ok; Write: ok (51 bytes, synced); Read: ok; Cleanup: ok"),
            std::string::npos)
      << canaryPassed;
  EXPECT_EQ(rolloutField("gates"), R"(["ImagesPulled","PodReady","Registered","SmokeVolume"])");
  const std::string batches = verifiedEvents("BatchStarted");
  for (const std::string& node : fake->names())
    EXPECT_NE(batches.find(node), std::string::npos) << node << " in no batch: " << batches;
  EXPECT_NE(verifiedEvents("RolloutComplete"), "");
  EXPECT_TRUE(waitFor("no smoke object left", 60s, [](std::string& seen) {
    seen = smokeObjects();
    return seen.empty();
  }));
  const Json pods = podsOf(kVerifiedNamespace, "app.kubernetes.io/component=node-plugin");
  ASSERT_EQ(pods["items"].size(), 5u);
  for (const Json& pod : pods["items"]) {
    EXPECT_EQ(pod["spec"]["containers"][0]["image"], kUpgradedDriverImage)
        << pod["spec"]["nodeName"];
    EXPECT_EQ(pod["metadata"]["labels"]["controller-revision-hash"], second)
        << pod["spec"]["nodeName"];
  }
  deleteDd("verified");
  EXPECT_FALSE(exists({"csidriver", kVerifiedDriver}));
}

// --- A verified rollout of the controller workload --------------------------------------------

const std::string kCtrlDriver = "ctrl.hostpath.csiop.dev";
const std::string kCtrlNamespace = "csi-ctrl";

// The real hostpath driver with a controller Deployment of its own (its driver container and
// the provisioner), rolled out verified: the new controller pod template must have its replica
// available, then provision a claim of ctrl-sc (the driver creates the volume in the controller
// process; no pod mounts it), or it is rolled back.
std::string controllerDriverManifest(const std::string& controllerImage,
                                     const std::string& controllerArg) {
  return R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata:
  name: ctrl
spec:
  driverName: )" +
         kCtrlDriver + R"(
  namespace: )" +
         kCtrlNamespace + R"(
  csiDriver:
    attachRequired: false
    volumeLifecycleModes: [Persistent]
  driver:
    image: )" +
         kHostpathImage + R"(
    imagePullPolicy: Never
    args:
    - --drivername=)" +
         kCtrlDriver + R"(
    - --endpoint=$(CSI_ENDPOINT)
    - --nodeid=$(KUBE_NODE_NAME)
    securityContext:
      privileged: true
    volumes:
    - name: csi-data-dir
      hostPath:
        path: /var/lib/csiop-test-ctrl-data
        type: DirectoryOrCreate
    volumeMounts:
    - name: csi-data-dir
      mountPath: /csi-data-dir
  controller:
    driver:
      image: )" +
         controllerImage + R"(
      args:
      - )" +
         controllerArg + R"(
      - --endpoint=$(CSI_ENDPOINT)
      - --nodeid=$(KUBE_NODE_NAME)
  storageClasses:
  - name: ctrl-sc
    reclaimPolicy: Delete
    volumeBindingMode: Immediate
  rollout:
    type: Verified
    canary:
      nodeSelector:
        csiop.dev/real-node: "true"
    soakSeconds: 0
    gateTimeoutSeconds: 60
    progressDeadlineSeconds: 120
    smokeVolume:
      storageClassName: ctrl-sc
      size: 1Mi
)";
}

std::string controllerRollout(const std::string& field) {
  return kubectl({"get", "dd", "ctrl", "-o", "jsonpath={.status.rollout.controller." + field + "}"})
      .out;
}

// The live controller pods of "ctrl": "image args[0]" each.
std::string controllerPods() {
  std::string out;
  const Json pods = podsOf(kCtrlNamespace, "app.kubernetes.io/component=controller-plugin");
  for (const Json& pod : pods["items"]) {
    if (pod["metadata"].contains("deletionTimestamp"))
      continue;
    for (const Json& c : pod["spec"]["containers"]) {
      if (c["name"] == "csi-driver")
        out += c.value("image", "") + " " + c["args"][0].get<std::string>() + "\n";
    }
  }
  return out;
}

TEST_F(RealNode, AVerifiedControllerRolloutRollsBackACrashLoopAndProvisionsThroughAGoodOne) {
  if (archivedImageIds().empty())
    GTEST_SKIP() << "no image archives (CSIOP_IMAGE_ARCHIVES), so no second image of the real "
                    "driver to upgrade to";
  ASSERT_NO_FATAL_FAILURE(ensureOperator());
  const std::string nameArg = "--drivername=" + kCtrlDriver;
  ASSERT_TRUE(
      kubectl({"apply", "-f", "-"}, controllerDriverManifest(kHostpathImage, nameArg)).ok());
  ASSERT_TRUE(waitFor("ctrl Ready, its controller rollout Complete", 180s, [](std::string& seen) {
    return ddReadyAtCurrentGeneration("ctrl", seen) && controllerRollout("phase") == "Complete" &&
           !controllerRollout("revision").empty();
  }));
  const std::string first = controllerRollout("revision");
  EXPECT_EQ(controllerRollout("gates"), R"(["Available","SmokeVolume"])");
  const Json nodePods = podsOf(kCtrlNamespace, "app.kubernetes.io/component=node-plugin");
  ASSERT_EQ(nodePods["items"].size(), 1u);
  const std::string nodePod = nodePods["items"][0]["metadata"]["uid"];

  // 1. A controller that crash-loops (a flag it does not know): the Available gate fails at
  //    once, and the Deployment gets the previous template back.
  ASSERT_TRUE(
      kubectl({"apply", "-f", "-"}, controllerDriverManifest(kHostpathImage, "--no-such-flag"))
          .ok());
  EXPECT_TRUE(waitFor("the controller rolled back", 240s, [&](std::string& seen) {
    seen = kubectl({"get", "dd", "ctrl", "-o", "jsonpath={.status.rollout.controller}"}).out;
    return controllerRollout("phase") == "RolledBack" && controllerRollout("from") == first;
  }));
  EXPECT_EQ(controllerRollout("failedGate"), "Available");
  EXPECT_NE(controllerRollout("message").find("crash-loops"), std::string::npos)
      << controllerRollout("message");
  EXPECT_EQ(conditionField("ctrl", "RolloutFailed", "status"), "True");
  EXPECT_EQ(controllerPods(), kHostpathImage + " " + nameArg + "\n");
  const Json deployment = kubectlJson({"get", "deploy", "ctrl-controller", "-n", kCtrlNamespace});
  for (const Json& c : deployment["spec"]["template"]["spec"]["containers"]) {
    if (c["name"] == "csi-driver") {
      EXPECT_EQ(c["args"][0], nameArg) << "the Deployment carries the previous template";
    }
  }
  std::this_thread::sleep_for(5s);
  EXPECT_EQ(controllerRollout("phase"), "RolledBack") << "the failed template was tried again";

  // 2. A good controller upgrade (the real driver's second image): its replica available, then
  //    a claim of ctrl-sc provisioned through it; the claim is removed.
  ASSERT_TRUE(
      kubectl({"apply", "-f", "-"}, controllerDriverManifest(kUpgradedDriverImage, nameArg)).ok());
  EXPECT_TRUE(waitFor("the controller rollout completes", 240s, [&](std::string& seen) {
    seen = kubectl({"get", "dd", "ctrl", "-o", "jsonpath={.status.rollout.controller}"}).out;
    return controllerRollout("phase") == "Complete" && controllerRollout("revision") != first;
  }));
  EXPECT_EQ(conditionField("ctrl", "RolloutFailed", "status"), "False");
  EXPECT_EQ(controllerPods(), kUpgradedDriverImage + " " + nameArg + "\n");
  const std::string complete = kubectl({"get", "events", "-n", "default", "--field-selector",
                                        "involvedObject.name=ctrl,reason=RolloutComplete", "-o",
                                        "jsonpath={.items[*].message}"})
                                   .out;
  EXPECT_NE(complete.find("a claim provisioned through it (Provision: ok (pvc-"), std::string::npos)
      << complete;
  EXPECT_TRUE(waitFor("no provision test left", 60s, [](std::string& seen) {
    seen = kubectl({"get", "pvc", "-n", kCtrlNamespace, "-l", "csiop.dev/smoke-provision=ctrl",
                    "-o", "name"})
               .out;
    return seen.empty();
  }));
  const Json after = podsOf(kCtrlNamespace, "app.kubernetes.io/component=node-plugin");
  ASSERT_EQ(after["items"].size(), 1u);
  EXPECT_EQ(after["items"][0]["metadata"]["uid"], nodePod) << "the node plugin was replaced";
  deleteDd("ctrl");
  EXPECT_FALSE(exists({"csidriver", kCtrlDriver}));
  std::filesystem::remove_all("/var/lib/csiop-test-ctrl-data");
}

// --- Why the driver is not registered on a node --------------------------------------------

// The kubernetes-csi hostpath driver on the real node only, with its node plugin's kubelet
// directory `kubeletDir` and its registrar given `registrarArgs` (YAML flow list).
std::string unregisteredDriverManifest(const std::string& kubeletDir,
                                       const std::string& registrarArgs) {
  return R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata:
  name: unregistered
spec:
  driverName: unregistered.csiop.dev
  namespace: csi-unregistered
  csiDriver:
    attachRequired: false
    volumeLifecycleModes: [Ephemeral]
  driver:
    image: )" +
         kHostpathImage +
         R"(
    imagePullPolicy: Never
    args: [--drivername=unregistered.csiop.dev, --endpoint=$(CSI_ENDPOINT), --nodeid=$(KUBE_NODE_NAME)]
    securityContext:
      privileged: true
    # The registration directory the node plugin mounts must exist (hostPath type Directory):
    # made here, where the kubelet never looks.
    volumes:
    - name: made-registration-dir
      hostPath:
        path: )" +
         kubeletDir +
         R"(/plugins_registry
        type: DirectoryOrCreate
    volumeMounts:
    - name: made-registration-dir
      mountPath: /made-registration-dir
  node:
    kubeletDir: )" +
         kubeletDir +
         R"(
    nodeSelector:
      csiop.dev/real-node: "true"
    registrar:
      args: )" +
         registrarArgs + "\n";
}

// The first node the status names as waiting, as "reason|message".
std::string firstWaitingNode(const std::string& dd) {
  const Json status = kubectlJson({"get", "dd", dd}).value("status", Json::object());
  for (const auto& w : status.value("nodes", Json::object()).value("waiting", Json::array())) {
    if (w.value("node", "") == kNode) {
      return w.value("reason", "") + "|" + w.value("message", "");
    }
  }
  return status.dump();
}

// The leader's series of `metric` for `dd` (its lines of the exposition), or what the scrape
// said when it has none.
std::string leaderSeries(const std::string& metric, const std::string& dd,
                         const std::string& leader) {
  const auto scraped =
      kubectl({"get", "--raw",
               "/api/v1/namespaces/" + kNamespace + "/pods/" + leader + ":8080/proxy/metrics"});
  std::string out;
  std::istringstream lines(scraped.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(metric + "{driverdeployment=\"" + dd + "\"")) {
      out += line + "\n";
    }
  }
  return out.empty() ? scraped.err : out;
}

// "driver name X not found in the list of registered CSI drivers", explained without a pod log:
// a registrar the kubelet never hears from (its socket in a directory that is not the kubelet's;
// the plugin pod Ready), then one the kubelet refuses (a registration path where no driver
// listens: the registrar exits). Each is named on its node with the reason and the registrar's
// own words, and counted by reason in the leader's metrics.
TEST_F(RealNode, ANodeThatDoesNotRegisterTheDriverIsExplainedWithTheRegistrarsOwnWords) {
  ASSERT_NO_FATAL_FAILURE(ensureHostpath());
  // A directory under the kubelet's (its mount is shared, as the plugin's Bidirectional mounts
  // need), which is not the kubelet's own.
  const auto apply =
      kubectl({"apply", "-f", "-"},
              unregisteredDriverManifest("/var/lib/kubelet/csiop-test-not-the-kubelet", "[]"));
  ASSERT_TRUE(apply.ok()) << apply;
  std::string waiting;
  EXPECT_TRUE(waitFor("the node is reported NotRegistered with the registrar's log", 150s,
                      [&](std::string& seen) {
                        seen = waiting = firstWaitingNode("unregistered");
                        return seen.starts_with("NotRegistered|") &&
                               seen.find("the registrar's log ends: ") != std::string::npos &&
                               seen.find("Registration Server") != std::string::npos;
                      }));
  EXPECT_NE(waiting.find("has been Ready since"), std::string::npos) << waiting;
  EXPECT_EQ(conditionField("unregistered", "Degraded", "reason"), "RegistrationFailing")
      << ddStatus("unregistered");
  EXPECT_NE(conditionField("unregistered", "Ready", "message").find("NotRegistered"),
            std::string::npos)
      << ddStatus("unregistered");
  const std::string leader = leaderPod();
  ASSERT_FALSE(leader.empty()) << leaseHolder();
  EXPECT_TRUE(waitFor("the leader counts the node", 30s, [&](std::string& seen) {
    seen = leaderSeries("csiop_driver_nodes_unregistered", "unregistered", leader);
    return seen.find("reason=\"NotRegistered\"} 1") != std::string::npos;
  }));

  // The kubelet's directory, but a registration path where no driver listens: the kubelet
  // takes the registrar's socket, cannot reach the driver, and refuses the plugin.
  const auto refused =
      kubectl({"apply", "-f", "-"},
              unregisteredDriverManifest("/var/lib/kubelet",
                                         "[--kubelet-registration-path=/var/lib/kubelet/plugins/"
                                         "csiop-test-nowhere/csi.sock]"));
  ASSERT_TRUE(refused.ok()) << refused;
  EXPECT_TRUE(waitFor("the node is reported RegistrarRestarting with the exited registrar's log",
                      180s, [&](std::string& seen) {
                        seen = waiting = firstWaitingNode("unregistered");
                        return seen.starts_with("RegistrarRestarting|") &&
                               seen.find("the exited registrar's log ends: ") != std::string::npos;
                      }));
  EXPECT_NE(waiting.find("with exit code"), std::string::npos) << waiting;
  EXPECT_NE(waiting.find("csiop-test-nowhere"), std::string::npos)
      << "the kubelet's refusal, in the registrar's words: " << waiting;
  EXPECT_TRUE(waitFor("the leader counts it by its new reason", 30s, [&](std::string& seen) {
    seen = leaderSeries("csiop_driver_nodes_unregistered", "unregistered", leader);
    return seen.find("reason=\"RegistrarRestarting\"} 1") != std::string::npos &&
           seen.find("NotRegistered") == std::string::npos;
  }));
  EXPECT_FALSE(registeredDrivers().contains("unregistered.csiop.dev"));
  deleteDd("unregistered");
  EXPECT_FALSE(exists({"dd", "unregistered"}));
}

// --- Pods that cannot be created ------------------------------------------------------------

// The node plugin of the real hostpath driver on the real node only, in namespace `ns`.
std::string realNodeOnlyDriver(const std::string& name, const std::string& ns) {
  return "apiVersion: csiop.dev/v1alpha1\nkind: DriverDeployment\nmetadata:\n  name: " + name +
         "\nspec:\n  driverName: " + name + ".csiop.dev\n  namespace: " + ns +
         R"(
  csiDriver:
    attachRequired: false
    volumeLifecycleModes: [Ephemeral]
  driver:
    image: )" +
         kHostpathImage +
         R"(
    imagePullPolicy: Never
    args: [--drivername=)" +
         name + R"(.csiop.dev, --endpoint=$(CSI_ENDPOINT), --nodeid=$(KUBE_NODE_NAME)]
    securityContext:
      privileged: true
  node:
    nodeSelector:
      csiop.dev/real-node: "true"
)";
}

// A namespace that enforces Pod Security "restricted" is reported before any DaemonSet exists
// (a dry run of a node plugin pod), and a ResourceQuota's refusal of the node plugin's pod
// within seconds (its FailedCreate Event); once each allows the pods, the driver registers on
// the real node.
TEST_F(RealNode, PodsThatCannotBeCreatedAreReportedAndTheDriverRegistersOnceAllowed) {
  ASSERT_NO_FATAL_FAILURE(ensureHostpath());
  const std::string ns = "csi-refused";
  ASSERT_TRUE(kubectl({"create", "namespace", ns}).ok());
  ASSERT_TRUE(
      kubectl({"label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted"}).ok());
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, realNodeOnlyDriver("refused", ns)).ok());
  EXPECT_TRUE(waitFor("Pod Security's refusal is reported before any DaemonSet", 60s,
                      [&](std::string& seen) {
                        seen = conditionField("refused", "Degraded", "message");
                        return seen.find("DaemonSet csi-refused/refused-node is not created: "
                                         "namespace csi-refused enforces Pod Security "
                                         "\"restricted\"") != std::string::npos &&
                               seen.find("violates PodSecurity") != std::string::npos;
                      }));
  EXPECT_FALSE(exists({"daemonset", "-n", ns, "refused-node"}));

  // Allowed by Pod Security, refused by a quota: the DaemonSet is created, its pod is not.
  const std::string quota = R"(apiVersion: v1
kind: ResourceQuota
metadata:
  name: no-pods
  namespace: csi-refused
spec:
  hard:
    pods: "0"
)";
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, quota).ok());
  EXPECT_TRUE(waitFor("the quota is in force", 30s, [&](std::string& seen) {
    seen =
        kubectl({"get", "resourcequota", "no-pods", "-n", ns, "-o", "jsonpath={.status.hard}"}).out;
    return !seen.empty();
  }));
  ASSERT_TRUE(kubectl({"label", "namespace", ns, "--overwrite",
                       "pod-security.kubernetes.io/enforce=privileged"})
                  .ok());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(waitFor("the quota's refusal is reported", 60s, [&](std::string& seen) {
    seen = conditionField("refused", "Degraded", "reason") + ": " +
           conditionField("refused", "Degraded", "message");
    return seen.starts_with(
               "PodsNotCreated: DaemonSet csi-refused/refused-node cannot create its pods: ") &&
           seen.find("exceeded quota: no-pods") != std::string::npos;
  }));
  std::cout << "[ figure ] the quota's refusal reported "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count()
            << " ms after the namespace allowed the pods\n";

  ASSERT_TRUE(kubectl({"delete", "resourcequota", "no-pods", "-n", ns}).ok());
  EXPECT_TRUE(waitFor("the driver registers on the real node and nothing is reported", 180s,
                      [&](std::string& seen) {
                        seen = ddStatus("refused");
                        return registeredDrivers().contains("refused.csiop.dev") &&
                               conditionField("refused", "Degraded", "status") == "False";
                      }));
  deleteDd("refused");
  kubectl({"delete", "namespace", ns, "--wait=false"});
}

// A claim the driver refuses (the hostpath driver provisions at most 1 TiB: its
// --max-volume-size) is counted in the status from the external-provisioner's own
// ProvisioningFailed Event, with the driver's words, and cleared once the claim is gone.
TEST_F(RealNode, AClaimTheDriverRefusesIsCountedInTheStatusAndClearedWhenItGoes) {
  ASSERT_NO_FATAL_FAILURE(ensureHostpath());
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, claim("too-big", "csi-hostpath-sc", "2Ti")).ok());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(waitFor("the refused claim is counted", 120s, [&](std::string& seen) {
    seen = conditionField("hostpath", "VolumesFailing", "reason") + ": " +
           conditionField("hostpath", "VolumesFailing", "message") + " / " +
           kubectl({"get", "dd", "hostpath", "-o", "jsonpath={.status.volumes}"}).out;
    return seen.starts_with("ProvisioningFailed: 1 ProvisioningFailed: PersistentVolumeClaim " +
                            kWorkloadNamespace + "/too-big: ") &&
           seen.find("exceeds maximum allowed") != std::string::npos &&
           seen.find("\"provisioningFailed\":1") != std::string::npos;
  }));
  std::cout << "[ figure ] the refused claim counted "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count()
            << " ms after it was created\n";
  // (Every step below runs: the claim is deleted whatever was seen, as the deletion tests need.)
  const std::string leader = leaderPod();
  EXPECT_FALSE(leader.empty()) << leaseHolder();
  EXPECT_TRUE(waitFor("the leader counts it", 30s, [&](std::string& seen) {
    seen = leaderSeries("csiop_driver_volume_failures", "hostpath", leader);
    return seen.find("csiop_driver_volume_failures{driverdeployment=\"hostpath\",reason="
                     "\"ProvisioningFailed\"} 1") != std::string::npos;
  }));

  EXPECT_TRUE(kubectl({"delete", "pvc", "too-big", "-n", kWorkloadNamespace, "--wait"}).ok());
  EXPECT_TRUE(waitFor("the failure is cleared once the claim is gone", 90s, [&](std::string& seen) {
    seen = conditionField("hostpath", "VolumesFailing", "status") + " " +
           kubectl({"get", "dd", "hostpath", "-o", "jsonpath={.status.volumes}"}).out;
    return seen == "False ";
  }));
}

// --- Deletion -------------------------------------------------------------------------------

TEST_F(RealNode, DeletingTheDriverUnderAMountedVolumeIsRefusedByTheChartsWebhook) {
  ASSERT_NO_FATAL_FAILURE(ensureWriter());
  const std::string pv = pvOf("data");
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

// A webhook that does not see deletions (down with Ignore, an older chart): the chart's
// configuration changed to CREATE and UPDATE only, and the DriverDeployment deleted.
void deleteHostpathPastTheWebhook() {
  const auto patched = kubectl(
      {"patch", "validatingwebhookconfiguration", kFullname, "--type=json", "-p",
       R"([{"op":"replace","path":"/webhooks/0/rules/0/operations","value":["CREATE","UPDATE"]}])"});
  ASSERT_TRUE(patched.ok()) << patched;
  ASSERT_TRUE(waitFor("the deletion is admitted", 30s, [](std::string& seen) {
    const auto r = kubectl({"delete", "dd", "hostpath", "--wait=false"});
    seen = r.out + r.err;
    return r.ok();
  }));
}

TEST_F(RealNode, WithoutTheWebhookTheFinalizerHoldsTheDriverUnderTheMountedVolume) {
  ASSERT_NO_FATAL_FAILURE(ensureWriter());
  ASSERT_NO_FATAL_FAILURE(deleteHostpathPastTheWebhook());
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
  const auto write = execInWorkload("echo while-deleting > /data/fourth && cat /data/fourth");
  ASSERT_TRUE(write.ok()) << write;
  EXPECT_EQ(write.out, "while-deleting\n");
}

TEST_F(RealNode, TheDeletionCompletesWhenTheWorkloadIsGoneLeavingNoVolumeNoMountAndNoDriver) {
  const bool deleting =
      exists({"dd", "hostpath"}) &&
      kubectlJson({"get", "dd", "hostpath"})["metadata"].contains("deletionTimestamp");
  if (!deleting) { // the test before did not get that far
    ASSERT_NO_FATAL_FAILURE(ensureWriter());
    ASSERT_NO_FATAL_FAILURE(deleteHostpathPastTheWebhook());
  }
  expectCleanLogs(kDriverNamespace, kHostpathPods); // before its logs go with the pods
  const std::string handle = volumeHandle();
  ASSERT_FALSE(handle.empty());
  const auto workload =
      kubectl({"delete", "-f", "-", "--wait=true", "--timeout=120s"}, workloadManifest());
  ASSERT_TRUE(workload.ok()) << workload;
  // The driver, still running, deleted the volume (DeleteVolume) and then the PV; the attacher
  // detached (ControllerUnpublishVolume).
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
