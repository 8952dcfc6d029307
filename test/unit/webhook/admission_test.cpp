// The admission decision, rule by rule.
#include <gtest/gtest.h>

#include "review_fixtures.hpp"

namespace csiop::webhook {
namespace {

using namespace testing;
using namespace std::chrono_literals;

using Admission = WebhookTest;

TEST_F(Admission, AValidNewDriverDeploymentIsAllowed) {
  const Decision d = decideOn(request("CREATE", example("hostpath.yaml")));
  EXPECT_TRUE(d.allowed) << d.message;
  EXPECT_TRUE(d.warnings.empty());
}

TEST_F(Admission, AnInvalidSpecIsDeniedWithEveryErrorAndItsPath) {
  Json dd = example("hostpath.yaml");
  dd["spec"]["driverName"] = "Bad_Name";
  dd["spec"]["csiDriver"]["fsGroupPolicy"] = "Foo";
  const Decision d = decideOn(request("CREATE", dd));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.code, 422);
  EXPECT_EQ(d.reason, "Invalid");
  EXPECT_EQ(d.message.rfind("DriverDeployment \"hostpath\" is invalid: spec.driverName: Invalid "
                            "value: \"Bad_Name\": a lowercase RFC 1123 subdomain",
                            0),
            0u)
      << d.message;
  EXPECT_NE(d.message.find("; spec.csiDriver.fsGroupPolicy: Unsupported value: \"Foo\": "
                           "supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\""),
            std::string::npos)
      << d.message;
}

TEST_F(Admission, ValidationWarningsAreReturnedWithoutTheObjectPrefix) {
  Json dd = example("hostpath.yaml");
  dd["spec"].erase("controller"); // attachRequired stays true: nobody will attach
  const Decision d = decideOn(request("CREATE", dd));
  EXPECT_TRUE(d.allowed) << d.message;
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].rfind("spec.csiDriver.attachRequired is true", 0), 0u) << d.warnings[0];
}

TEST_F(Admission, AFieldTheApiServerDoesNotKnowIsDeniedWithTheVersionItNeeds) {
  Json dd = example("hostpath.yaml");
  dd["spec"]["csiDriver"]["preventPodSchedulingIfMissing"] = true;
  cluster.serverMinor = 36;
  EXPECT_TRUE(decideOn(request("CREATE", dd)).allowed);
  cluster.serverMinor = std::nullopt;
  EXPECT_TRUE(decideOn(request("CREATE", dd)).allowed) << "unknown version: nothing to say";
  cluster.serverMinor = 35;
  const Decision d = decideOn(request("CREATE", dd));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.code, 422);
  EXPECT_NE(d.message.find("spec.csiDriver.preventPodSchedulingIfMissing: Forbidden: needs "
                           "Kubernetes 1.36 or newer: the API server is 1.35, whose CSIDriver "
                           "does not have the field"),
            std::string::npos)
      << d.message;
  dd["spec"]["csiDriver"].erase("preventPodSchedulingIfMissing");
  EXPECT_TRUE(decideOn(request("CREATE", dd)).allowed);
}

TEST_F(Admission, ChangingTheDriverNameIsDenied) {
  const Json before = hostpath("hostpath", "hostpath.csi.k8s.io");
  const Json after = hostpath("hostpath", "other.csi.k8s.io");
  cluster.driverDeployments["hostpath"] = "hostpath.csi.k8s.io";
  const Decision d = decideOn(request("UPDATE", after, before));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.code, 422);
  EXPECT_NE(d.message.find("spec.driverName: Invalid value: \"other.csi.k8s.io\": field is "
                           "immutable (it was \"hostpath.csi.k8s.io\""),
            std::string::npos)
      << d.message;
}

TEST_F(Admission, AnUpdateOfTheHolderItselfIsAllowed) {
  cluster.driverDeployments["hostpath"] = "hostpath.csi.k8s.io";
  Json after = example("hostpath.yaml");
  after["spec"]["driver"]["args"] = Json::array({"--v=2"});
  const Decision d = decideOn(request("UPDATE", after, example("hostpath.yaml")));
  EXPECT_TRUE(d.allowed) << d.message;
}

TEST_F(Admission, ADriverNameUsedByAnotherDriverDeploymentIsDeniedNamingIt) {
  cluster.driverDeployments["first"] = "hostpath.csi.k8s.io";
  const Decision d = decideOn(request("CREATE", hostpath("second", "hostpath.csi.k8s.io")));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.code, 403);
  EXPECT_EQ(d.reason, "Forbidden");
  EXPECT_EQ(d.message, "spec.driverName: Duplicate value: \"hostpath.csi.k8s.io\": already used "
                       "by DriverDeployment \"first\"; one driver name has one DriverDeployment");
}

