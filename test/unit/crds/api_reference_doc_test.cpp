// docs/reference/api.md's API reference is the generated one, so it cannot go stale.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <csiop/reference.hpp>

namespace csiop {
namespace {

TEST(Docs, ApiReferenceIsCurrent) {
  std::ifstream in(std::string(CSIOP_SOURCE_DIR) + "/docs/reference/api.md");
  ASSERT_TRUE(in) << "docs/reference/api.md is missing";
  const std::string page{std::istreambuf_iterator<char>(in), {}};
  const auto begin = page.find(docs::kBeginMarker);
  const auto end = page.find(docs::kEndMarker);
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(page.substr(begin, end + std::string(docs::kEndMarker).size() - begin),
            docs::apiReference())
      << "run scripts/update-api-reference";
}

} // namespace
} // namespace csiop
