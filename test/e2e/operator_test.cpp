// `csi-operator run` against the real control plane: the reconcile loop creates,
// repairs, updates, prunes and deletes what a DriverDeployment asks for, and
// tells the truth in its status.
#include <gtest/gtest.h>

#include <iostream>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>

#include "harness.hpp"
#include "operator_process.hpp"

namespace csiop::e2e {
namespace {

// A DriverDeployment `name` of the driver `name`.csi.example.com with the hostpath plugin's image,
// and `more` (lines under spec).
std::string plainDd(const std::string& name, const std::string& more = "") {
  return "apiVersion: csiop.dev/v1alpha1\nkind: DriverDeployment\nmetadata:\n  name: " + name +
         "\nspec:\n  driverName: " + name + ".csi.example.com\n" + more +
         "  driver:\n    image: registry.k8s.io/sig-storage/hostpathplugin:v1.17.0\n";
}

// One operator for the whole suite, as a cluster would run it.
class Operator : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    applyCrds();
    // A short resync period: the steady-state window below then covers several resyncs.
    op = std::make_unique<OperatorProcess>("operator.log",
                                           std::vector<std::string>{"--resync-period", "10s"});
    ASSERT_TRUE(op->waitReady(60s));
  }
  static void TearDownTestSuite() {
    if (op) {
      const auto code = op->stop();
      EXPECT_EQ(code, 0) << "the operator did not drain and exit cleanly on SIGTERM\n" << op->log();
      op.reset();
    }
  }
  void TearDown() override {
    if (HasFailure() && op) {
      std::cerr << "operator log:\n" << op->log() << "\n";
    }
  }

  static inline std::unique_ptr<OperatorProcess> op;
};

TEST_F(Operator, ReconcilesHostpathToReadyOnceEveryNodeRegistered) {
  const auto r = kubectl({"apply", "-f", (sourceDir() / "examples/hostpath.yaml").string()});
  ASSERT_TRUE(r.ok()) << r;
  // Every rendered object exists, with the rendered content.
  const auto live = kubectl({"get", "dd", "hostpath", "-o", "json"});
  const auto rendered = csiOperator({"render", "-o", "json", "-f", "-"}, live.out);
  ASSERT_TRUE(rendered.ok()) << rendered;
  for (const auto& o : Json::parse(rendered.out)["items"]) {
    const std::string kind = o["kind"];
    const std::string name = o["metadata"]["name"];
    std::vector<std::string> args = {"get", kind, name, "-o", "json"};
    if (o["metadata"].contains("namespace")) {
      args.push_back("-n");
      args.push_back(o["metadata"]["namespace"]);
    }
    ASSERT_TRUE(waitFor(kind + " " + name + " is created as rendered", 30s, [&](std::string& seen) {
      const auto got = kubectl(args);
      seen = got.out + got.err;
      if (!got.ok()) {
        return false;
      }
      const Json obj = Json::parse(got.out);
      if (kind == "DaemonSet" || kind == "StatefulSet") {
        return obj["spec"]["template"]["spec"]["containers"].size() ==
                   o["spec"]["template"]["spec"]["containers"].size() &&
               obj["spec"]["template"]["spec"]["containers"][0]["image"] ==
                   o["spec"]["template"]["spec"]["containers"][0]["image"];
      }
      if (kind == "ClusterRole" || kind == "Role") {
        return obj["rules"].size() == o["rules"].size();
      }
      return true;
    }));
  }
  EXPECT_TRUE(
      waitFor("Ready is False while no CSINode lists the driver", 30s, [&](std::string& seen) {
        seen = kubectl({"get", "dd", "hostpath", "-o", "jsonpath={.status}"}).out;
        return ddCondition("hostpath", "Ready") == "False" &&
               seen.find("RegistrationPending") != std::string::npos;
      }));
  registerDriverOnNodes("hostpath.csi.k8s.io");
  ASSERT_TRUE(waitFor(
      "hostpath is Ready with the driver registered on every node", 60s, [&](std::string& seen) {
        const auto s = kubectl({"get", "dd", "hostpath", "-o", "jsonpath={.status}"});
        seen = s.out;
        const auto st = Json::parse(s.out.empty() ? "{}" : s.out);
        return ddCondition("hostpath", "Ready") == "True" &&
               st["nodes"]["registered"] == cluster().nodes &&
               st["nodes"]["desired"] == cluster().nodes;
      }));
  const auto printed = kubectl({"get", "dd", "hostpath"});
  EXPECT_NE(printed.out.find("True"), std::string::npos) << printed;
}

