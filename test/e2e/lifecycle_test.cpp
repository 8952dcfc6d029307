// The day after: deleting, pausing and hand-editing a driver under workloads, against the real
// API server. PersistentVolumes, VolumeAttachments and pods with inline volumes are created
// through the API (kwok nodes run nothing; e2e.realnode shows the same with real mounts). The
// operator serves its webhook, registered for CREATE, UPDATE and DELETE of DriverDeployments
// labelled csiop.dev/e2e-lifecycle=true, so other suites never meet it; removing the label is
// how a test stands for a webhook that is down. One ordered suite: the cases build on each
// other.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "harness.hpp"
#include "operator_process.hpp"

namespace csiop::e2e {
namespace {

const std::string kConfig = "csiop-e2e-lifecycle";
const std::string kLabel = "csiop.dev/e2e-lifecycle";

std::string labelled(const std::string& name) {
  std::string yaml = hostpathAs(name);
  const std::string at = "metadata:\n";
  yaml.replace(yaml.find(at), at.size(), at + "  labels: {" + kLabel + ": \"true\"}\n");
  return yaml;
}

std::string driverOf(const std::string& dd) {
  return dd + ".csi.k8s.io";
}

std::string persistentVolume(const std::string& name, const std::string& driver) {
  return "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name +
         "}\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n"
         "  persistentVolumeReclaimPolicy: Retain\n  csi: {driver: " +
         driver + ", volumeHandle: " + name + "-handle}\n";
}

std::string volumeAttachment(const std::string& name, const std::string& driver,
                             const std::string& pv, const std::string& node) {
  return "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: " + name +
         "}\nspec:\n  attacher: " + driver + "\n  nodeName: " + node +
         "\n  source: {persistentVolumeName: " + pv + "}\n";
}

std::string inlinePod(const std::string& name, const std::string& driver, const std::string& node) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         ", namespace: default}\nspec:\n  nodeName: " + node +
         "\n  containers: [{name: app, image: busybox, volumeMounts: [{name: scratch, "
         "mountPath: /data}]}]\n  volumes: [{name: scratch, csi: {driver: " +
         driver + "}}]\n";
}

bool apply(const std::string& yaml) {
  const auto r = kubectl({"apply", "-f", "-"}, yaml);
  EXPECT_TRUE(r.ok()) << r;
  return r.ok();
}

std::string firstNode() {
  return kubectl({"get", "nodes", "-o", "jsonpath={.items[0].metadata.name}"}).out;
}

// Reasons of the Events recorded for DriverDeployment `dd`.
std::string eventReasons(const std::string& dd) {
  return kubectl({"get", "events", "-n", "default", "--field-selector",
                  "involvedObject.kind=DriverDeployment,involvedObject.name=" + dd, "-o",
                  "jsonpath={.items[*].reason}"})
      .out;
}

std::string dsConfigHash(const std::string& dd) {
  return kubectl({"get", "ds", dd + "-node", "-n", "csi-" + dd, "-o",
                  R"(jsonpath={.spec.template.metadata.annotations.csiop\.dev/config-hash})"})
      .out;
}

std::string dsArgs(const std::string& dd) {
  return kubectl({"get", "ds", dd + "-node", "-n", "csi-" + dd, "-o",
                  "jsonpath={.spec.template.spec.containers[0].args}"})
      .out;
}

class Lifecycle : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    applyCrds();
    const auto dir = artifactDirectory("lifecycle-certs");
    ASSERT_TRUE(issueServingCertificate(dir, "lifecycle-ca"));
    const int port = freeLoopbackPort();
    op = std::make_unique<OperatorProcess>(
        "lifecycle-operator.log",
        std::vector<std::string>{"--webhook-port", std::to_string(port), "--webhook-host",
                                 "127.0.0.1", "--webhook-cert-dir", dir.string(),
                                 "--config-poll-period", "2s"});
    ASSERT_TRUE(op->waitReady(60s));
    registerLocalWebhook(kConfig, port, readFile(dir / "lifecycle-ca.crt"), kLabel,
                         {"CREATE", "UPDATE", "DELETE"}, "Fail");
    node = firstNode();
    ASSERT_FALSE(node.empty());
  }
  static void TearDownTestSuite() {
    kubectl({"delete", "validatingwebhookconfiguration", kConfig, "--ignore-not-found"});
    kubectl({"delete", "pod", "-n", "default", "e2e-inline", "--ignore-not-found",
             "--grace-period=0", "--force"});
    kubectl({"delete", "volumeattachment", "e2e-guarded-va", "--ignore-not-found"});
    kubectl({"delete", "pv", "e2e-guarded-pv", "e2e-forced-pv", "e2e-orphaned-pv",
             "--ignore-not-found"});
    kubectl({"delete", "pod", "-n", "default", "e2e-rolling-user", "--ignore-not-found",
             "--grace-period=0", "--force"});
    kubectl({"delete", "pv", "e2e-rolling-pv", "--ignore-not-found"});
    kubectl({"annotate", "node", "--all", "csiop.dev/allow-node-plugin-update-"});
    for (const char* dd :
         {"guarded", "forced", "orphaned", "paused", "handsoff", "configured", "rolling"}) {
      kubectl({"patch", "dd", dd, "--type=merge", "-p", R"({"spec":{"paused":false}})"});
      kubectl({"annotate", "dd", dd, "csiop.dev/force-delete=true", "--overwrite"});
      deleteDd(dd);
      kubectl(
          {"delete", "namespace", std::string("csi-") + dd, "--ignore-not-found", "--wait=false"});
    }
    kubectl({"delete", "ds", "orphaned-node", "-n", "csi-orphaned", "--ignore-not-found"});
    if (op) {
      op->stop();
    }
  }
  void TearDown() override {
    if (HasFailure() && op) {
      std::cerr << "operator log:\n" << op->log() << "\n";
    }
  }

  // A labelled DriverDeployment with its finalizer on (so the operator has taken it up).
  static bool created(const std::string& dd, const std::string& extraSpec = "") {
    std::string yaml = labelled(dd);
    if (!extraSpec.empty()) {
      yaml.replace(yaml.find("spec:\n"), 6, "spec:\n" + extraSpec);
    }
    if (!apply(yaml)) {
      return false;
    }
    return waitFor(dd + " has its finalizer and its DaemonSet", 60s, [&](std::string& seen) {
      seen = kubectl({"get", "dd", dd, "-o", "jsonpath={.metadata.finalizers}"}).out;
      return seen.find("csiop.dev/cleanup") != std::string::npos &&
             exists({"ds", dd + "-node", "-n", "csi-" + dd});
    });
  }

  static bool gone(const std::string& what, const std::vector<std::string>& object,
                   std::chrono::milliseconds timeout = 60s) {
    return waitFor(what, timeout, [&](std::string& seen) {
      std::vector<std::string> args = {"get"};
      args.insert(args.end(), object.begin(), object.end());
      const auto r = kubectl(args);
      seen = r.out + r.err;
      return !r.ok() && seen.find("NotFound") != std::string::npos;
    });
  }

  static inline std::unique_ptr<OperatorProcess> op;
  static inline std::string node;
};