TEST_F(Admission, TwoAdmissionsRacingAheadOfTheCacheAreCaughtByTheReservation) {
  ASSERT_TRUE(decideOn(request("CREATE", hostpath("first", "race.csi.k8s.io"))).allowed);
  // "first" is not in the cache yet.
  const Decision second = decideOn(request("CREATE", hostpath("second", "race.csi.k8s.io")));
  EXPECT_FALSE(second.allowed);
  EXPECT_NE(second.message.find("being claimed by DriverDeployment \"first\""), std::string::npos)
      << second.message;
  // The same DriverDeployment again (a retried apply) is not its own rival.
  EXPECT_TRUE(decideOn(request("CREATE", hostpath("first", "race.csi.k8s.io"))).allowed);
  // A reservation ends after its time (the cache has taken over by then, or the create failed).
  time.now += 61s;
  EXPECT_TRUE(decideOn(request("CREATE", hostpath("second", "race.csi.k8s.io"))).allowed);
}

TEST_F(Admission, DryRunAdmissionsReserveNothing) {
  Json r = request("CREATE", hostpath("first", "dry.csi.k8s.io"));
  r["dryRun"] = true;
  ASSERT_TRUE(decideOn(r).allowed);
  EXPECT_EQ(reservations.size(), 0u);
  EXPECT_TRUE(decideOn(request("CREATE", hostpath("second", "dry.csi.k8s.io"))).allowed);
}

TEST_F(Admission, AForeignCSIDriverIsDeniedUnlessAdoptionIsAskedFor) {
  cluster.csiDrivers["hostpath.csi.k8s.io"] = Json::parse(
      R"({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "hostpath.csi.k8s.io"}})");
  Decision d = decideOn(request("CREATE", example("hostpath.yaml")));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.code, 403);
  EXPECT_NE(d.message.find("CSIDriver \"hostpath.csi.k8s.io\" already exists and is not managed "
                           "by csi-operator"),
            std::string::npos)
      << d.message;
  EXPECT_NE(d.message.find("csiop.dev/adopt-csidriver=true"), std::string::npos) << d.message;

  Json adopting = example("hostpath.yaml");
  adopting["metadata"]["annotations"] = {{api::kAdoptAnnotation, "true"}};
  d = decideOn(request("CREATE", adopting));
  EXPECT_TRUE(d.allowed) << d.message;
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find("adopts it"), std::string::npos);
}

TEST_F(Admission, ACSIDriverOfThisOperatorIsNoCollision) {
  // Managed by the operator (owner label); whether it is this DriverDeployment's is the
  // reconciler's call, from the owner uid.
  cluster.csiDrivers["hostpath.csi.k8s.io"] = Json::parse(
      R"({"metadata": {"name": "hostpath.csi.k8s.io", "labels": {"csiop.dev/driverdeployment": "hostpath"}}})");
  EXPECT_TRUE(
      decideOn(request("UPDATE", example("hostpath.yaml"), example("hostpath.yaml"))).allowed);
}

TEST_F(Admission, DeleteAndConnectAreAllowed) {
  cluster.driverDeployments["other"] = "hostpath.csi.k8s.io";
  EXPECT_TRUE(decideOn(request("DELETE", nullptr, example("hostpath.yaml"))).allowed);
  EXPECT_TRUE(decideOn(request("CONNECT", nullptr)).allowed);
}

TEST_F(Admission, DeletingADriverWhoseVolumesAreInUseIsDeniedCountingAndNamingThem) {
  cluster.inUse["hostpath.csi.k8s.io"] = "2 PersistentVolumes (pv-a, pv-b)";
  const Decision d = decideOn(request("DELETE", nullptr, example("hostpath.yaml")));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.code, 403);
  EXPECT_EQ(d.reason, "Forbidden");
  EXPECT_EQ(
      d.message,
      "DriverDeployment \"hostpath\" is in use: 2 PersistentVolumes (pv-a, pv-b) use driver "
      "hostpath.csi.k8s.io, and would be stranded without it (nothing could detach, unmount "
      "or delete them). Delete them first, set spec.deletionPolicy: Orphan to leave the "
      "driver running unmanaged, or annotate csiop.dev/force-delete=true to delete it anyway");
  // Asked for the DriverDeployment and the namespace of its smoke tests (which do not count).
  EXPECT_EQ(cluster.inUseAskedFor, "hostpath in csi-hostpath");
  Json elsewhere = example("hostpath.yaml");
  elsewhere["spec"]["namespace"] = "storage";
  EXPECT_FALSE(decideOn(request("DELETE", nullptr, elsewhere)).allowed);
  EXPECT_EQ(cluster.inUseAskedFor, "hostpath in storage");
  // Another driver's volumes are no reason.
  cluster.inUse.clear();
  cluster.inUse["other.csi.k8s.io"] = "1 PersistentVolume (pv-c)";
  EXPECT_TRUE(decideOn(request("DELETE", nullptr, example("hostpath.yaml"))).allowed);
}

