#include <gtest/gtest.h>

#include <csiop/driverdeployment/apply_waves.hpp>
#include <csiop/driverdeployment/csi_driver_decision.hpp>
#include <csiop/driverdeployment/object_key.hpp>
#include <csiop/driverdeployment/ownership.hpp>
#include <csiop/driverdeployment/pruning.hpp>
#include <csiop/driverdeployment/unmanaged.hpp>

namespace csiop::driverdeployment {
namespace {

using api::Json;
using A = CSIDriverDecision::Action;

Json j(const char* text) {
  return Json::parse(text);
}

const Json kDesired = j(R"({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
  "metadata": {"name": "d.example.com", "annotations": {"csiop.dev/owner-uid": "u1"}},
  "spec": {"attachRequired": false, "podInfoOnMount": true, "volumeLifecycleModes": ["Persistent", "Ephemeral"]}})");

Json live(const char* spec, const char* uid = "u1") {
  Json l = j(
      R"({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d.example.com",
    "labels": {"csiop.dev/driverdeployment": "first"}}})");
  if (uid != nullptr) {
    l["metadata"]["annotations"] = {{"csiop.dev/owner-uid", uid}};
  }
  l["spec"] = Json::parse(spec);
  return l;
}

TEST(CSIDriverDecision, CreatesWhenAbsent) {
  EXPECT_EQ(decideCSIDriver(nullptr, kDesired, "u1").action, A::Create);
}

TEST(CSIDriverDecision, KeepsWhenOursAndEqualApartFromServerDefaults) {
  const Json l = live(
      R"({"attachRequired": false, "podInfoOnMount": true, "fsGroupPolicy": "ReadWriteOnceWithFSType",
    "volumeLifecycleModes": ["Ephemeral", "Persistent"], "requiresRepublish": false})");
  // The modes in another order are the same set: no recreate, but an apply
  // restores the order the operator writes.
  EXPECT_EQ(decideCSIDriver(&l, kDesired, "u1").action, A::Apply);
  const Json same = live(
      R"({"attachRequired": false, "podInfoOnMount": true, "volumeLifecycleModes": ["Persistent", "Ephemeral"]})");
  EXPECT_EQ(decideCSIDriver(&same, kDesired, "u1").action, A::Keep);
}

TEST(CSIDriverDecision, AppliesMutableChanges) {
  const Json l = live(
      R"({"attachRequired": false, "podInfoOnMount": false, "volumeLifecycleModes": ["Persistent", "Ephemeral"]})");
  EXPECT_EQ(decideCSIDriver(&l, kDesired, "u1").action, A::Apply);
}

TEST(CSIDriverDecision, RecreatesOnImmutableChanges) {
  Json l = live(
      R"({"attachRequired": true, "podInfoOnMount": true, "volumeLifecycleModes": ["Persistent", "Ephemeral"]})");
  auto d = decideCSIDriver(&l, kDesired, "u1");
  EXPECT_EQ(d.action, A::Recreate);
  EXPECT_EQ(d.detail, "attachRequired");
  // A CSIDriver created without the field has the server default (true).
  l = live(R"({"podInfoOnMount": true})");
  d = decideCSIDriver(&l, kDesired, "u1");
  EXPECT_EQ(d.action, A::Recreate);
  EXPECT_EQ(d.detail, "attachRequired and volumeLifecycleModes");
}