TEST_F(Lifecycle, ADeleteIsDeniedWhileVolumesOfTheDriverAreInUse) {
  ASSERT_TRUE(created("guarded"));
  const std::string driver = driverOf("guarded");
  ASSERT_TRUE(apply(persistentVolume("e2e-guarded-pv", driver)));
  ASSERT_TRUE(apply(volumeAttachment("e2e-guarded-va", driver, "e2e-guarded-pv", node)));
  ASSERT_TRUE(apply(inlinePod("e2e-inline", driver, node)));
  const std::string expected =
      "admission webhook \"validate.csiop.dev\" denied the request: DriverDeployment \"guarded\" "
      "is in use: 1 PersistentVolume (e2e-guarded-pv), 1 VolumeAttachment (e2e-guarded-va) and 1 "
      "pod with an inline volume (default/e2e-inline) use driver guarded.csi.k8s.io, and would be "
      "stranded without it";
  EXPECT_TRUE(
      waitFor("kubectl delete is refused naming what is in use", 30s, [&](std::string& seen) {
        const auto r = kubectl({"delete", "dd", "guarded", "--wait=false"});
        seen = r.out + r.err;
        return !r.ok() && seen.find(expected) != std::string::npos;
      }));
  const auto meta = kubectlJson({"get", "dd", "guarded"})["metadata"];
  EXPECT_FALSE(meta.contains("deletionTimestamp")) << meta.dump();
}