TEST_F(Operator, RecreatesADeletedDaemonSet) {
  ASSERT_TRUE(exists({"ds", "hostpath-node", "-n", "csi-hostpath"}));
  const auto uid = kubectl({"get", "ds", "hostpath-node", "-n", "csi-hostpath", "-o",
                            "jsonpath={.metadata.uid}"})
                       .out;
  ASSERT_TRUE(kubectl({"delete", "ds", "hostpath-node", "-n", "csi-hostpath", "--wait=true"}).ok());
  EXPECT_TRUE(waitFor("the DaemonSet is recreated", 30s, [&](std::string& seen) {
    const auto r = kubectl(
        {"get", "ds", "hostpath-node", "-n", "csi-hostpath", "-o", "jsonpath={.metadata.uid}"});
    seen = r.out + r.err;
    return r.ok() && !r.out.empty() && r.out != uid;
  }));
}

// Kubernetes' storage e2e suite copies a driver's StorageClass under a new name (a deep copy:
// labels, owner references and managedFields included) and uses the copy. The copy carries the
// operator's owner label and owner reference, but it is not the operator's to prune.
TEST_F(Operator, AnotherClientsCopyOfAChildIsNotPruned) {
  Json copy = kubectlJson({"get", "storageclass", "csi-hostpath-sc", "--show-managed-fields"});
  ASSERT_TRUE(copy["metadata"].contains("ownerReferences")) << copy.dump();
  ASSERT_TRUE(copy["metadata"].contains("managedFields")) << copy.dump();
  copy["metadata"]["name"] = "csi-hostpath-sc-copy";
  for (const char* serverSet : {"uid", "resourceVersion", "creationTimestamp"}) {
    copy["metadata"].erase(serverSet);
  }
  ASSERT_TRUE(kubectl({"create", "-f", "-"}, copy.dump()).ok());
  const Json created =
      kubectlJson({"get", "storageclass", "csi-hostpath-sc-copy", "--show-managed-fields"});
  const Json& managers = created["metadata"]["managedFields"];
  ASSERT_TRUE(managers.is_array()) << created.dump();
  for (const Json& entry : managers) {
    EXPECT_NE(entry.value("manager", ""), "csi-operator")
        << "the API server gives a create's fields to its creator: " << created.dump();
  }
  // The copy's create queues the owner's reconcile (owner label); 12 s also cover a resync.
  std::this_thread::sleep_for(12s);
  EXPECT_TRUE(exists({"storageclass", "csi-hostpath-sc-copy"})) << op->log();
  EXPECT_TRUE(exists({"storageclass", "csi-hostpath-sc"}));
  EXPECT_EQ(op->log().find("pruned StorageClass csi-hostpath-sc-copy"), std::string::npos);
  ASSERT_TRUE(kubectl({"delete", "storageclass", "csi-hostpath-sc-copy"}).ok());
}

TEST_F(Operator, SteadyStateIssuesNoWrites) {
  ASSERT_TRUE(waitFor("hostpath is Ready", 60s, [&](std::string& seen) {
    seen = ddCondition("hostpath", "Ready");
    return seen == "True";
  }));
  std::this_thread::sleep_for(3s); // let the last status write land
  const double before = op->mutatingRequests();
  const double reconcilesBefore = op->metric("csiop_reconcile_total{result=\"success\"}");
  ASSERT_GE(before, 0);
  // Touching the DriverDeployment's metadata triggers a reconcile that must find nothing to do.
  ASSERT_TRUE(kubectl({"annotate", "dd", "hostpath", "example.com/poke=1", "--overwrite"}).ok());
  // Half a minute of steady state, the reconcile and three resyncs included: not one write.
  std::this_thread::sleep_for(30s);
  EXPECT_EQ(op->mutatingRequests(), before) << op->log();
  EXPECT_GE(op->metric("csiop_reconcile_total{result=\"success\"}"), reconcilesBefore + 3)
      << "the window covered the poke and the 10 s resyncs";
}

TEST_F(Operator, SpecEditsUpdateAndPrune) {
  const std::string patch =
      R"({"spec": {"driver": {"image": "registry.k8s.io/sig-storage/hostpathplugin:v1.17.1"},
    "controller": {"snapshotter": {"enabled": false}}, "storageClasses": []}})";
  ASSERT_TRUE(kubectl({"patch", "dd", "hostpath", "--type=merge", "-p", patch}).ok());
  EXPECT_TRUE(
      waitFor("the new image is rolled out to the node plugin", 30s, [&](std::string& seen) {
        seen = kubectl({"get", "ds", "hostpath-node", "-n", "csi-hostpath", "-o",
                        "jsonpath={.spec.template.spec.containers[0].image}"})
                   .out;
        return seen == "registry.k8s.io/sig-storage/hostpathplugin:v1.17.1";
      }));
  EXPECT_TRUE(waitFor(
      "the snapshotter and its RBAC are pruned, and the StorageClass", 30s, [&](std::string& seen) {
        // The example's sidecars run in the node plugin's pods.
        seen = kubectl({"get", "ds", "hostpath-node", "-n", "csi-hostpath", "-o",
                        "jsonpath={.spec.template.spec.containers[*].name}"})
                   .out;
        return seen.find("csi-provisioner") != std::string::npos &&
               seen.find("csi-snapshotter") == std::string::npos &&
               !exists({"clusterrolebinding", "csiop:hostpath:sidecar:external-snapshotter"}) &&
               !exists({"storageclass", "csi-hostpath-sc"});
      }));
}

