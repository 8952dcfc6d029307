// Golden files: the exact output of `csi-operator render` for every example,
// reviewable under test/golden/. Regenerate with CSIOP_UPDATE_GOLDEN=1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <csiop/api/yaml.hpp>

#include "../common/render_test_util.hpp"

namespace csiop {
namespace {

namespace fs = std::filesystem;
using api::Json;

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void checkGolden(const std::string& rendered, const fs::path& golden) {
  if (std::getenv("CSIOP_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden, std::ios::binary) << rendered;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; run with CSIOP_UPDATE_GOLDEN=1";
  EXPECT_EQ(rendered, readFile(golden)) << "render output differs from " << golden
                                        << "; review, then regenerate with CSIOP_UPDATE_GOLDEN=1";
}

std::vector<fs::path> examples() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(fs::path(CSIOP_SOURCE_DIR) / "examples")) {
    if (entry.path().extension() == ".yaml") {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RenderGolden, EveryExampleHasAGoldenFile) {
  const auto all = examples();
  ASSERT_GE(all.size(), 3u);
  for (const auto& example : all) {
    SCOPED_TRACE(example.string());
    const auto dd = testutil::load(readFile(example));
    checkGolden(api::toYamlStream(render::render(dd)),
                fs::path(CSIOP_SOURCE_DIR) / "test/golden" / example.filename());
  }
}

// As the operator renders it: with the uid of the object in the cluster, so
// every owned object carries an owner reference.
TEST(RenderGolden, HostpathWithOwner) {
  auto dd = testutil::load(readFile(fs::path(CSIOP_SOURCE_DIR) / "examples/hostpath.yaml"));
  dd.metadata["uid"] = "6f1f7c4e-0f7e-4c1a-9d7e-1f2a3b4c5d6e";
  checkGolden(api::toYamlStream(render::render(dd)),
              fs::path(CSIOP_SOURCE_DIR) / "test/golden/hostpath-owned.yaml");
}

TEST(RenderGolden, LegacyCSIDriver) {
  auto dd = testutil::load(readFile(fs::path(CSIOP_SOURCE_DIR) / "examples/hostpath.yaml"));
  const auto objs = render::render(dd, {.csiDriverV1 = false});
  const Json* d = testutil::find(objs, "CSIDriver", "hostpath.csi.k8s.io");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ((*d)["apiVersion"], "csi.storage.k8s.io/v1alpha1");
  EXPECT_EQ((*d)["spec"], (Json{{"attachRequired", true}, {"podInfoOnMountVersion", "v1"}}));
}

} // namespace
} // namespace csiop
