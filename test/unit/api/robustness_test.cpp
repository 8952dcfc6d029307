// Bad input gets an error, never a crash: every field of every example replaced
// by a value of every JSON type must load (valid or not) without throwing, and
// whatever validates must render.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <csiop/api/load.hpp>
#include <csiop/api/yaml.hpp>
#include <csiop/render/render.hpp>

namespace csiop {
namespace {

using api::Json;
namespace fs = std::filesystem;

void paths(const Json& j, const Json::json_pointer& at, std::vector<Json::json_pointer>& out) {
  out.push_back(at);
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      paths(v, at / k, out);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      paths(j[i], at / i, out);
    }
  }
}

TEST(Robustness, EveryFieldWithEveryType) {
  const std::vector<Json> replacements = {nullptr,
                                          0,
                                          -1,
                                          4294967296LL,
                                          1.5,
                                          "",
                                          "x",
                                          true,
                                          Json::array(),
                                          Json::array({1}),
                                          Json::object(),
                                          Json{{"name", 1}}};
  std::size_t rendered = 0;
  std::size_t rejected = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(CSIOP_SOURCE_DIR) / "examples")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".yaml") {
      continue; // examples/operator-values/: the chart's values, not DriverDeployments
    }
    std::ifstream in(entry.path());
    const Json doc = api::parseYaml(std::string(std::istreambuf_iterator<char>(in), {})).at(0);
    std::vector<Json::json_pointer> all;
    paths(doc, Json::json_pointer(), all);
    // The vendors' examples are large: each of their fields gets every third replacement, in
    // turn, so that every replacement still reaches every kind of field while the test stays
    // within seconds (and a few minutes under ASan).
    const std::size_t stride = all.size() > 200 ? 3 : 1;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const auto& p = all[i];
      for (std::size_t k = i % stride; k < replacements.size(); k += stride) {
        const Json& r = replacements[k];
        Json mutated = doc;
        mutated[p] = r;
        SCOPED_TRACE(entry.path().filename().string() + " " + p.to_string() + " = " + r.dump());
        try {
          const auto loaded = api::loadDriverDeployment(mutated);
          for (const auto& dd : loaded.objects) {
            (void)render::render(dd);
            ++rendered;
          }
          if (!loaded.ok()) {
            ++rejected;
            ASSERT_TRUE(loaded.objects.empty());
          }
        } catch (const std::exception& e) {
          FAIL() << "threw: " << e.what();
        }
      }
    }
  }
  EXPECT_GT(rendered, 0u);
  EXPECT_GT(rejected, 0u);
}

} // namespace
} // namespace csiop