TEST_F(Operator, ChangingAttachRequiredRecreatesTheCSIDriver) {
  const auto uid =
      kubectl({"get", "csidriver", "hostpath.csi.k8s.io", "-o", "jsonpath={.metadata.uid}"}).out;
  ASSERT_FALSE(uid.empty());
  ASSERT_TRUE(
      kubectl(
          {"patch", "dd", "hostpath", "--type=merge", "-p",
           R"({"spec": {"csiDriver": {"attachRequired": false}, "controller": {"attacher": {"enabled": false}}}})"})
          .ok());
  EXPECT_TRUE(
      waitFor("the CSIDriver is recreated with attachRequired false", 30s, [&](std::string& seen) {
        const auto r = kubectl({"get", "csidriver", "hostpath.csi.k8s.io", "-o",
                                "jsonpath={.metadata.uid} {.spec.attachRequired}"});
        seen = r.out;
        return r.ok() && r.out.find(uid) == std::string::npos && r.out.ends_with(" false");
      }));
  EXPECT_TRUE(waitFor("an Event says so", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "events", "-n", "default", "--field-selector",
                    "involvedObject.name=hostpath,reason=CSIDriverRecreated", "-o", "name"})
               .out;
    return !seen.empty();
  }));
  EXPECT_EQ(ddCondition("hostpath", "CSIDriverRecreated"), "True");
}

TEST_F(Operator, ASecondClaimOnTheDriverNameGetsAConflictAndNothingElse) {
  const auto uid =
      kubectl({"get", "csidriver", "hostpath.csi.k8s.io", "-o", "jsonpath={.metadata.uid}"}).out;
  const std::string second = R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: hostpath-copy}
spec:
  driverName: hostpath.csi.k8s.io
  csiDriver: {attachRequired: false}
  driver: {image: registry.k8s.io/sig-storage/hostpathplugin:v1.17.0}
)";
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, second).ok());
  EXPECT_TRUE(waitFor("hostpath-copy reports DriverNameConflict", 30s, [&](std::string& seen) {
    seen = ddCondition("hostpath-copy", "DriverNameConflict");
    return seen == "True";
  }));
  EXPECT_FALSE(exists({"ds", "hostpath-copy-node", "-n", "csi-hostpath-copy"}));
  EXPECT_FALSE(exists({"namespace", "csi-hostpath-copy"}));
  EXPECT_EQ(
      kubectl({"get", "csidriver", "hostpath.csi.k8s.io", "-o", "jsonpath={.metadata.uid}"}).out,
      uid)
      << "the first owner's CSIDriver is untouched";
  EXPECT_NE(ddCondition("hostpath", "DriverNameConflict"), "True");
  deleteDd("hostpath-copy");
  EXPECT_EQ(
      kubectl({"get", "csidriver", "hostpath.csi.k8s.io", "-o", "jsonpath={.metadata.uid}"}).out,
      uid)
      << "deleting the loser deletes nothing of the owner's";
}

TEST_F(Operator, DeletingRemovesEverythingWithTheCSIDriverLast) {
  deleteDd("hostpath");
  EXPECT_TRUE(waitFor("every child is gone", 60s, [&](std::string& seen) {
    seen = kubectl({"get", "all,sa,role,rolebinding", "-n", "csi-hostpath", "-l",
                    "csiop.dev/driverdeployment=hostpath", "-o", "name"})
               .out +
           kubectl({"get", "csidriver,clusterrole,clusterrolebinding,storageclass", "-l",
                    "csiop.dev/driverdeployment=hostpath", "-o", "name"})
               .out;
    return seen.empty();
  }));
  EXPECT_FALSE(exists({"dd", "hostpath"}));
  EXPECT_TRUE(exists({"namespace", "csi-hostpath"})) << "namespaces are never deleted";
  const std::string log = op->log();
  const auto driver = log.rfind("deleting CSIDriver hostpath.csi.k8s.io");
  ASSERT_NE(driver, std::string::npos) << log;
  // The example's controller sidecars run in the node plugin's pods: no controller workload.
  for (const char* other : {"deleting DaemonSet", "deleting ServiceAccount", "deleting Role"}) {
    const auto at = log.find(other);
    EXPECT_TRUE(at != std::string::npos && at < driver) << other << " before the CSIDriver\n"
                                                        << log;
  }
  kubectl({"delete", "namespace", "csi-hostpath", "--wait=false"});
}