TEST(CSIDriverDecision, TheImmutableFieldsAreTheServersOwn) {
  using Fields = std::vector<std::string>;
  const Fields two = {"attachRequired", "volumeLifecycleModes"};
  const Fields four = {"attachRequired", "volumeLifecycleModes", "podInfoOnMount", "fsGroupPolicy"};
  EXPECT_EQ(csiDriverImmutableFields(std::nullopt), two) << "unknown: a current server";
  EXPECT_EQ(csiDriverImmutableFields(36), two);
  EXPECT_EQ(csiDriverImmutableFields(35), two);
  EXPECT_EQ(csiDriverImmutableFields(29), two) << "podInfoOnMount, fsGroupPolicy mutable since";
  EXPECT_EQ(csiDriverImmutableFields(28), four);
  EXPECT_EQ(csiDriverImmutableFields(18), four);

  EXPECT_EQ(serverMinorVersion("35"), 35);
  EXPECT_EQ(serverMinorVersion("28+"), 28) << "as some vendors' builds report it";
  EXPECT_EQ(serverMinorVersion(""), std::nullopt);
  EXPECT_EQ(serverMinorVersion("x"), std::nullopt);
  EXPECT_EQ(serverMinorVersion("35-eks"), std::nullopt);

  // podInfoOnMount changed: applied in place on 1.29+, a new CSIDriver before.
  const Json l = live(
      R"({"attachRequired": false, "podInfoOnMount": false, "volumeLifecycleModes": ["Persistent", "Ephemeral"]})");
  EXPECT_EQ(decideCSIDriver(&l, kDesired, "u1", false, csiDriverImmutableFields(35)).action,
            A::Apply);
  const auto old = decideCSIDriver(&l, kDesired, "u1", false, csiDriverImmutableFields(28));
  EXPECT_EQ(old.action, A::Recreate);
  EXPECT_EQ(old.detail, "podInfoOnMount");
  // fsGroupPolicy: the server's default when the live object has none.
  Json desired = kDesired;
  desired["spec"]["podInfoOnMount"] = false;
  desired["spec"]["fsGroupPolicy"] = "ReadWriteOnceWithFSType";
  EXPECT_EQ(decideCSIDriver(&l, desired, "u1", false, csiDriverImmutableFields(28)).action,
            A::Apply);
  desired["spec"]["fsGroupPolicy"] = "File";
  EXPECT_EQ(decideCSIDriver(&l, desired, "u1", false, csiDriverImmutableFields(28)).detail,
            "fsGroupPolicy");
}

TEST(CSIDriverDecision, TheClaimCarriesTheServersImmutableFieldsOnly) {
  Json desired = kDesired;
  desired["spec"]["fsGroupPolicy"] = "File";
  desired["spec"]["storageCapacity"] = true;
  Json claim = csiDriverClaim(desired, csiDriverImmutableFields(36));
  EXPECT_EQ(claim["spec"],
            j(R"({"attachRequired": false, "volumeLifecycleModes": ["Persistent", "Ephemeral"]})"));
  EXPECT_EQ(claim["metadata"], desired["metadata"]);
  EXPECT_EQ(claim["kind"], "CSIDriver");
  claim = csiDriverClaim(desired, csiDriverImmutableFields(28));
  EXPECT_EQ(claim["spec"],
            j(R"({"attachRequired": false, "volumeLifecycleModes": ["Persistent", "Ephemeral"],
    "podInfoOnMount": true, "fsGroupPolicy": "File"})"));
  // The legacy API has no volumeLifecycleModes.
  const Json legacy = j(R"({"apiVersion": "csi.storage.k8s.io/v1alpha1", "kind": "CSIDriver",
    "metadata": {"name": "d.example.com"}, "spec": {"attachRequired": true}})");
  EXPECT_EQ(csiDriverClaim(legacy, csiDriverImmutableFields(13))["spec"],
            j(R"({"attachRequired": true})"));
}

TEST(CSIDriverDecision, LegacyCsiDriverIsUpdatedInPlace) {
  // csi.storage.k8s.io/v1alpha1 (a CRD) has no immutable fields.
  Json desired = j(R"({"apiVersion": "csi.storage.k8s.io/v1alpha1", "kind": "CSIDriver",
    "metadata": {"name": "d.example.com", "annotations": {"csiop.dev/owner-uid": "u1"}},
    "spec": {"attachRequired": false}})");
  Json l = live(R"({"attachRequired": true})");
  l["apiVersion"] = "csi.storage.k8s.io/v1alpha1";
  EXPECT_EQ(decideCSIDriver(&l, desired, "u1").action, A::Apply);
  l["spec"]["attachRequired"] = false;
  EXPECT_EQ(decideCSIDriver(&l, desired, "u1").action, A::Keep);
}

TEST(CSIDriverDecision, AdoptionTakesOverOnlyACSIDriverNobodyManages) {
  Json foreign = live(
      R"({"attachRequired": false, "volumeLifecycleModes": ["Persistent", "Ephemeral"]})", nullptr);
  foreign["metadata"].erase("labels");
  EXPECT_EQ(decideCSIDriver(&foreign, kDesired, "u1").action, A::Conflict) << "not without asking";
  EXPECT_EQ(decideCSIDriver(&foreign, kDesired, "u1", true).action, A::Apply)
      << "adopted: the apply adds the owner marks";
  foreign["spec"]["attachRequired"] = true;
  EXPECT_EQ(decideCSIDriver(&foreign, kDesired, "u1", true).action, A::Recreate)
      << "immutable fields still need a recreate";
  const Json othersDriver = live(R"({"attachRequired": false})", "u2");
  EXPECT_EQ(decideCSIDriver(&othersDriver, kDesired, "u1", true).action, A::Conflict)
      << "another DriverDeployment's driver is never adopted";
}

