// What the operator keeps of managedFields, and how it takes over what it created with a POST.
#include <gtest/gtest.h>

#include <csiop/driverdeployment/field_ownership.hpp>
#include <csiop/runtime/store.hpp>

namespace csiop::driverdeployment {
namespace {

Json entry(const std::string& manager, const std::string& operation,
           const std::string& subresource = "") {
  Json e = {{"manager", manager},       {"operation", operation},
            {"apiVersion", "v1"},       {"time", "2026-01-01T00:00:00Z"},
            {"fieldsType", "FieldsV1"}, {"fieldsV1", {{"f:data", {{"f:a", Json::object()}}}}}};
  if (!subresource.empty())
    e["subresource"] = subresource;
  return e;
}

Json withManagedFields(Json entries) {
  return {{"metadata", {{"name", "x"}, {"managedFields", std::move(entries)}}}};
}

TEST(ManagerSummary, KeepsWhoManagesAndHowWithoutTheFieldSets) {
  const Json summary = runtime::managerSummary(Json::array(
      {entry("csi-operator", "Update"), entry("kube-controller-manager", "Update", "status")}));
  EXPECT_EQ(summary, Json::parse(R"([{"manager":"csi-operator","operation":"Update"},
    {"manager":"kube-controller-manager","operation":"Update","subresource":"status"}])"));
  EXPECT_EQ(runtime::managerSummary(Json()), Json::array());
  EXPECT_EQ(runtime::managerSummary(Json("junk")), Json::array());
}

TEST(WrittenBy, AnEntryOfTheManagerForTheMainResource) {
  const Json object = withManagedFields(Json::array(
      {entry("csi-operator", "Apply"), entry("kube-controller-manager", "Update", "status")}));
  EXPECT_TRUE(writtenBy(object, "csi-operator"));
  // As the caches keep it.
  Json cached = object;
  cached["metadata"]["managedFields"] =
      runtime::managerSummary(object["metadata"]["managedFields"]);
  EXPECT_TRUE(writtenBy(cached, "csi-operator"));
  // A status write is not a write of the object.
  EXPECT_FALSE(writtenBy(object, "kube-controller-manager"));
  EXPECT_FALSE(writtenBy(object, "kubectl"));
  EXPECT_FALSE(writtenBy(withManagedFields(Json::array()), "csi-operator"));
  EXPECT_FALSE(writtenBy(Json::object(), "csi-operator"));
  EXPECT_FALSE(writtenBy(withManagedFields("junk"), "csi-operator"));
}

TEST(OwnershipUpgrade, RenamesTheCreatesUpdateEntryToApplyGuardedByTestsOfThatEntry) {
  const Json object = withManagedFields(
      Json::array({entry("kube-controller-manager", "Update", "status"),
                   entry("kubectl-edit", "Update"), entry("csi-operator", "Update")}));
  const auto patch = ownershipUpgrade(object, "csi-operator");
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ(*patch, Json::parse(R"([
    {"op":"test","path":"/metadata/managedFields/2/manager","value":"csi-operator"},
    {"op":"test","path":"/metadata/managedFields/2/operation","value":"Update"},
    {"op":"replace","path":"/metadata/managedFields/2/operation","value":"Apply"}])"));
  // The same from the cache's summary.
  Json cached = object;
  cached["metadata"]["managedFields"] =
      runtime::managerSummary(object["metadata"]["managedFields"]);
  EXPECT_EQ(ownershipUpgrade(cached, "csi-operator"), patch);
}

TEST(OwnershipUpgrade, RemovesTheUpdateEntryWhenTheManagerAlsoApplies) {
  const Json object = withManagedFields(
      Json::array({entry("csi-operator", "Apply"), entry("csi-operator", "Update")}));
  const auto patch = ownershipUpgrade(object, "csi-operator");
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ(patch->back(), Json::parse(R"({"op":"remove","path":"/metadata/managedFields/1"})"));
  EXPECT_EQ((*patch)[0]["path"], "/metadata/managedFields/1/manager");
}

TEST(OwnershipUpgrade, NothingToHandOver) {
  // Applied already; someone else's Update; the manager's status subresource entry; no
  // managedFields at all.
  EXPECT_FALSE(ownershipUpgrade(withManagedFields(Json::array({entry("csi-operator", "Apply")})),
                                "csi-operator"));
  EXPECT_FALSE(ownershipUpgrade(withManagedFields(Json::array({entry("kubectl", "Update")})),
                                "csi-operator"));
  EXPECT_FALSE(ownershipUpgrade(
      withManagedFields(Json::array({entry("csi-operator", "Update", "status")})), "csi-operator"));
  EXPECT_FALSE(ownershipUpgrade(Json{{"metadata", {{"name", "x"}}}}, "csi-operator"));
  EXPECT_FALSE(ownershipUpgrade(Json(), "csi-operator"));
}

} // namespace
} // namespace csiop::driverdeployment