TEST_F(Operator, OrphanPolicyKeepsTheChildren) {
  std::string nfs = readFile(sourceDir() / "examples/nfs.yaml");
  nfs += "  deletionPolicy: Orphan\n";
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, nfs).ok());
  ASSERT_TRUE(waitFor("the nfs node plugin exists", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "ds", "nfs-node", "-n", "csi-nfs", "-o", "name"}).out;
    return !seen.empty();
  }));
  deleteDd("nfs");
  EXPECT_FALSE(exists({"dd", "nfs"}));
  std::this_thread::sleep_for(3s); // give a garbage collector the chance to do harm
  const auto ds = kubectl({"get", "ds", "nfs-node", "-n", "csi-nfs", "-o", "json"});
  ASSERT_TRUE(ds.ok()) << "orphaned children stay";
  EXPECT_FALSE(Json::parse(ds.out)["metadata"].contains("ownerReferences"));
  EXPECT_TRUE(exists({"csidriver", "nfs.csi.k8s.io"}));
  // Clean up by hand, as an admin would after orphaning.
  kubectl({"delete", "namespace", "csi-nfs", "--wait=false"});
  kubectl({"delete", "csidriver", "nfs.csi.k8s.io"});
  kubectl({"delete", "storageclass", "nfs-csi"});
  kubectl({"delete", "clusterrolebinding", "csiop:nfs:sidecar:external-provisioner",
           "csiop:nfs:sidecar:external-resizer"});
}

const char* kCompanions = R"(
apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: companions}
spec:
  driverName: companions.csi.example.com
  driver: {image: registry.example.com/driver:v1}
  controller:
    snapshotter: {enabled: true}
    podDisruptionBudget: {maxUnavailable: 1}
  configMaps:
  - {name: driver-config, data: {config.json: '{"clusters": []}'}}
  services:
  - {name: node-metrics, component: Node, ports: [{name: metrics, port: 9100}]}
  volumeSnapshotClasses:
  - {name: companions-snapshots, deletionPolicy: Retain}
  secretAccess:
  - {names: [driver-credentials], serviceAccounts: [Controller, Node]}
  objects:
  - {apiVersion: v1, kind: ServiceAccount, metadata: {name: dashboard}}
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: RoleBinding
    metadata: {name: dashboard}
    roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: csiop:companions:node-secrets}
    subjects: [{kind: ServiceAccount, name: dashboard}]
)";

// Companion objects are children like the rest, against the real API server: created, owned,
// pruned and deleted. The VolumeSnapshotClass waits for its CRD, reported meanwhile, and is
// created once an admin installs it, without anything else happening.
TEST_F(Operator, CompanionObjectsAreOwnedAndAClassWaitsForItsCRD) {
  const auto manifests = snapshotManifests();
  if (manifests.empty()) {
    GTEST_SKIP() << "no snapshot CRD manifests (CSIOP_SNAPSHOT_MANIFESTS, "
                    "CSIOP_IMAGE_ARCHIVES/manifests or shared/upstream-images)";
  }
  // The suite's cluster has them (as an admin installs them): take them away first.
  const char* kSnapshotCrds[] = {"volumesnapshotclasses", "volumesnapshotcontents",
                                 "volumesnapshots"};
  for (const char* crd : kSnapshotCrds) {
    kubectl({"delete", "crd", std::string(crd) + ".snapshot.storage.k8s.io", "--ignore-not-found",
             "--wait=true"});
  }
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, kCompanions).ok());
  const std::string ns = "csi-companions";
  const std::vector<std::vector<std::string>> companions = {
      {"configmap", "driver-config", "-n", ns},
      {"service", "node-metrics", "-n", ns},
      {"poddisruptionbudget", "companions-controller", "-n", ns},
      {"serviceaccount", "dashboard", "-n", ns},
      {"rolebinding", "dashboard", "-n", ns},
      {"role", "csiop:companions:secrets", "-n", ns},
      {"role", "csiop:companions:node-secrets", "-n", ns}};
  for (const auto& what : companions) {
    EXPECT_TRUE(
        waitFor(what[0] + " " + what[1] + " is created, owned", 30s, [&](std::string& seen) {
          std::vector<std::string> args = {"get"};
          args.insert(args.end(), what.begin(), what.end());
          args.insert(args.end(), {"-o", "jsonpath={.metadata.ownerReferences[0].name}"});
          seen = kubectl(args).out;
          return seen == "companions";
        }));
  }
  EXPECT_EQ(kubectl({"get", "service", "node-metrics", "-n", ns, "-o",
                     "jsonpath={.spec.selector.app\\.kubernetes\\.io/component}"})
                .out,
            "node-plugin");
  EXPECT_TRUE(waitFor("the missing snapshot API is reported", 60s, [&](std::string& seen) {
    seen = kubectl({"get", "dd", "companions", "-o",
                    "jsonpath={.status.conditions[?(@.type==\"Degraded\")].message}"})
               .out;
    return seen.find("snapshot.storage.k8s.io/v1/volumesnapshotclasses is not served") !=
               std::string::npos &&
           seen.find("snapshot.storage.k8s.io/v1/volumesnapshotcontents is not served") !=
               std::string::npos;
  }));

  for (const char* crd : kSnapshotCrds) {
    const auto applied =
        kubectl({"apply", "--server-side", "-f",
                 (manifests / ("snapshot.storage.k8s.io_" + std::string(crd) + ".yaml")).string()});
    ASSERT_TRUE(applied.ok()) << applied;
  }
  // The operator looks for a missing API again every 30 s. Degraded then says no more of it
  // (past 30 s it may say RegistrationFailing instead: no driver registers on kwok's nodes).
  EXPECT_TRUE(waitFor("the VolumeSnapshotClass is created once its CRD is there", 90s,
                      [&](std::string& seen) {
                        seen = kubectl({"get", "volumesnapshotclass", "companions-snapshots", "-o",
                                        "jsonpath={.driver} {.deletionPolicy}"})
                                   .out +
                               " / " + conditionField("companions", "Degraded", "reason");
                        return seen.rfind("companions.csi.example.com Retain / ", 0) == 0 &&
                               !seen.ends_with("PrerequisitesMissing");
                      }));

  const std::string patch = R"({"spec": {"configMaps": null, "objects": null}})";
  ASSERT_TRUE(kubectl({"patch", "dd", "companions", "--type=merge", "-p", patch}).ok());
  EXPECT_TRUE(waitFor("what the spec dropped is pruned", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "configmap,serviceaccount,rolebinding", "-n", ns, "-l",
                    "app.kubernetes.io/component in (config,object)", "-o", "name"})
               .out;
    return seen.empty();
  }));
  EXPECT_TRUE(exists({"service", "node-metrics", "-n", ns}));

  deleteDd("companions");
  EXPECT_TRUE(
      waitFor("every companion is gone with the DriverDeployment", 60s, [&](std::string& seen) {
        seen = kubectl({"get", "service,poddisruptionbudget,role", "-n", ns, "-l",
                        "csiop.dev/driverdeployment=companions", "-o", "name"})
                   .out +
               kubectl({"get", "volumesnapshotclass", "-o", "name"}).out;
        return seen.empty();
      }));
  kubectl({"delete", "namespace", ns, "--wait=false"});
  // The CRDs stay, as the suite's cluster had them.
}