TEST(CSIDriverDecision, ConflictWhenOwnedByAnotherOrByNobody) {
  Json l = live(R"({"attachRequired": false})", "u2");
  auto d = decideCSIDriver(&l, kDesired, "u1");
  EXPECT_EQ(d.action, A::Conflict);
  EXPECT_EQ(d.detail, "DriverDeployment \"first\"");
  l = live(R"({"attachRequired": false})", nullptr);
  l["metadata"].erase("labels");
  d = decideCSIDriver(&l, kDesired, "u1");
  EXPECT_EQ(d.action, A::Conflict);
  EXPECT_EQ(d.detail, "a CSIDriver object not managed by csi-operator");
  // A copied label is not ownership.
  l = live(R"({"attachRequired": false})", nullptr);
  EXPECT_EQ(decideCSIDriver(&l, kDesired, "u1").action, A::Conflict);
}

Json obj(const char* apiVersion, const char* kind, const char* ns, const char* name,
         const char* ownerUid) {
  Json o = {{"apiVersion", apiVersion}, {"kind", kind}, {"metadata", {{"name", name}}}};
  if (*ns) {
    o["metadata"]["namespace"] = ns;
  }
  if (ownerUid) {
    o["metadata"]["ownerReferences"] =
        Json::array({{{"uid", ownerUid}, {"kind", "DriverDeployment"}}});
    o["metadata"]["managedFields"] =
        Json::array({{{"manager", "csi-operator"}, {"operation", "Apply"}}});
  }
  return o;
}

// `o` as another client's copy of it: labels and owner references kept, written by `manager`.
Json copiedBy(Json o, const char* manager) {
  o["metadata"]["managedFields"] = Json::array({{{"manager", manager}, {"operation", "Update"}}});
  return o;
}

const std::vector<std::string> kManagers = {"csi-operator", "csi-operator-claim"};

TEST(Prune, OnlyOwnedObjectsTheSpecNoLongerWants) {
  const std::vector<Json> desired = {
      obj("apps/v1", "DaemonSet", "ns", "x-node", "u1"),
      obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "keep", "u1")};
  const std::vector<Json> live = {
      obj("apps/v1", "DaemonSet", "ns", "x-node", "u1"),                      // wanted
      obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "keep", "u1"),   // wanted
      obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "old", "u1"),    // prune
      obj("apps/v1", "Deployment", "ns", "x-controller", "u1"),               // prune, first
      obj("storage.k8s.io/v1", "StorageClass", "", "foreign", "u2"),          // not ours
      obj("storage.k8s.io/v1", "StorageClass", "", "labelled-only", nullptr), // not ours
      obj("v1", "Namespace", "", "ns", "u1"),                                 // never
      // Another client's copy of a child (e2e.test copies a driver's StorageClass): owner
      // reference and labels copied, written by that client only.
      copiedBy(obj("storage.k8s.io/v1", "StorageClass", "", "copy", "u1"), "e2e.test"),
  };
  std::vector<const Json*> cached;
  for (const Json& o : live) {
    cached.push_back(&o);
  }
  std::vector<std::string> names;
  for (const auto& o : toPrune(cached, desired, "u1", kManagers)) {
    names.push_back(keyOf(o).str());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"Deployment ns/x-controller", "ClusterRole old"}));
}

TEST(Prune, CSIDriverGoesLast) {
  std::vector<Json> all = {obj("storage.k8s.io/v1", "CSIDriver", "", "d", "u1"),
                           obj("v1", "ServiceAccount", "ns", "sa", "u1"),
                           obj("apps/v1", "DaemonSet", "ns", "ds", "u1")};
  sortForDeletion(all);
  EXPECT_EQ(keyOf(all.front()).kind, "DaemonSet");
  EXPECT_EQ(keyOf(all.back()).kind, "CSIDriver");
}

TEST(Ownership, MadeForTheOwnerByTheOperatorsFieldManagers) {
  const Json child = obj("v1", "ServiceAccount", "n", "a", "u1");
  EXPECT_TRUE(madeFor(child, "u1", kManagers));
  EXPECT_FALSE(madeFor(child, "u2", kManagers));
  EXPECT_FALSE(madeFor(copiedBy(child, "kubectl-create"), "u1", kManagers));
  // A CSIDriver claimed by a create whose apply has not happened yet.
  EXPECT_TRUE(madeFor(copiedBy(child, "csi-operator-claim"), "u1", kManagers));
  // Written by the operator's manager but owned by another DriverDeployment.
  EXPECT_FALSE(madeFor(obj("v1", "ServiceAccount", "n", "a", "u2"), "u1", kManagers));
}