TEST_F(Lifecycle, AForceDeleteValueThatIsNotABooleanIsRefused) {
  const auto r = kubectl({"annotate", "dd", "guarded", "csiop.dev/force-delete=yes"});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.err.find("metadata.annotations[csiop.dev/force-delete]: Unsupported value: \"yes\": "
                       "supported values: \"true\", \"false\""),
            std::string::npos)
      << r;
}

TEST_F(Lifecycle, TheFinalizerHoldsWhenTheWebhookIsBypassedAndTheDriverKeepsRunning) {
  // Without the label the webhook is not called: as when it is down with failurePolicy Ignore.
  ASSERT_TRUE(kubectl({"label", "dd", "guarded", kLabel + "-"}).ok());
  const auto r = kubectl({"delete", "dd", "guarded", "--wait=false"});
  ASSERT_TRUE(r.ok()) << r;
  ASSERT_TRUE(
      waitFor("DeletionBlocked is True, counting what is in use", 30s, [&](std::string& seen) {
        seen = conditionField("guarded", "DeletionBlocked", "message");
        return conditionField("guarded", "DeletionBlocked", "status") == "True" &&
               seen.find("the deletion waits: 1 PersistentVolume (e2e-guarded-pv), "
                         "1 VolumeAttachment (e2e-guarded-va) and 1 pod with an "
                         "inline volume (default/e2e-inline) still use the "
                         "driver") != std::string::npos;
      }));
  EXPECT_TRUE(waitFor("a DeletionBlocked Warning Event", 30s, [&](std::string& seen) {
    seen = eventReasons("guarded");
    return seen.find("DeletionBlocked") != std::string::npos;
  }));
  // The driver is still managed: a deleted DaemonSet comes back, the CSIDriver stays.
  ASSERT_TRUE(kubectl({"delete", "ds", "guarded-node", "-n", "csi-guarded"}).ok());
  EXPECT_TRUE(waitFor("the DaemonSet is recreated", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "ds", "-n", "csi-guarded"}).out;
    return exists({"ds", "guarded-node", "-n", "csi-guarded"});
  }));
  EXPECT_TRUE(exists({"csidriver", driverOf("guarded")}));
}

TEST_F(Lifecycle, TheDeletionCompletesByItselfWhenTheLastVolumeGoes) {
  ASSERT_TRUE(
      kubectl({"delete", "pod", "-n", "default", "e2e-inline", "--grace-period=0", "--force"})
          .ok());
  ASSERT_TRUE(kubectl({"delete", "volumeattachment", "e2e-guarded-va"}).ok());
  EXPECT_TRUE(waitFor("still blocked by the PersistentVolume alone", 30s, [&](std::string& seen) {
    seen = conditionField("guarded", "DeletionBlocked", "message");
    return seen.find("the deletion waits: 1 PersistentVolume (e2e-guarded-pv) still use") !=
           std::string::npos;
  }));
  EXPECT_TRUE(exists({"dd", "guarded"}));
  ASSERT_TRUE(kubectl({"delete", "pv", "e2e-guarded-pv"}).ok());
  EXPECT_TRUE(gone("the DriverDeployment is deleted", {"dd", "guarded"}));
  EXPECT_TRUE(gone("its CSIDriver is deleted", {"csidriver", driverOf("guarded")}));
  EXPECT_TRUE(gone("its DaemonSet is deleted", {"ds", "guarded-node", "-n", "csi-guarded"}));
}