// The driver's volumes that fail, from the cluster's own Events through watches the API server
// filters by reason. kwok runs no kubelet: the test writes the FailedMount Events a kubelet
// would (its words, its source) for a pod that waits (no node takes it) whose claim's volume is
// a PersistentVolume of the driver, and one for the same pod's ConfigMap volume, which is not
// the driver's. Counted once, named; cleared when the pod goes.
TEST_F(Operator, VolumesOfTheDriverThatFailToMountAreCountedAndClearedWhenThePodGoes) {
  const std::string ns = "apps-vols";
  ASSERT_TRUE(kubectl({"create", "namespace", ns}).ok());
  const std::string dd = plainDd("vols");
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, dd).ok());
  const std::string objects = R"(apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-vols-1
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  csi: {driver: vols.csi.example.com, volumeHandle: handle-1}
---
apiVersion: v1
kind: Pod
metadata:
  name: waits
  namespace: apps-vols
spec:
  nodeSelector: {csiop.dev/no-such-node: "true"}
  containers: [{name: app, image: registry.example.com/app:v1}]
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: data}}
  - {name: config, configMap: {name: missing}}
)";
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, objects).ok());
  const auto event = [&](const std::string& name, const std::string& volume,
                         const std::string& why) {
    return kubectl({"apply", "-f", "-"}, failedMount(ns, "waits", name, volume, why));
  };
  // The operator's pod cache has the pod before the Events name it (as with a kubelet's).
  ASSERT_TRUE(waitFor("the pod exists", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "pod", "waits", "-n", ns, "-o", "name"}).out;
    return !seen.empty();
  }));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(event("waits.1", "pv-vols-1",
                    "rpc error: code = Internal desc = mount failed: exit status 32")
                  .ok());
  ASSERT_TRUE(event("waits.2", "config", "configmap \"missing\" not found").ok());
  EXPECT_TRUE(waitFor("the mount failure is counted and named", 60s, [&](std::string& seen) {
    seen = conditionField("vols", "VolumesFailing", "reason") + ": " +
           conditionField("vols", "VolumesFailing", "message") + " / " +
           kubectl({"get", "dd", "vols", "-o", "jsonpath={.status.volumes.mountFailed}"}).out;
    return seen ==
           "MountFailed: 1 MountFailed: Pod apps-vols/waits (volume pv-vols-1): MountVolume.SetUp "
           "failed for volume \"pv-vols-1\" : rpc error: code = Internal desc = mount failed: "
           "exit status 32 / 1";
  }));
  std::cout << "[ figure ] counted "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count()
            << " ms after the Event was written\n";

  ASSERT_TRUE(kubectl({"delete", "pod", "waits", "-n", ns, "--wait"}).ok());
  const auto deleted = std::chrono::steady_clock::now();
  EXPECT_TRUE(waitFor("cleared once the pod is gone", 60s, [&](std::string& seen) {
    seen = conditionField("vols", "VolumesFailing", "status") + " " +
           kubectl({"get", "dd", "vols", "-o", "jsonpath={.status.volumes}"}).out;
    return seen == "False ";
  }));
  std::cout << "[ figure ] cleared "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - deleted)
                   .count()
            << " ms after the pod was gone\n";
  // The PersistentVolume first: a DriverDeployment's deletion waits while a volume of its
  // driver is there.
  EXPECT_TRUE(kubectl({"delete", "pv", "pv-vols-1", "--wait"}).ok());
  deleteDd("vols");
  EXPECT_FALSE(exists({"dd", "vols"}));
  kubectl({"delete", "namespace", ns, "--wait=false"});
}

