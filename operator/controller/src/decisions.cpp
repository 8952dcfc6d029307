#include <csiop/controller/decisions.hpp>

#include <algorithm>
#include <set>

#include <csiop/api/json_access.hpp>
#include <csiop/controller/compare.hpp>
#include <csiop/controller/field_ownership.hpp>
#include <csiop/render/render.hpp>

namespace csiop::controller {
namespace {

// Deletion rank: lower goes first.
int deletionRank(const std::string& kind) {
  static const std::vector<std::string> order = {
      "Deployment", "StatefulSet",        "DaemonSet",   "StorageClass",  "RoleBinding",
      "Role",       "ClusterRoleBinding", "ClusterRole", "ServiceAccount"};
  const auto it = std::find(order.begin(), order.end(), kind);
  if (kind == "CSIDriver") {
    return 100;
  }
  return it == order.end() ? 50 : static_cast<int>(it - order.begin());
}

} // namespace

std::string ObjectKey::str() const {
  return kind + " " + (namespace_.empty() ? name : namespace_ + "/" + name);
}

ObjectKey keyOf(const Json& o) {
  const std::string apiVersion = api::stringField(o, "apiVersion");
  const auto slash = apiVersion.find('/');
  return {slash == std::string::npos ? "" : apiVersion.substr(0, slash),
          api::stringField(o, "kind"), api::metadataField(o, "namespace"),
          api::metadataField(o, "name")};
}

bool ownedBy(const Json& o, const std::string& ownerUid) {
  if (ownerUid.empty() || !o.contains("metadata")) {
    return false;
  }
  const Json& meta = o["metadata"];
  if (meta.contains("ownerReferences") && meta["ownerReferences"].is_array()) {
    for (const auto& ref : meta["ownerReferences"]) {
      if (ref.is_object() && ref.value("uid", Json()) == ownerUid) {
        return true;
      }
    }
  }
  return meta.contains("annotations") && meta["annotations"].is_object() &&
         meta["annotations"].value(api::kOwnerUidAnnotation, Json()) == ownerUid;
}

CSIDriverDecision decideCSIDriver(const Json* live, const Json& desired, const std::string& uid,
                                  bool adopt) {
  using A = CSIDriverDecision::Action;
  if (live == nullptr) {
    return {A::Create, {}};
  }
  // Adoption takes only what no DriverDeployment manages (no owner label).
  const bool adoptable =
      adopt &&
      api::stringField(live->value("metadata", Json::object()).value("labels", Json::object()),
                       api::kOwnerLabel)
          .empty();
  if (!ownedBy(*live, uid) && !adoptable) {
    const Json& meta = (*live)["metadata"];
    const std::string owner =
        meta.contains("labels") && meta["labels"].contains(api::kOwnerLabel)
            ? "DriverDeployment \"" + meta["labels"][api::kOwnerLabel].get<std::string>() + "\""
            : "a CSIDriver object not managed by csi-operator";
    return {A::Conflict, owner};
  }
  const Json& have = live->value("spec", Json::object());
  const Json& want = desired["spec"];
  std::string changed;
  // Server defaults of the immutable fields, for objects created without them.
  const Json attachHave = have.value("attachRequired", Json(true));
  const Json modesHave = have.value("volumeLifecycleModes", Json::array({"Persistent"}));
  if (want.contains("attachRequired") && want["attachRequired"] != attachHave) {
    changed = "attachRequired";
  }
  if (want.contains("volumeLifecycleModes")) {
    std::set<std::string> a(modesHave.begin(), modesHave.end());
    std::set<std::string> b(want["volumeLifecycleModes"].begin(),
                            want["volumeLifecycleModes"].end());
    if (a != b) {
      changed += (changed.empty() ? "" : " and ") + std::string("volumeLifecycleModes");
    }
  }
  // Immutable in storage.k8s.io/v1 only; the legacy CRD updates them in place.
  if (!changed.empty() && desired.value("apiVersion", "") == "storage.k8s.io/v1") {
    return {A::Recreate, changed};
  }
  return {contains(*live, desired) ? A::Keep : A::Apply, {}};
}

bool madeFor(const Json& object, const std::string& ownerUid,
             const std::vector<std::string>& managers) {
  return ownedBy(object, ownerUid) &&
         std::any_of(managers.begin(), managers.end(),
                     [&](const std::string& m) { return writtenBy(object, m); });
}

std::vector<Json> toPrune(const std::vector<const Json*>& live, const std::vector<Json>& desired,
                          const std::string& ownerUid, const std::vector<std::string>& managers) {
  std::set<ObjectKey> wanted;
  for (const auto& d : desired) {
    wanted.insert(keyOf(d));
  }
  std::vector<Json> out;
  for (const Json* l : live) {
    const ObjectKey k = keyOf(*l);
    if (k.kind == "Namespace" || wanted.contains(k) || !madeFor(*l, ownerUid, managers)) {
      continue;
    }
    out.push_back(*l);
  }
  sortForDeletion(out);
  return out;
}

api::UnmanagedObject unmanagedEntry(const Json& child) {
  const ObjectKey k = keyOf(child);
  api::UnmanagedObject u;
  u.kind = k.kind;
  if (!k.namespace_.empty()) {
    u.namespace_ = k.namespace_;
  }
  u.name = k.name;
  return u;
}

int applyWave(const std::string& kind, bool serviceAccountsExist) {
  if (kind == "ClusterRoleBinding" || kind == "RoleBinding") {
    return 1;
  }
  return isWorkload(kind) && !serviceAccountsExist ? 1 : 0;
}

bool isWorkload(const std::string& kind) {
  return kind == "DaemonSet" || kind == "Deployment" || kind == "StatefulSet";
}

void sortForDeletion(std::vector<Json>& objects) {
  std::stable_sort(objects.begin(), objects.end(), [](const Json& a, const Json& b) {
    return deletionRank(api::stringField(a, "kind")) < deletionRank(api::stringField(b, "kind"));
  });
}

bool hasFinalizer(const Json& object, const char* finalizer) {
  const Json f = object.value("metadata", Json::object()).value("finalizers", Json::array());
  return f.is_array() && std::find(f.begin(), f.end(), Json(finalizer)) != f.end();
}

} // namespace csiop::controller
