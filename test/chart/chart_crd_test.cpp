// The CRD the chart installs is, field for field, the one the operator carries and applies at
// start (crds/, embedded): helm's YAML round trip (fromYaml | toYaml) must lose nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <csiop/api/yaml.hpp>
#include <csiop/crds.hpp>

#include "helm_template.hpp"

namespace csiop {
namespace {

using api::Json;

const Json* findCrd(const std::vector<Json>& objects) {
  for (const Json& o : objects) {
    if (o["kind"] == "CustomResourceDefinition") {
      return &o;
    }
  }
  return nullptr;
}

TEST(ChartCrd, IsTheOperatorsCrdWithTheChartsMetadata) {
  const auto chart = test::helmTemplate();
  const Json* rendered = findCrd(chart);
  ASSERT_NE(rendered, nullptr);
  const Json embedded = api::parseYaml(embedded::crdYaml()).at(0);
  // Compared without key order (api::Json keeps it; helm's toYaml sorts keys).
  const auto unordered = [](const Json& j) { return nlohmann::json::parse(j.dump()); };
  EXPECT_EQ(unordered((*rendered)["spec"]), unordered(embedded["spec"]));
  EXPECT_EQ((*rendered)["metadata"]["name"], embedded["metadata"]["name"]);
  EXPECT_EQ((*rendered)["metadata"]["annotations"]["helm.sh/resource-policy"], "keep");
  EXPECT_EQ((*rendered)["metadata"]["labels"]["app.kubernetes.io/managed-by"], "Helm");
}

TEST(ChartCrd, CanBeDeletedOnUninstallOrLeftOut) {
  const auto deleted = test::helmTemplate("--set crds.keep=false");
  const Json* notKept = findCrd(deleted);
  ASSERT_NE(notKept, nullptr);
  EXPECT_FALSE((*notKept)["metadata"].contains("annotations"));
  const auto leftOut = test::helmTemplate("--set crds.install=false");
  EXPECT_EQ(findCrd(leftOut), nullptr);
}

} // namespace
} // namespace csiop