// A DaemonSet whose pods a ResourceQuota refuses says so only in a FailedCreate Event: the status
// says it within seconds, naming the workload and the quota, and no longer once the quota allows
// the pods.
TEST_F(Operator, PodsAQuotaRefusesAreReportedWithinSecondsAndClearedWhenAllowed) {
  const std::string ns = "csi-no-pods";
  ASSERT_TRUE(kubectl({"create", "namespace", ns}).ok());
  const std::string quota = R"(apiVersion: v1
kind: ResourceQuota
metadata:
  name: no-pods
  namespace: csi-no-pods
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
  const std::string dd = plainDd("no-pods", "  namespace: csi-no-pods\n");
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, dd).ok());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(waitFor("Degraded names the DaemonSet and the quota", 60s, [&](std::string& seen) {
    seen = conditionField("no-pods", "Degraded", "reason") + ": " +
           conditionField("no-pods", "Degraded", "message");
    return seen.starts_with("PodsNotCreated: DaemonSet csi-no-pods/no-pods-node cannot create its "
                            "pods: ") &&
           seen.find("exceeded quota: no-pods") != std::string::npos;
  }));
  const auto took =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start);
  std::cout << "[ figure ] reported " << took.count() << " s after the apply\n";
  EXPECT_NE(conditionField("no-pods", "Ready", "message").find("exceeded quota"), std::string::npos)
      << ddStatus("no-pods");

  ASSERT_TRUE(kubectl({"delete", "resourcequota", "no-pods", "-n", ns}).ok());
  EXPECT_TRUE(waitFor("the report goes once the pods are created", 120s, [&](std::string& seen) {
    seen = conditionField("no-pods", "Degraded", "reason");
    return seen != "PodsNotCreated";
  }));
  deleteDd("no-pods");
  kubectl({"delete", "namespace", ns, "--wait=false"});
}

// spec.additionalNamespaces (OpenEBS LVM LocalPV keeps its LVMVolumes in a namespace of their
// own): created with the driver, a Role there for each pod's account, the Roles pruned when the
// entry goes, and the namespace itself never deleted (its records are the volumes').
TEST_F(Operator, AnAdditionalNamespaceIsCreatedWithItsRolesAndOutlivesTheDriver) {
  const std::string extra = "csi-lvm-records";
  const std::string rules = "  additionalNamespaces:\n  - name: " + extra +
                            "\n    controllerRbacRules:\n    - {apiGroups: [''], resources: "
                            "[configmaps], verbs: [get, list, watch, create, delete]}\n"
                            "    nodeRbacRules:\n    - {apiGroups: [''], resources: [configmaps], "
                            "verbs: [get]}\n";
  const std::string controller = "  controller: {attacher: {enabled: false}}\n";
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, plainDd("lvm", controller + rules)).ok());
  const auto can = [&](const std::string& verb, const std::string& ns, const std::string& sa) {
    return trimmed(kubectl({"auth", "can-i", verb, "configmaps", "-n", ns, "--as",
                            "system:serviceaccount:csi-lvm:" + sa})
                       .out);
  };
  EXPECT_TRUE(waitFor(
      "the namespace and its Roles, bound to each pod's account", 60s, [&](std::string& seen) {
        seen = can("create", extra, "lvm-controller") + "/" + can("get", extra, "lvm-node") + "/" +
               can("create", extra, "lvm-node");
        return seen == "yes/yes/no";
      }));
  EXPECT_EQ(can("create", "default", "lvm-controller"), "no") << "granted beyond the namespace";
  EXPECT_EQ(kubectl({"get", "namespace", extra, "-o", "jsonpath={.metadata.ownerReferences}"}).out,
            "");

  // The entry goes: its Roles go, the namespace stays.
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, plainDd("lvm", controller)).ok());
  EXPECT_TRUE(waitFor("the Roles pruned", 60s, [&](std::string& seen) {
    seen = kubectl({"get", "roles,rolebindings", "-n", extra, "-o", "name"}).out;
    return seen.empty();
  }));
  EXPECT_EQ(can("get", extra, "lvm-node"), "no");
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, plainDd("lvm", controller + rules)).ok());
  EXPECT_TRUE(waitFor("the Roles back", 60s, [&](std::string& seen) {
    seen = can("get", extra, "lvm-node");
    return seen == "yes";
  }));
  deleteDd("lvm");
  EXPECT_EQ(kubectl({"get", "roles", "-n", extra, "-o", "name"}).out, "");
  EXPECT_EQ(kubectl({"get", "namespace", extra, "-o", "jsonpath={.status.phase}"}).out, "Active")
      << "deleting the driver deleted its additional namespace";
  kubectl({"delete", "namespace", extra, "csi-lvm", "--wait=false"});
}

