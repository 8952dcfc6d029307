// The checked-in CRD, the C++ types and the defaults must agree.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>

#include <csiop/api/codec.hpp>
#include <csiop/api/defaults.hpp>
#include <csiop/api/validation.hpp>
#include <csiop/api/yaml.hpp>
#include <csiop/crds.hpp>

namespace csiop::api {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

const std::string kCrdPath =
    std::string(CSIOP_SOURCE_DIR) + "/crds/csiop.dev_driverdeployments.yaml";

Json schema() {
  const auto docs = parseYaml(readFile(kCrdPath));
  EXPECT_EQ(docs.size(), 1u);
  return docs.at(0)["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
}

// Compares the codec's field tree with the schema, both ways.
void compare(const Json& tree, const Json& s, const std::string& path,
             std::vector<std::string>& problems) {
  const std::string type = s.value("type", std::string());
  if (tree.is_string()) {
    const std::string kind = tree.get<std::string>();
    const std::map<std::string, std::string> expected = {{"string", "string"},
                                                         {"boolean", "boolean"},
                                                         {"integer", "integer"},
                                                         {"map", "object"},
                                                         {"list", "array"}};
    if (const auto it = expected.find(kind); it != expected.end() && type != it->second) {
      problems.push_back(path + ": schema type " + type + ", codec " + kind);
    }
    if (!s.contains("description") && path != "metadata") {
      problems.push_back(path + ": no description");
    }
    return;
  }
  if (tree.contains("[]")) {
    if (type != "array") {
      problems.push_back(path + ": schema type " + type + ", codec list");
      return;
    }
    compare(tree["[]"], s["items"], path + "[]", problems);
    return;
  }
  if (type != "object") {
    problems.push_back(path + ": schema type " + type + ", codec object");
    return;
  }
  const Json props = s.value("properties", Json::object());
  for (const auto& [k, v] : tree.items()) {
    if (!props.contains(k)) {
      problems.push_back(path + "." + k + ": missing from the CRD");
    } else {
      compare(v, props[k], path.empty() ? k : path + "." + k, problems);
    }
  }
  for (const auto& [k, v] : props.items()) {
    if (!tree.contains(k)) {
      problems.push_back(path + "." + k + ": in the CRD but not in types.hpp");
    }
  }
}

TEST(Crd, SchemaListsExactlyTheFieldsOfTheTypes) {
  std::vector<std::string> problems;
  compare(fieldTree(), schema(), "", problems);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
}

void collectDefaults(const Json& s, const std::string& path, std::map<std::string, Json>& out) {
  if (s.contains("default")) {
    out[path] = s["default"];
  }
  const Json props = s.value("properties", Json::object());
  for (const auto& [k, v] : props.items()) {
    collectDefaults(v, path.empty() ? k : path + "." + k, out);
  }
  if (s.contains("items")) {
    collectDefaults(s["items"], path + "[]", out);
  }
}

TEST(Crd, SchemaDefaultsAreTheCodeDefaults) {
  std::map<std::string, Json> defaults;
  collectDefaults(schema(), "", defaults);
  const std::map<std::string, Json> expected = {
      {"spec.controller.kind", defaults::kControllerKind},
      {"spec.controller.placement", defaults::kPlacementWorkload},
      {"spec.deletionPolicy", defaults::kDeletionPolicy},
      {"spec.paused", Effective{}.paused},
  };
  EXPECT_EQ(defaults, expected);
}

TEST(Crd, SchemaLimitsAreTheValidationLimits) {
  const Json spec = schema()["properties"]["spec"]["properties"];
  EXPECT_EQ(spec["driverName"]["maxLength"], kMaxDriverNameLength);
  EXPECT_EQ(spec["csiDriver"]["properties"]["tokenRequests"]["maxItems"], kMaxTokenRequests);
  EXPECT_EQ(spec["storageClasses"]["maxItems"], kMaxStorageClasses);
}

TEST(Crd, IsClusterScopedWithStatusAndPrinterColumns) {
  const Json crd = parseYaml(readFile(kCrdPath)).at(0);
  EXPECT_EQ(crd["metadata"]["name"], "driverdeployments.csiop.dev");
  EXPECT_EQ(crd["spec"]["scope"], "Cluster");
  const Json& version = crd["spec"]["versions"][0];
  EXPECT_EQ(version["name"], kVersion);
  EXPECT_TRUE(version["subresources"].contains("status"));
  std::vector<std::string> columns;
  for (const auto& c : version["additionalPrinterColumns"]) {
    columns.push_back(c["name"]);
  }
  EXPECT_EQ(columns, (std::vector<std::string>{"Driver", "Ready", "Registered", "Desired",
                                               "Rollout", "Paused", "Age"}));
}

TEST(Crd, EmbeddedCopyIsTheCheckedInFile) {
  EXPECT_EQ(embedded::crdYaml(), readFile(kCrdPath));
}

} // namespace
} // namespace csiop::api