TEST_F(Admission, ForceDeleteOrphanAndARepeatedDeleteAreNotBlocked) {
  cluster.inUse["hostpath.csi.k8s.io"] = "1 VolumeAttachment (csi-1)";
  Json dd = example("hostpath.yaml");
  dd["metadata"]["annotations"] = {{"csiop.dev/force-delete", "true"}};
  Decision d = decideOn(request("DELETE", nullptr, dd));
  EXPECT_TRUE(d.allowed);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0], "deleting driver hostpath.csi.k8s.io although 1 VolumeAttachment "
                           "(csi-1) still use it (csiop.dev/force-delete=true)");

  dd["metadata"]["annotations"]["csiop.dev/force-delete"] = "yes";
  d = decideOn(request("DELETE", nullptr, dd));
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.message.find("(csiop.dev/force-delete is \"yes\", which is neither \"true\" nor "
                           "\"false\")"),
            std::string::npos)
      << d.message;

  dd["metadata"].erase("annotations");
  dd["spec"]["deletionPolicy"] = "Orphan";
  EXPECT_TRUE(decideOn(request("DELETE", nullptr, dd)).allowed);

  dd["spec"]["deletionPolicy"] = "Delete";
  dd["metadata"]["deletionTimestamp"] = "2026-11-25T10:00:00Z";
  EXPECT_TRUE(decideOn(request("DELETE", nullptr, dd)).allowed); // the finalizer holds it
}

TEST_F(Admission, DeletingAPausedDriverDeploymentWarnsThatItWaits) {
  Json dd = example("hostpath.yaml");
  dd["spec"]["paused"] = true;
  const Decision d = decideOn(request("DELETE", nullptr, dd));
  EXPECT_TRUE(d.allowed);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0], "spec.paused is true: the deletion waits until it is false");
}

TEST_F(Admission, AForceDeleteAnnotationThatIsNotABooleanIsInvalid) {
  Json dd = example("hostpath.yaml");
  dd["metadata"]["annotations"] = {{"csiop.dev/force-delete", "yes"}};
  const Decision d = decideOn(request("CREATE", dd));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.code, 422);
  EXPECT_EQ(d.message, "DriverDeployment \"hostpath\" is invalid: "
                       "metadata.annotations[csiop.dev/force-delete]: Unsupported value: \"yes\": "
                       "supported values: \"true\", \"false\"");
  dd["metadata"]["annotations"]["csiop.dev/force-delete"] = "false";
  EXPECT_TRUE(decideOn(request("CREATE", dd)).allowed);
}

TEST_F(Admission, AnUpdateOfADriverDeploymentBeingDeletedClaimsNothing) {
  // After an Orphan deletion the CSIDriver is no longer managed; the finalizer's removal (an
  // UPDATE) must not be refused as a foreign collision.
  cluster.csiDrivers["hostpath.csi.k8s.io"] =
      Json::parse(R"({"metadata": {"name": "hostpath.csi.k8s.io"}})");
  cluster.driverDeployments["other"] = "hostpath.csi.k8s.io";
  Json dd = example("hostpath.yaml");
  dd["metadata"]["deletionTimestamp"] = "2026-11-25T10:00:00Z";
  dd["metadata"]["finalizers"] = Json::array({"csiop.dev/cleanup"});
  Json without = dd;
  without["metadata"]["finalizers"] = Json::array();
  EXPECT_TRUE(decideOn(request("UPDATE", without, dd)).allowed);
  // Not being deleted: the same update is a collision.
  dd["metadata"].erase("deletionTimestamp");
  without["metadata"].erase("deletionTimestamp");
  EXPECT_FALSE(decideOn(request("UPDATE", without, dd)).allowed);
  // Still validated.
  Json bad = without;
  bad["metadata"]["deletionTimestamp"] = "2026-11-25T10:00:00Z";
  bad["spec"]["csiDriver"]["fsGroupPolicy"] = "Foo";
  EXPECT_EQ(decideOn(request("UPDATE", bad, dd)).code, 422);
}