// What the API server says of a write it takes but doubts (a Warning header) is heard: a
// deprecated node label is logged with the object and the server's words, counted in
// csiop_api_warnings_total by resource, and said in the APIWarnings condition. A field Kubernetes
// does not know (a misspelling in an embedded securityContext, taken here because no webhook
// refuses it) is pruned by the operator as the API server would prune it: no warning for it, and
// the DaemonSet is what the API server keeps.
TEST_F(Operator, TheApiServersWarningsAreLoggedAndCounted) {
  const double before = op->metric("csiop_api_warnings_total{resource=\"daemonsets\"}");
  const std::string dd = R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata:
  name: warned
spec:
  driverName: warned.csi.example.com
  driver:
    image: registry.k8s.io/sig-storage/hostpathplugin:v1.17.0
    securityContext: {privileged: true, allowPrivilegeEscalaton: true}
  node:
    nodeSelector: {beta.kubernetes.io/os: linux}
)";
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, dd).ok());
  const std::string warning = "the API server warns about create daemonsets "
                              "csi-warned/warned-node: spec.template.spec.nodeSelector"
                              "[beta.kubernetes.io/os]: deprecated";
  EXPECT_TRUE(waitFor("the warning logged", 60s, [&](std::string& seen) {
    seen = op->log();
    return seen.find(warning) != std::string::npos;
  }));
  EXPECT_EQ(op->log().find("allowPrivilegeEscalaton"), std::string::npos) << op->log();
  EXPECT_GE(op->metric("csiop_api_warnings_total{resource=\"daemonsets\"}"),
            std::max(before, 0.0) + 1);
  EXPECT_TRUE(waitFor("APIWarnings names the DaemonSet and the field", 30s, [&](std::string& seen) {
    seen = conditionField("warned", "APIWarnings", "status") + " " +
           conditionField("warned", "APIWarnings", "message");
    return seen.starts_with("True DaemonSet csi-warned/warned-node: "
                            "spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated");
  }));
  const Json ds = kubectlJson({"get", "daemonset", "-n", "csi-warned", "warned-node"});
  for (const auto& c : ds["spec"]["template"]["spec"]["containers"]) {
    if (c.value("name", "") == "csi-driver") {
      EXPECT_EQ(c["securityContext"], Json({{"privileged", true}})) << c.dump(2);
    }
  }
  EXPECT_EQ(ddCondition("warned", "Degraded"), "False") << "the objects were taken";
  deleteDd("warned");
  kubectl({"delete", "namespace", "csi-warned", "--wait=false"});
}

// A CSIDriver field newer than the API server (this suite runs on the oldest claimed version
// too, e2e.operator.oldest): refused with the version it needs, where the server lacks it;
// where the server has it behind a feature gate that is off, dropped by the server, and the
// operator does not fight that with an apply per resync.
TEST_F(Operator, ACSIDriverFieldIsRefusedOnAServerWithoutItAndLeftAloneOnOneThatDropsIt) {
  const Json version = kubectlJson({"version"})["serverVersion"];
  const std::string gitVersion = version.value("gitVersion", "");
  const int minor = std::stoi(version.value("minor", "0"));
  EXPECT_NE(op->log().find("API server " + gitVersion + " (minor " + std::to_string(minor) + ")"),
            std::string::npos)
      << "the operator logs the version it read at start";
  const std::string dd = plainDd(
      "newer", "  csiDriver: {attachRequired: false, preventPodSchedulingIfMissing: true}\n");
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, dd).ok());
  if (minor < 36) {
    EXPECT_TRUE(
        waitFor("the field is refused with the version it needs", 30s, [&](std::string& seen) {
          seen = conditionField("newer", "Degraded", "reason") + ": " +
                 conditionField("newer", "Degraded", "message");
          return seen.find("InvalidSpec: ") == 0 &&
                 seen.find("spec.csiDriver.preventPodSchedulingIfMissing: "
                           "Forbidden: needs Kubernetes 1.36 or newer: the API "
                           "server is 1." +
                           std::to_string(minor)) != std::string::npos;
        }));
    EXPECT_FALSE(exists({"csidriver", "newer.csi.example.com"})) << "nothing is written";
    ASSERT_TRUE(
        kubectl({"patch", "dd", "newer", "--type=json", "-p",
                 R"([{"op": "remove", "path": "/spec/csiDriver/preventPodSchedulingIfMissing"}])"})
            .ok());
  }
  std::string resourceVersion;
  EXPECT_TRUE(waitFor("the CSIDriver is created", 30s, [&](std::string& seen) {
    seen = resourceVersion = kubectl({"get", "csidriver", "newer.csi.example.com", "-o",
                                      "jsonpath={.metadata.resourceVersion}"})
                                 .out;
    return !seen.empty() && conditionField("newer", "Degraded", "reason") != "InvalidSpec";
  }));
  // A resync (10 s) and more: the CSIDriver is not written again, though the server dropped the
  // field.
  std::this_thread::sleep_for(12s);
  EXPECT_EQ(kubectl({"get", "csidriver", "newer.csi.example.com", "-o",
                     "jsonpath={.metadata.resourceVersion}"})
                .out,
            resourceVersion)
      << kubectl({"get", "csidriver", "newer.csi.example.com", "-o", "yaml"}).out;
  deleteDd("newer");
  kubectl({"delete", "namespace", "csi-newer", "--wait=false"});
}