TEST(Ownership, AnnotationOrOwnerReference) {
  EXPECT_TRUE(ownedBy(obj("v1", "ServiceAccount", "n", "a", "u1"), "u1"));
  EXPECT_FALSE(ownedBy(obj("v1", "ServiceAccount", "n", "a", "u1"), "u2"));
  EXPECT_FALSE(ownedBy(obj("v1", "ServiceAccount", "n", "a", "u1"), ""));
  EXPECT_TRUE(ownedBy(live("{}"), "u1"));
}

TEST(ApplyWave, RolesAndServiceAccountsBeforeBindingsAndWorkloads) {
  for (const char* first : {"ServiceAccount", "ClusterRole", "Role", "StorageClass", "ConfigMap"}) {
    for (const char* second :
         {"ClusterRoleBinding", "RoleBinding", "DaemonSet", "Deployment", "StatefulSet"}) {
      EXPECT_LT(applyWave(first, false), applyWave(second, false)) << first << " before " << second;
    }
  }
  // The workloads go with the bindings, not after them.
  EXPECT_EQ(applyWave("DaemonSet", false), applyWave("StatefulSet", false));
  EXPECT_EQ(applyWave("Deployment", false), applyWave("ClusterRoleBinding", false));
}

TEST(ApplyWave, OnceTheIdentitiesWentWithTheClaimEveryOtherChildIsOneWave) {
  for (const char* kind : {"DaemonSet", "Deployment", "StatefulSet", "RoleBinding",
                           "ClusterRoleBinding", "StorageClass", "ConfigMap", "CSIDriver"}) {
    EXPECT_EQ(applyWave(kind, true), applyWave("DaemonSet", true)) << kind;
  }
  for (const char* kind : {"ServiceAccount", "Role", "ClusterRole"}) {
    EXPECT_TRUE(isIdentity(kind)) << kind;
  }
  for (const char* kind :
       {"RoleBinding", "ClusterRoleBinding", "DaemonSet", "StorageClass", "CSIDriver"}) {
    EXPECT_FALSE(isIdentity(kind)) << kind << " grants or runs something";
  }
}

TEST(Decisions, AFlagAnnotationIsTrueFalseOrInvalid) {
  const auto with = [](const Json& value) {
    return Json{{"kind", "DaemonSet"},
                {"metadata",
                 {{"name", "x-node"},
                  {"namespace", "csi-x"},
                  {"annotations", {{"csiop.dev/unmanaged", value}}}}}};
  };
  EXPECT_EQ(flagAnnotation(Json{{"metadata", {{"name", "a"}}}}, "csiop.dev/unmanaged"), Flag::No);
  EXPECT_EQ(flagAnnotation(with("false"), "csiop.dev/unmanaged"), Flag::No);
  EXPECT_EQ(flagAnnotation(with("true"), "csiop.dev/unmanaged"), Flag::Yes);
  EXPECT_EQ(flagAnnotation(with("yes"), "csiop.dev/unmanaged"), Flag::Invalid);
  EXPECT_EQ(flagAnnotation(with("True"), "csiop.dev/unmanaged"), Flag::Invalid);
  EXPECT_EQ(flagAnnotation(with(""), "csiop.dev/unmanaged"), Flag::Invalid);
  EXPECT_EQ(flagAnnotation(with("true"), "csiop.dev/other"), Flag::No);
  EXPECT_TRUE(managed(with("false")));
  EXPECT_FALSE(managed(with("true")));
  EXPECT_FALSE(managed(with("yes"))); // unknown: hands off, nothing is overwritten
  EXPECT_EQ(invalidFlagMessage(with("yes"), "csiop.dev/unmanaged", "DaemonSet csi-x/x-node"),
            "annotation csiop.dev/unmanaged on DaemonSet csi-x/x-node is \"yes\", not \"true\" "
            "or \"false\"");
  const api::UnmanagedObject u = unmanagedEntry(with("true"));
  EXPECT_EQ(u.kind, "DaemonSet");
  EXPECT_EQ(u.namespace_, "csi-x");
  EXPECT_EQ(u.name, "x-node");
  EXPECT_FALSE(unmanagedEntry(Json{{"kind", "CSIDriver"}, {"metadata", {{"name", "d"}}}})
                   .namespace_.has_value());
}

} // namespace
} // namespace csiop::driverdeployment
