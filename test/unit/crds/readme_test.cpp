// The README's API reference is the generated one, so it cannot go stale.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <csiop/reference.hpp>

namespace csiop {
namespace {

TEST(Readme, ApiReferenceIsCurrent) {
  std::ifstream in(std::string(CSIOP_SOURCE_DIR) + "/README.md");
  const std::string readme{std::istreambuf_iterator<char>(in), {}};
  const auto begin = readme.find(docs::kBeginMarker);
  const auto end = readme.find(docs::kEndMarker);
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(readme.substr(begin, end + std::string(docs::kEndMarker).size() - begin),
            docs::apiReference())
      << "run scripts/update-readme";
}

} // namespace
} // namespace csiop
