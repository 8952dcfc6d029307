#include <csiop/driverdeployment/pruning.hpp>

#include <algorithm>
#include <set>

#include <csiop/api/json_access.hpp>
#include <csiop/driverdeployment/object_key.hpp>
#include <csiop/driverdeployment/ownership.hpp>

namespace csiop::driverdeployment {
namespace {

using api::Json;

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

void sortForDeletion(std::vector<Json>& objects) {
  std::stable_sort(objects.begin(), objects.end(), [](const Json& a, const Json& b) {
    return deletionRank(api::stringField(a, "kind")) < deletionRank(api::stringField(b, "kind"));
  });
}

} // namespace csiop::driverdeployment