TEST_F(Lifecycle, ForceDeleteDeletesAnywayWithAWarning) {
  ASSERT_TRUE(created("forced"));
  ASSERT_TRUE(apply(persistentVolume("e2e-forced-pv", driverOf("forced"))));
  ASSERT_TRUE(waitFor("the webhook sees the volume", 30s, [&](std::string& seen) {
    const auto r = kubectl({"delete", "dd", "forced", "--dry-run=server"});
    seen = r.out + r.err;
    return !r.ok();
  }));
  ASSERT_TRUE(kubectl({"annotate", "dd", "forced", "csiop.dev/force-delete=true"}).ok());
  const auto r = kubectl({"delete", "dd", "forced", "--wait=true", "--timeout=60s"});
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_NE(r.err.find("Warning: deleting driver forced.csi.k8s.io although 1 PersistentVolume "
                       "(e2e-forced-pv) still use it (csiop.dev/force-delete=true)"),
            std::string::npos)
      << r;
  EXPECT_TRUE(gone("the CSIDriver is deleted", {"csidriver", driverOf("forced")}));
  EXPECT_TRUE(exists({"pv", "e2e-forced-pv"})); // volumes are never the operator's to delete
  EXPECT_NE(eventReasons("forced").find("DeletionForced"), std::string::npos);
  kubectl({"delete", "pv", "e2e-forced-pv"});
}

TEST_F(Lifecycle, OrphanIsNeverBlocked) {
  ASSERT_TRUE(created("orphaned", "  deletionPolicy: Orphan\n"));
  ASSERT_TRUE(apply(persistentVolume("e2e-orphaned-pv", driverOf("orphaned"))));
  std::this_thread::sleep_for(2s); // the webhook's caches see the volume
  const auto r = kubectl({"delete", "dd", "orphaned", "--wait=true", "--timeout=60s"});
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_TRUE(exists({"ds", "orphaned-node", "-n", "csi-orphaned"}));
  EXPECT_TRUE(exists({"csidriver", driverOf("orphaned")}));
  kubectl({"delete", "pv", "e2e-orphaned-pv"});
  kubectl({"delete", "csidriver", driverOf("orphaned")});
}

TEST_F(Lifecycle, PauseStopsEveryWriteAndResumingConvergesAtOnce) {
  ASSERT_TRUE(created("paused"));
  ASSERT_TRUE(
      kubectl({"patch", "dd", "paused", "--type=merge", "-p", R"({"spec":{"paused":true}})"}).ok());
  ASSERT_TRUE(waitFor("Paused is True", 30s, [&](std::string& seen) {
    seen = conditionField("paused", "Paused", "status");
    return seen == "True" && conditionField("paused", "Paused", "reason") == "Paused";
  }));
  const auto printed = kubectl({"get", "dd", "paused"});
  EXPECT_NE(printed.out.find("PAUSED"), std::string::npos) << printed;
  EXPECT_NE(printed.out.find("true"), std::string::npos) << printed;

  // The status write and the Event land, and what earlier tests set off (a finalizer's deletes
  // and Events of their DriverDeployments) is over: only this one's writes are counted.
  ASSERT_TRUE(op->waitForNoWrites(3s, 60s)) << "the operator kept writing";
  const std::map<std::string, double> before = op->writesByResource();
  ASSERT_TRUE(kubectl({"delete", "ds", "paused-node", "-n", "csi-paused"}).ok());
  ASSERT_TRUE(kubectl({"patch", "dd", "paused", "--type=json", "-p",
                       R"([{"op":"add","path":"/spec/driver/args/-","value":"--paused-edit"}])"})
                  .ok());
  std::this_thread::sleep_for(8s);
  EXPECT_FALSE(exists({"ds", "paused-node", "-n", "csi-paused"}))
      << "a paused DriverDeployment's DaemonSet was recreated";
  // Only the status (the new generation observed) was written. (The webhook's
  // SubjectAccessReviews for the edit are questions, not writes: the metric leaves them out.)
  std::map<std::string, double> written = op->writesByResource();
  for (const auto& [resource, count] : before) {
    written[resource] -= count;
  }
  for (const auto& [resource, count] : written) {
    if (resource == "driverdeployments") {
      EXPECT_EQ(count, 1) << "status writes while paused";
    } else {
      EXPECT_EQ(count, 0) << "writes to " << resource << " while paused";
    }
  }
  EXPECT_EQ(kubectl({"get", "dd", "paused", "-o", "jsonpath={.status.observedGeneration}"}).out,
            kubectl({"get", "dd", "paused", "-o", "jsonpath={.metadata.generation}"}).out);

  ASSERT_TRUE(
      kubectl({"patch", "dd", "paused", "--type=merge", "-p", R"({"spec":{"paused":false}})"})
          .ok());
  EXPECT_TRUE(waitFor("resuming recreates the DaemonSet with the edit, at once", 10s,
                      [&](std::string& seen) {
                        seen = dsArgs("paused");
                        return seen.find("--paused-edit") != std::string::npos;
                      }));
  EXPECT_TRUE(waitFor("Paused is False (Resumed)", 10s, [&](std::string& seen) {
    seen = conditionField("paused", "Paused", "reason");
    return conditionField("paused", "Paused", "status") == "False" && seen == "Resumed";
  }));
  EXPECT_NE(eventReasons("paused").find("Resumed"), std::string::npos);
}

