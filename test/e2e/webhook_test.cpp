// The admission webhook called by the real API server: a ValidatingWebhookConfiguration
// pointing at `csi-operator run --webhook-port` on 127.0.0.1 with a test CA. Its object
// selector limits it to DriverDeployments labelled csiop.dev/e2e-webhook=true, so other suites
// never meet it. One ordered suite (one ctest test): the cases build on each other.
#include <gtest/gtest.h>

#include <thread>

#include "harness.hpp"
#include "operator_process.hpp"

namespace csiop::e2e {
namespace {

const std::string kConfig = "csiop-e2e-webhook";

// A labelled variant of hostpathAs() so that the webhook sees it.
std::string labelled(const std::string& yaml) {
  std::string out = yaml;
  const std::string at = "metadata:\n";
  out.replace(out.find(at), at.size(), at + "  labels: {csiop.dev/e2e-webhook: \"true\"}\n");
  return out;
}

std::string sameDriverAs(const std::string& name, const std::string& driverName) {
  std::string yaml = labelled(hostpathAs(name));
  const std::string own = name + ".csi.k8s.io";
  yaml.replace(yaml.find("driverName: " + own), ("driverName: " + own).size(),
               "driverName: " + driverName);
  return yaml;
}

class Webhook : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    applyCrds();
    certDir = artifactDirectory("webhook-certs");
    ASSERT_TRUE(issueCertificate("first-ca"));
    port = freeLoopbackPort();
    op = startOperator(port);
    ASSERT_TRUE(op->waitReady(60s));
    registerWebhook("Fail", readFile(certDir / "first-ca.crt"));
  }
  static void TearDownTestSuite() {
    kubectl({"delete", "validatingwebhookconfiguration", kConfig, "--ignore-not-found"});
    // While an operator still runs to take the finalizers off.
    for (const char* dd : {"late", "copy", "adopter", "hostpath"}) {
      deleteDd(dd);
    }
    kubectl({"delete", "csidriver", "foreign.csi.example.com", "--ignore-not-found"});
    kubectl({"delete", "namespace", "csi-hostpath", "csi-adopter", "--ignore-not-found",
             "--wait=false"});
    if (op) {
      op->stop();
    }
  }
  void TearDown() override {
    if (HasFailure() && op) {
      std::cerr << "operator log:\n" << op->log() << "\n";
    }
  }

  static std::unique_ptr<OperatorProcess> startOperator(int webhookPort) {
    return std::make_unique<OperatorProcess>(
        "webhook-operator-" + std::to_string(++started) + ".log",
        std::vector<std::string>{"--webhook-port", std::to_string(webhookPort), "--webhook-host",
                                 "127.0.0.1", "--webhook-cert-dir", certDir.string()});
  }

  static bool issueCertificate(const std::string& ca) {
    return issueServingCertificate(certDir, ca);
  }

  static void registerWebhook(const std::string& failurePolicy, const std::string& caBundle) {
    registerLocalWebhook(kConfig, port, caBundle, "csiop.dev/e2e-webhook", {"CREATE", "UPDATE"},
                         failurePolicy);
  }

  // `kubectl apply` of `yaml`; the combined output.
  static RunResult apply(const std::string& yaml, bool dryRun = false) {
    std::vector<std::string> args = {"apply", "-f", "-"};
    if (dryRun) {
      args.push_back("--dry-run=server");
    }
    return kubectl(args, yaml);
  }

  // Until the API server's webhook configuration is in effect, a denial waits.
  static bool deniedWith(const std::string& yaml, const std::string& message) {
    return waitFor("the webhook denies with: " + message, 30s, [&](std::string& seen) {
      const auto r = apply(yaml, true);
      seen = r.out + r.err;
      return !r.ok() && seen.find(message) != std::string::npos;
    });
  }

  static inline std::filesystem::path certDir;
  static inline int port = 0;
  static inline int started = 0;
  static inline std::unique_ptr<OperatorProcess> op;
};