TEST_F(Admission, PausingADriverDeploymentBeingDeletedWarnsThatTheDeletionWaits) {
  Json dd = example("hostpath.yaml");
  dd["metadata"]["deletionTimestamp"] = "2026-11-25T10:00:00Z";
  Json paused = dd;
  paused["spec"]["paused"] = true;
  cluster.driverDeployments["hostpath"] = "hostpath.csi.k8s.io";
  const Decision d = decideOn(request("UPDATE", paused, dd));
  EXPECT_TRUE(d.allowed) << d.message;
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find("the deletion waits, until spec.paused is false"),
            std::string::npos);
  EXPECT_TRUE(decideOn(request("UPDATE", dd, dd)).warnings.empty());
}

// The spec's warnings go to whoever changes the spec: not to a write that leaves it as it was
// (the operator adding its finalizer, someone labelling the object), which would only repeat
// them, and whose writer (the operator) would log and count them as its own.
TEST_F(Admission, TheSpecsWarningsComeWithChangesOfTheSpecOnly) {
  Json dd = example("hostpath.yaml");
  dd["spec"].erase("controller"); // attachRequired true without an attacher: warned
  const Decision created = decideOn(request("CREATE", dd));
  ASSERT_TRUE(created.allowed) << created.message;
  ASSERT_FALSE(created.warnings.empty());
  EXPECT_NE(created.warnings[0].find("no external-attacher"), std::string::npos)
      << created.warnings[0];
  cluster.driverDeployments["hostpath"] = "hostpath.csi.k8s.io";
  Json finalized = dd;
  finalized["metadata"]["finalizers"] = Json::array({"csiop.dev/cleanup"});
  finalized["metadata"]["labels"] = {{"team", "storage"}};
  EXPECT_TRUE(decideOn(request("UPDATE", finalized, dd)).warnings.empty());
  Json changed = finalized;
  changed["spec"]["driver"]["args"] = Json::array({"--v=4"});
  EXPECT_EQ(decideOn(request("UPDATE", changed, finalized)).warnings, created.warnings);
}

// An unknown field inside an embedded Kubernetes object (kept by the API server, which the CRD
// tells to preserve it) is answered as the writer asked for its own fields: Strict (kubectl's
// default) refuses it at its path, Warn (the API server's default, and no options) warns,
// Ignore says nothing. A write that leaves the spec as it was is not refused for it.
TEST_F(Admission, UnknownEmbeddedFieldsAreAnsweredAsTheWriterAsked) {
  Json dd = example("hostpath.yaml");
  dd["spec"]["driver"]["securityContext"] = {{"privileged", true},
                                             {"allowPrivilegeEscalaton", true}};
  const std::string field = "spec.driver.securityContext.allowPrivilegeEscalaton";
  const auto asked = [&](const char* validation) {
    Json r = request("CREATE", dd);
    if (validation != nullptr) {
      r["options"] = {{"fieldValidation", validation}};
    }
    return decideOn(r);
  };
  const Decision strict = asked("Strict");
  EXPECT_FALSE(strict.allowed);
  EXPECT_EQ(strict.code, 422);
  EXPECT_EQ(strict.message,
            "DriverDeployment \"hostpath\" is invalid: unknown field \"" + field + "\"");
  for (const char* validation : {"Warn", static_cast<const char*>(nullptr)}) {
    const Decision warned = asked(validation);
    EXPECT_TRUE(warned.allowed) << warned.message;
    EXPECT_EQ(warned.warnings,
              std::vector<std::string>{"unknown field \"" + field + "\" (ignored)"});
  }
  const Decision ignored = asked("Ignore");
  EXPECT_TRUE(ignored.allowed) << ignored.message;
  EXPECT_TRUE(ignored.warnings.empty());

  cluster.driverDeployments["hostpath"] = "hostpath.csi.k8s.io";
  Json labelled = dd;
  labelled["metadata"]["labels"] = {{"team", "storage"}};
  Json update = request("UPDATE", labelled, dd);
  update["options"] = {{"fieldValidation", "Strict"}};
  EXPECT_TRUE(decideOn(update).allowed);
}

TEST_F(Admission, OtherKindsAndOperationsAreRefused) {
  Json r = request("CREATE", example("hostpath.yaml"));
  r["kind"] = {{"group", ""}, {"version", "v1"}, {"kind", "ConfigMap"}};
  Decision d = decideOn(r);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.code, 400);
  EXPECT_EQ(d.message, "this webhook validates csiop.dev DriverDeployments, not ConfigMap");
  d = decideOn(request("PATCH", example("hostpath.yaml")));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.message, "unsupported operation \"PATCH\"");
  d = decideOn(request("CREATE", nullptr));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.message, "the AdmissionReview request has no object");
}

} // namespace
} // namespace csiop::webhook