TEST_F(Lifecycle, DeletingAPausedDriverDeploymentWaitsForTheResume) {
  ASSERT_TRUE(
      kubectl({"patch", "dd", "paused", "--type=merge", "-p", R"({"spec":{"paused":true}})"}).ok());
  const auto r = kubectl({"delete", "dd", "paused", "--wait=false"});
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_NE(r.err.find("Warning: spec.paused is true: the deletion waits until it is false"),
            std::string::npos)
      << r;
  ASSERT_TRUE(waitFor("Paused says the deletion waits", 30s, [&](std::string& seen) {
    seen = conditionField("paused", "Paused", "reason");
    return seen == "DeletionPaused";
  }));
  std::this_thread::sleep_for(3s);
  EXPECT_TRUE(exists({"dd", "paused"}));
  EXPECT_TRUE(exists({"ds", "paused-node", "-n", "csi-paused"}));
  ASSERT_TRUE(
      kubectl({"patch", "dd", "paused", "--type=merge", "-p", R"({"spec":{"paused":false}})"})
          .ok());
  EXPECT_TRUE(gone("resuming lets the deletion complete", {"dd", "paused"}, 30s));
  EXPECT_TRUE(gone("with its DaemonSet", {"ds", "paused-node", "-n", "csi-paused"}));
}