TEST_F(Webhook, AForeignCSIDriverCollisionIsRejected) {
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, R"(apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: foreign.csi.example.com}
spec: {attachRequired: false}
)")
                  .ok());
  EXPECT_TRUE(deniedWith(
      sameDriverAs("adopter", "foreign.csi.example.com"),
      "admission webhook \"validate.csiop.dev\" denied the request: spec.driverName: Forbidden: "
      "CSIDriver \"foreign.csi.example.com\" already exists and is not managed by csi-operator"));
}

TEST_F(Webhook, AValidDriverDeploymentIsAdmitted) {
  const auto r = apply(labelled(hostpathAs("hostpath")));
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_TRUE(waitFor("hostpath's CSIDriver is claimed", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "csidriver", "hostpath.csi.k8s.io", "-o", "name"}).out;
    return !seen.empty();
  }));
}

TEST_F(Webhook, ASecondDriverDeploymentWithTheSameDriverNameIsRejected) {
  const auto r = apply(sameDriverAs("copy", "hostpath.csi.k8s.io"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.err.find("admission webhook \"validate.csiop.dev\" denied the request: "
                       "spec.driverName: Duplicate value: \"hostpath.csi.k8s.io\": already used "
                       "by DriverDeployment \"hostpath\""),
            std::string::npos)
      << r;
  EXPECT_FALSE(exists({"dd", "copy"}));
}

// A flag copied from an older manifest: node-driver-registrar dropped klog's --logtostderr in
// v2.11.0, so the default v2.17.0 would exit at start. Refused at the argument; a node plugin
// without a PriorityClass is admitted with a warning.
TEST_F(Webhook, ASidecarFlagItsReleaseDoesNotAcceptIsRejectedAtTheArgument) {
  const std::string dd = labelled(R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata:
  name: old-flags
spec:
  driverName: old-flags.csi.example.com
  driver: {image: registry.k8s.io/sig-storage/hostpathplugin:v1.17.0}
  node:
    priorityClassName: ""
    registrar: {args: [--v=2, --logtostderr]}
)");
  EXPECT_TRUE(deniedWith(dd, "admission webhook \"validate.csiop.dev\" denied the request: "
                             "DriverDeployment \"old-flags\" is invalid: "
                             "spec.node.registrar.args[1]: Invalid value: \"--logtostderr\": "
                             "csi-node-driver-registrar v2.17.0 has no flag --logtostderr "
                             "(\"flag provided but not defined\": the container exits at start; "
                             "csi-node-driver-registrar v2.10.1 was the last release with it, "
                             "v2.11.0 the first without)"));
  std::string fixed = dd;
  fixed.replace(fixed.find(", --logtostderr"), 15, "");
  const auto r = apply(fixed, true);
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_NE(r.err.find("Warning: spec.node.priorityClassName is empty"), std::string::npos) << r;
}

// A misspelled field in an embedded securityContext: the API server keeps it in the
// DriverDeployment (the CRD preserves the subtree), so the webhook answers for it as kubectl
// asked: refused at its path under kubectl's default (--validate=strict sends fieldValidation
// Strict), admitted with a warning under --validate=warn. A value of the wrong type is refused
// either way.
TEST_F(Webhook, EmbeddedFieldsAreAnsweredAsKubectlAsked) {
  const std::string dd = labelled(R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata:
  name: typo
spec:
  driverName: typo.csi.example.com
  driver:
    image: registry.k8s.io/sig-storage/hostpathplugin:v1.17.0
    securityContext: {privileged: true, allowPrivilegeEscalaton: true}
)");
  EXPECT_TRUE(deniedWith(dd, "admission webhook \"validate.csiop.dev\" denied the request: "
                             "DriverDeployment \"typo\" is invalid: unknown field "
                             "\"spec.driver.securityContext.allowPrivilegeEscalaton\""));
  const auto warned = kubectl({"apply", "--dry-run=server", "--validate=warn", "-f", "-"}, dd);
  ASSERT_TRUE(warned.ok()) << warned;
  EXPECT_NE(warned.err.find("Warning: unknown field "
                            "\"spec.driver.securityContext.allowPrivilegeEscalaton\" (ignored)"),
            std::string::npos)
      << warned;
  std::string wrongType = dd;
  wrongType.replace(wrongType.find("allowPrivilegeEscalaton: true"), 29,
                    "capabilities: {add: SYS_ADMIN}");
  const auto refused =
      kubectl({"apply", "--dry-run=server", "--validate=warn", "-f", "-"}, wrongType);
  EXPECT_FALSE(refused.ok()) << refused;
  EXPECT_NE(refused.err.find("spec.driver.securityContext.capabilities.add: Invalid value: "
                             "\"SYS_ADMIN\""),
            std::string::npos)
      << refused;
}

TEST_F(Webhook, ChangingTheDriverNameIsRejected) {
  const auto r = kubectl({"patch", "dd", "hostpath", "--type=merge", "-p",
                          R"({"spec": {"driverName": "renamed.csi.k8s.io"}})"});
  EXPECT_FALSE(r.ok()) << r;
  // The CRD's CEL rule answers before any webhook is called; the webhook's own check of the
  // same rule is covered by the unit tests.
  EXPECT_NE(r.err.find("driverName is immutable"), std::string::npos) << r;
}

TEST_F(Webhook, AdoptionOfAForeignCSIDriverIsAdmittedWhenAskedFor) {
  std::string yaml = sameDriverAs("adopter", "foreign.csi.example.com");
  const auto cut = [&](const std::string& from, const std::string& to) {
    yaml.replace(yaml.find(from), from.size(), to);
  };
  cut("metadata:\n", "metadata:\n  annotations: {csiop.dev/adopt-csidriver: \"true\"}\n");
  // The foreign CSIDriver has attachRequired false; the adopter wants the same.
  cut("attachRequired: true", "attachRequired: false");
  cut("    attacher:\n      enabled: true\n", "");
  const auto r = apply(yaml);
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_NE(r.err.find("adopts it"), std::string::npos) << "the warning is shown\n" << r;
  const std::string uid = kubectl({"get", "dd", "adopter", "-o", "jsonpath={.metadata.uid}"}).out;
  EXPECT_TRUE(waitFor("the operator adopts the CSIDriver", 30s, [&](std::string& seen) {
    seen = kubectl({"get", "csidriver", "foreign.csi.example.com", "-o",
                    "jsonpath={.metadata.annotations.csiop\\.dev/owner-uid}"})
               .out;
    return seen == uid;
  }));
}

// The confused deputy: a DriverDeployment grants its author nothing they lack. Users as the
// API server sees them (kubectl --as): "dd-author" may write DriverDeployments and nothing else;
// "storage-admin" may also create CSIDrivers and is an admin of namespace csi-deputy (the
// built-in admin ClusterRole, bound there), enough for a node-only driver in that namespace.
// Every case is sent as a server-side dry run, as the user and as the cluster admin.
std::string deputyCase(const std::string& name, const std::string& namespace_,
                       const std::string& extra) {
  return labelled("apiVersion: csiop.dev/v1alpha1\n"
                  "kind: DriverDeployment\n"
                  "metadata:\n"
                  "  name: " +
                  name +
                  "\n"
                  "spec:\n"
                  "  driverName: " +
                  name +
                  ".csi.example.com\n"
                  "  namespace: " +
                  namespace_ +
                  "\n"
                  "  createNamespace: false\n"
                  "  csiDriver: {attachRequired: false, volumeLifecycleModes: [Ephemeral]}\n"
                  "  driver: {image: registry.example.com/driver:v1}\n" +
                  extra);
}

TEST_F(Webhook, ADriverDeploymentGrantsItsAuthorNothingTheyLack) {
  ASSERT_TRUE(kubectl({"apply", "-f", "-"}, R"(apiVersion: v1
kind: Namespace
metadata: {name: csi-deputy}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: csiop-e2e-dd-author}
rules:
- {apiGroups: [csiop.dev], resources: [driverdeployments], verbs: [get, list, watch, create, update, patch, delete]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: csiop-e2e-dd-author}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: csiop-e2e-dd-author}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: dd-author}
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: storage-admin}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: csiop-e2e-csidrivers}
rules:
- {apiGroups: [storage.k8s.io], resources: [csidrivers], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: csiop-e2e-csidrivers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: csiop-e2e-csidrivers}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: storage-admin}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: storage-admin, namespace: csi-deputy}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: storage-admin}
)")
                  .ok());
  const auto as = [&](const std::string& user, const std::string& yaml) {
    std::vector<std::string> args = {"apply", "--dry-run=server", "-f", "-"};
    if (!user.empty()) {
      args.push_back("--as=" + user);
    }
    return kubectl(args, yaml);
  };
  const auto refused = [&](const std::string& user, const std::string& yaml,
                           const std::string& lacking) {
    return waitFor(user + " is refused, lacking: " + lacking, 30s, [&](std::string& seen) {
      const auto r = as(user, yaml);
      seen = r.out + r.err;
      return !r.ok() && seen.find("may not do") != std::string::npos &&
             seen.find(lacking) != std::string::npos;
    });
  };
  const std::string plain = deputyCase("deputy-plain", "csi-deputy", "");
  EXPECT_TRUE(refused("dd-author", plain, "create csidrivers.storage.k8s.io cluster-wide"));
  const auto r = as("storage-admin", plain);
  EXPECT_TRUE(r.ok()) << "a user who may do it all is admitted\n" << r;

  struct Case {
    std::string what, yaml, lacking;
  };
  const std::vector<Case> cases = {
      {"a RoleBinding of cluster-admin to everyone through spec.objects",
       deputyCase("deputy-binding", "csi-deputy", R"(  objects:
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: RoleBinding
    metadata: {name: everyone-cluster-admin}
    roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
    subjects:
    - {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:authenticated"}
)"),
       "(or bind clusterroles.rbac.authorization.k8s.io \"cluster-admin\" in namespace "
       "csi-deputy)"},
      {"workloads in kube-system as one of its ServiceAccounts",
       deputyCase("deputy-sa", "kube-system", R"(  node:
    podTemplatePatch:
      spec: {serviceAccountName: clusterrole-aggregation-controller}
)"),
       "create daemonsets.apps in namespace kube-system"},
      {"get secrets aggregated into the view role",
       deputyCase("deputy-aggregate", "csi-deputy", R"(  aggregatedClusterRoles:
  - name: deputy-secrets
    aggregateTo: [view]
    rules: [{apiGroups: [""], resources: [secrets], verbs: [get]}]
)"),
       "update clusterroles.rbac.authorization.k8s.io \"view\" cluster-wide"},
      {"the secrets of kube-system", deputyCase("deputy-secrets", "csi-deputy", R"(  secretAccess:
  - {namespace: kube-system, serviceAccounts: [Node]}
)"),
       "get secrets in namespace kube-system"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_TRUE(refused("storage-admin", c.yaml, c.lacking));
    const auto admin = as("", c.yaml);
    EXPECT_TRUE(admin.ok()) << "the cluster admin keeps every ability\n" << admin;
  }
  kubectl({"delete", "clusterrolebinding", "csiop-e2e-dd-author", "csiop-e2e-csidrivers",
           "--ignore-not-found"});
  kubectl({"delete", "clusterrole", "csiop-e2e-dd-author", "csiop-e2e-csidrivers",
           "--ignore-not-found"});
  kubectl({"delete", "namespace", "csi-deputy", "--ignore-not-found", "--wait=false"});
}

TEST_F(Webhook, ARotatedCertificateKeepsAdmissionsWorkingWithoutARestart) {
  // Rotation as an admin does it: the bundle trusts both CAs, then the serving pair changes.
  ASSERT_TRUE(issueCertificate("second-ca"));
  registerWebhook("Fail", readFile(certDir / "first-ca.crt") + readFile(certDir / "second-ca.crt"));
  ASSERT_TRUE(waitFor("the operator reloads the certificate", 30s, [&](std::string& seen) {
    seen = op->log();
    return seen.find("webhook certificate reloaded") != std::string::npos;
  }));
  // Only the new CA now: admissions still reach the webhook.
  registerWebhook("Fail", readFile(certDir / "second-ca.crt"));
  EXPECT_TRUE(deniedWith(sameDriverAs("copy", "hostpath.csi.k8s.io"),
                         "already used by DriverDeployment \"hostpath\""));
  EXPECT_TRUE(op->process().running());
}

TEST_F(Webhook, TheStandaloneWebhookServesTheSameDecisions) {
  const int standalonePort = freeLoopbackPort();
  OperatorProcess standalone("webhook-standalone.log",
                             {"--webhook-port", std::to_string(standalonePort), "--webhook-host",
                              "127.0.0.1", "--webhook-cert-dir", certDir.string()},
                             "webhook");
  ASSERT_TRUE(standalone.waitReady(60s));
  const int operatorPort = port;
  port = standalonePort;
  registerWebhook("Fail", readFile(certDir / "second-ca.crt"));
  port = operatorPort;
  EXPECT_TRUE(deniedWith(sameDriverAs("copy", "hostpath.csi.k8s.io"),
                         "already used by DriverDeployment \"hostpath\""));
  EXPECT_NE(standalone.log().find("admission webhook listening on port " +
                                  std::to_string(standalonePort)),
            std::string::npos)
      << standalone.log();
  EXPECT_EQ(standalone.mutatingRequests(), 0) << "the standalone webhook writes nothing";
  EXPECT_TRUE(waitFor("the standalone webhook answered", 30s, [&](std::string& seen) {
    const double denied = standalone.metric("csiop_webhook_reviews_total{result=\"denied\"}");
    seen = std::to_string(denied);
    if (denied < 1) {
      apply(sameDriverAs("copy", "hostpath.csi.k8s.io"), true);
    }
    return denied >= 1;
  }));
  registerWebhook("Fail", readFile(certDir / "second-ca.crt"));
  EXPECT_EQ(standalone.stop(), 0);
}

TEST_F(Webhook, WithTheWebhookDownFailRejectsAndIgnoreLeavesItToTheReconciler) {
  ASSERT_EQ(op->stop(), 0);
  op.reset();
  EXPECT_TRUE(deniedWith(sameDriverAs("late", "hostpath.csi.k8s.io"),
                         "failed calling webhook \"validate.csiop.dev\""));
  registerWebhook("Ignore", readFile(certDir / "second-ca.crt"));
  // The operator reconciles again, without its webhook.
  op = startOperator(0);
  ASSERT_TRUE(op->waitReady(60s));
  ASSERT_TRUE(
      waitFor("the duplicate is admitted with the webhook down", 30s, [&](std::string& seen) {
        const auto r = apply(sameDriverAs("late", "hostpath.csi.k8s.io"));
        seen = r.out + r.err;
        return r.ok();
      }));
  EXPECT_TRUE(waitFor("the reconciler reports the conflict", 30s, [&](std::string& seen) {
    seen = ddCondition("late", "DriverNameConflict");
    return seen == "True";
  }));
  EXPECT_EQ(kubectl({"get", "csidriver", "hostpath.csi.k8s.io", "-o",
                     "jsonpath={.metadata.labels.csiop\\.dev/driverdeployment}"})
                .out,
            "hostpath")
      << "the first owner keeps its driver";
  EXPECT_FALSE(exists({"ds", "late-node", "-n", "csi-late"}));
}

} // namespace
} // namespace csiop::e2e