// The embedded objects are checked against the schema of the server the operator runs against:
// on another version than the built-in schema's (e2e.operator.oldest), the server's own. A pod
// field that only the built-in (newer) schema has is then pruned before the DaemonSet is applied,
// not sent for the server to warn about (and to refuse in every later server-side apply); where
// the server has it behind a feature gate that is off, the server drops it.
TEST_F(Operator, EmbeddedObjectsAreCheckedAgainstTheServersOwnSchema) {
  const std::string gitVersion =
      kubectlJson({"version"})["serverVersion"].value("gitVersion", std::string());
  std::ifstream file(sourceDir() / "api/schema/kubernetes.json");
  const std::string builtIn = Json::parse(file).value("kubernetesVersion", std::string());
  const std::string served =
      "embedded Kubernetes objects are checked against the API server's " + gitVersion + " schema";
  if (gitVersion == builtIn) {
    EXPECT_EQ(op->log().find("checked against the API server's"), std::string::npos);
  } else {
    EXPECT_NE(op->log().find(served), std::string::npos) << "on " << gitVersion;
  }
  const std::string dd = plainDd("grouped", "  node:\n    podTemplatePatch:\n      spec:\n        "
                                            "schedulingGroup: {podGroupName: storage}\n");
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, dd).ok());
  EXPECT_TRUE(waitFor("the DaemonSet is created", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "daemonset", "-n", "csi-grouped", "grouped-node", "-o",
                    "jsonpath={.metadata.generation}"})
               .out;
    return !seen.empty();
  }));
  const Json ds = kubectlJson({"get", "daemonset", "-n", "csi-grouped", "grouped-node"});
  EXPECT_FALSE(ds["spec"]["template"]["spec"].contains("schedulingGroup"));
  std::this_thread::sleep_for(12s); // a resync (10 s): an update would meet the field again
  EXPECT_NE(conditionField("grouped", "APIWarnings", "status"), "True")
      << conditionField("grouped", "APIWarnings", "message");
  EXPECT_EQ(op->log().find("schedulingGroup"), std::string::npos) << op->log();
  EXPECT_NE(conditionField("grouped", "Degraded", "reason"), "ApplyFailed");
  deleteDd("grouped");
  kubectl({"delete", "namespace", "csi-grouped", "--wait=false"});
}

// A namespace that enforces Pod Security "restricted" refuses the node plugin's privileged pods:
// the operator asks first (a server-side dry run of a pod) and reports the refusal before any
// DaemonSet exists; once the namespace allows them, the DaemonSet is created.
TEST_F(Operator, APodSecurityRefusalIsReportedBeforeAnyDaemonSetExists) {
  const std::string ns = "csi-restricted";
  ASSERT_TRUE(kubectl({"create", "namespace", ns}).ok());
  ASSERT_TRUE(
      kubectl({"label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted"}).ok());
  const std::string dd = plainDd("restricted", "  namespace: csi-restricted\n");
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, dd).ok());
  EXPECT_TRUE(waitFor("the refusal is reported", 30s, [&](std::string& seen) {
    seen = conditionField("restricted", "Degraded", "reason") + ": " +
           conditionField("restricted", "Degraded", "message");
    return seen.starts_with("PrerequisitesMissing: DaemonSet csi-restricted/restricted-node is "
                            "not created: namespace csi-restricted enforces Pod Security "
                            "\"restricted\"") &&
           seen.find("violates PodSecurity \"restricted:latest\"") != std::string::npos;
  }));
  EXPECT_FALSE(exists({"daemonset", "-n", ns, "restricted-node"}));

  ASSERT_TRUE(kubectl({"label", "namespace", ns, "--overwrite",
                       "pod-security.kubernetes.io/enforce=privileged"})
                  .ok());
  EXPECT_TRUE(waitFor(
      "the DaemonSet is created once the namespace allows its pods", 30s, [&](std::string& seen) {
        seen = conditionField("restricted", "Degraded", "reason");
        return exists({"daemonset", "-n", ns, "restricted-node"}) && seen != "PrerequisitesMissing";
      }));
  deleteDd("restricted");
  kubectl({"delete", "namespace", ns, "--wait=false"});
}

} // namespace
} // namespace csiop::e2e