TEST_F(Lifecycle, AnUnmanagedChildIsLeftAloneReportedAndManagedAgainWhenUnmarked) {
  ASSERT_TRUE(created("handsoff"));
  ASSERT_TRUE(
      kubectl({"annotate", "ds", "handsoff-node", "-n", "csi-handsoff", "csiop.dev/unmanaged=true"})
          .ok());
  ASSERT_TRUE(kubectl({"patch", "dd", "handsoff", "--type=json", "-p",
                       R"([{"op":"add","path":"/spec/driver/args/-","value":"--edit-1"}])"})
                  .ok());
  ASSERT_TRUE(waitFor("status lists the DaemonSet as unmanaged", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "dd", "handsoff", "-o", "jsonpath={.status.unmanaged}"}).out;
    return seen == R"([{"kind":"DaemonSet","name":"handsoff-node","namespace":"csi-handsoff"}])";
  }));
  EXPECT_EQ(dsArgs("handsoff").find("--edit-1"), std::string::npos) << "an unmanaged child changed";
  // An unknown value: still left alone, and said.
  ASSERT_TRUE(kubectl({"annotate", "ds", "handsoff-node", "-n", "csi-handsoff",
                       "csiop.dev/unmanaged=yes", "--overwrite"})
                  .ok());
  EXPECT_TRUE(waitFor("Degraded names the bad annotation", 30s, [&](std::string& seen) {
    seen = conditionField("handsoff", "Degraded", "message");
    return conditionField("handsoff", "Degraded", "reason") == "InvalidAnnotation" &&
           seen.find("annotation csiop.dev/unmanaged on DaemonSet csi-handsoff/handsoff-node is "
                     "\"yes\", not \"true\" or \"false\"; left unmanaged") != std::string::npos;
  }));
  EXPECT_EQ(dsArgs("handsoff").find("--edit-1"), std::string::npos);

  ASSERT_TRUE(
      kubectl({"annotate", "ds", "handsoff-node", "-n", "csi-handsoff", "csiop.dev/unmanaged-"})
          .ok());
  EXPECT_TRUE(waitFor("removing the annotation resumes management", 30s, [&](std::string& seen) {
    seen = dsArgs("handsoff");
    return seen.find("--edit-1") != std::string::npos;
  }));
  EXPECT_TRUE(waitFor("the status no longer lists it", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "dd", "handsoff", "-o", "jsonpath={.status.unmanaged}"}).out;
    return seen.empty() && conditionField("handsoff", "Degraded", "reason") != "InvalidAnnotation";
  }));
}

TEST_F(Lifecycle, AnUnmanagedChildIsOrphanedNotDeletedWithItsDriverDeployment) {
  ASSERT_TRUE(
      kubectl({"annotate", "ds", "handsoff-node", "-n", "csi-handsoff", "csiop.dev/unmanaged=true"})
          .ok());
  std::this_thread::sleep_for(2s);
  const auto r = kubectl({"delete", "dd", "handsoff", "--wait=true", "--timeout=60s"});
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_TRUE(gone("the controller StatefulSet is deleted",
                   {"statefulset", "handsoff-controller", "-n", "csi-handsoff"}));
  const Json ds = kubectlJson({"get", "ds", "handsoff-node", "-n", "csi-handsoff"});
  EXPECT_FALSE(ds["metadata"].contains("ownerReferences")) << ds["metadata"].dump();
  EXPECT_FALSE(ds["metadata"]["labels"].contains("csiop.dev/driverdeployment"));
  std::this_thread::sleep_for(3s); // no garbage collection follows
  EXPECT_TRUE(exists({"ds", "handsoff-node", "-n", "csi-handsoff"}));
  EXPECT_NE(eventReasons("handsoff").find("Orphaned"), std::string::npos);
  kubectl({"delete", "ds", "handsoff-node", "-n", "csi-handsoff"});
}

TEST_F(Lifecycle, AChangedConfigMapOrSecretRollsTheNodePlugin) {
  ASSERT_TRUE(created("configured", R"(  node:
    driver:
      env:
      - name: LEVEL
        valueFrom: {configMapKeyRef: {name: driver-settings, key: level}}
      - name: TOKEN
        valueFrom: {secretKeyRef: {name: driver-token, key: token}}
)"));
  // Neither exists yet: said, and the workload is there all the same (its pods wait for them).
  EXPECT_TRUE(
      waitFor("Degraded names the missing ConfigMap and Secret", 30s, [](std::string& seen) {
        seen = conditionField("configured", "Degraded", "message");
        return conditionField("configured", "Degraded", "reason") == "ConfigUnavailable" &&
               seen.find("ConfigMap csi-configured/driver-settings (referenced by "
                         "the node plugin) does not exist") != std::string::npos &&
               seen.find("Secret csi-configured/driver-token") != std::string::npos;
      }));
  const std::string absent = dsConfigHash("configured");
  ASSERT_EQ(absent.size(), 32u);

  ASSERT_TRUE(apply(R"(apiVersion: v1
kind: ConfigMap
metadata: {name: driver-settings, namespace: csi-configured}
data: {level: "1"}
---
apiVersion: v1
kind: Secret
metadata: {name: driver-token, namespace: csi-configured}
stringData: {token: first}
)"));
  std::string first;
  EXPECT_TRUE(waitFor("the pod template gets the content hash", 30s, [&](std::string& seen) {
    first = seen = dsConfigHash("configured");
    return first.size() == 32 && first != absent &&
           conditionField("configured", "Degraded", "reason") != "ConfigUnavailable";
  }));
  const std::string generation = kubectl({"get", "ds", "configured-node", "-n", "csi-configured",
                                          "-o", "jsonpath={.metadata.generation}"})
                                     .out;
  // Polling finds nothing new: nothing changes (three poll periods).
  ASSERT_TRUE(
      kubectl({"label", "configmap", "driver-settings", "-n", "csi-configured", "x=y"}).ok());
  std::this_thread::sleep_for(6s);
  EXPECT_EQ(dsConfigHash("configured"), first) << "metadata is not content";
  EXPECT_EQ(kubectl({"get", "ds", "configured-node", "-n", "csi-configured", "-o",
                     "jsonpath={.metadata.generation}"})
                .out,
            generation);

  ASSERT_TRUE(kubectl({"patch", "configmap", "driver-settings", "-n", "csi-configured",
                       "--type=merge", "-p", R"({"data":{"level":"2"}})"})
                  .ok());
  std::string second;
  EXPECT_TRUE(waitFor("a changed ConfigMap rolls the DaemonSet", 30s, [&](std::string& seen) {
    second = seen = dsConfigHash("configured");
    return second != first;
  }));
  ASSERT_TRUE(kubectl({"patch", "secret", "driver-token", "-n", "csi-configured", "--type=merge",
                       "-p", R"({"stringData":{"token":"s3cr3t-second"}})"})
                  .ok());
  EXPECT_TRUE(waitFor("a changed Secret rolls it too", 30s, [&](std::string& seen) {
    seen = dsConfigHash("configured");
    return seen != second && seen != first;
  }));
  // The hash says nothing of the content, and the operator kept none: only the hash is there.
  const Json ds = kubectlJson({"get", "ds", "configured-node", "-n", "csi-configured"});
  EXPECT_EQ(ds.dump().find("s3cr3t"), std::string::npos);
}

// node -> "pod@controller-revision-hash" of the DriverDeployment's node plugin pods.
std::map<std::string, std::string> pluginPods(const std::string& dd) {
  std::map<std::string, std::string> out;
  const Json pods = kubectlJson(
      {"get", "pods", "-n", "csi-" + dd, "-l", "app.kubernetes.io/component=node-plugin"});
  for (const auto& p : pods["items"]) {
    if (!p["metadata"].contains("deletionTimestamp")) {
      out[p["spec"].value("nodeName", "")] =
          p["metadata"].value("name", "") + "@" +
          p["metadata"]["labels"].value("controller-revision-hash", "");
    }
  }
  return out;
}

TEST_F(Lifecycle, WhenVolumesUnusedReplacesPluginsOnlyWhereNoVolumeIsInUseOrTheAdminAllows) {
  ASSERT_TRUE(created("rolling", "  node: {updateStrategy: {type: WhenVolumesUnused}}\n"));
  registerDriverOnNodes(driverOf("rolling"));
  const Json nodes = kubectlJson({"get", "nodes"});
  ASSERT_GE(nodes["items"].size(), 2u);
  const std::string busy = nodes["items"][0]["metadata"]["name"];
  const std::string idle = nodes["items"][1]["metadata"]["name"];
  // A pod on `busy` using a claim bound to a volume of the driver.
  ASSERT_TRUE(apply(persistentVolume("e2e-rolling-pv", driverOf("rolling")) +
                    "  claimRef: {namespace: default, name: rolling-claim}\n"));
  ASSERT_TRUE(apply("apiVersion: v1\nkind: Pod\nmetadata: {name: e2e-rolling-user, namespace: "
                    "default}\nspec:\n  nodeName: " +
                    busy +
                    "\n  containers: [{name: app, image: busybox}]\n  volumes: [{name: data, "
                    "persistentVolumeClaim: {claimName: rolling-claim}}]\n"));
  std::map<std::string, std::string> before;
  ASSERT_TRUE(waitFor("a node plugin pod on each node, ready", 60s, [&](std::string& seen) {
    before = pluginPods("rolling");
    seen = ::testing::PrintToString(before);
    return before.size() == nodes["items"].size() && ddCondition("rolling", "Ready") == "True";
  }));
  EXPECT_EQ(kubectl({"get", "ds", "rolling-node", "-n", "csi-rolling", "-o",
                     "jsonpath={.spec.updateStrategy.type}"})
                .out,
            "OnDelete");

  ASSERT_TRUE(kubectl({"patch", "dd", "rolling", "--type=json", "-p",
                       R"([{"op":"add","path":"/spec/driver/args/-","value":"--v=6"}])"})
                  .ok());
  EXPECT_TRUE(waitFor(
      "the idle node's plugin is replaced, the busy one's waits", 60s, [&](std::string& seen) {
        const auto now = pluginPods("rolling");
        seen = ::testing::PrintToString(now) +
               kubectl({"get", "dd", "rolling", "-o", "jsonpath={.status.nodes.waiting}"}).out;
        return now.count(idle) && now.at(idle) != before.at(idle) && now.count(busy) &&
               now.at(busy) == before.at(busy) &&
               seen.find("\"reason\":\"VolumesInUse\"") != std::string::npos &&
               seen.find("default/e2e-rolling-user") != std::string::npos;
      }));
  // RollingOut until the idle node's new plugin is ready; then only the waiting one is left.
  EXPECT_TRUE(waitFor("Progressing says a node plugin update waits", 30s, [&](std::string& seen) {
    seen = conditionField("rolling", "Progressing", "reason");
    return seen == "NodePluginUpdateWaiting";
  }));

  // An annotation value that is not a boolean: said, and the plugin still waits.
  ASSERT_TRUE(kubectl({"annotate", "node", busy, "csiop.dev/allow-node-plugin-update=yes"}).ok());
  EXPECT_TRUE(waitFor("the waiting node reports the bad annotation", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "dd", "rolling", "-o", "jsonpath={.status.nodes.waiting}"}).out;
    return seen.find("\"reason\":\"InvalidAnnotation\"") != std::string::npos;
  }));
  EXPECT_EQ(pluginPods("rolling").at(busy), before.at(busy));
  // The admin allows it: replaced despite the volume.
  ASSERT_TRUE(
      kubectl({"annotate", "node", busy, "csiop.dev/allow-node-plugin-update=true", "--overwrite"})
          .ok());
  EXPECT_TRUE(
      waitFor("the allowed node's plugin is replaced; nothing waits", 60s, [&](std::string& seen) {
        const auto now = pluginPods("rolling");
        seen = ::testing::PrintToString(now) +
               kubectl({"get", "dd", "rolling", "-o", "jsonpath={.status.nodes}"}).out;
        return now.count(busy) && now.at(busy) != before.at(busy) &&
               seen.find("waiting") == std::string::npos &&
               seen.find("\"updated\":" + std::to_string(nodes["items"].size())) !=
                   std::string::npos;
      }));
  const auto events = kubectl({"get", "events", "-n", "default", "--field-selector",
                               "involvedObject.name=rolling,reason=NodePluginReplaced", "-o",
                               "jsonpath={.items[*].message}"});
  EXPECT_NE(events.out.find("on node " + idle + ": no pod on the node uses a volume of the driver"),
            std::string::npos)
      << events;
  EXPECT_NE(events.out.find("on node " + busy +
                            ": the node is annotated csiop.dev/allow-node-plugin-update=true"),
            std::string::npos)
      << events;
}

} // namespace
} // namespace csiop::e2e
