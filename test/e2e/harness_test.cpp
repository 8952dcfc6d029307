// The e2e harness itself (no cluster needed): waitFor reporting, env files, the binary. Running
// processes is test/support's (test/unit/support/run_test.cpp).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <fstream>

#include "harness.hpp"

namespace csiop::e2e {
namespace {

TEST(Harness, WaitForReturnsOnceTheProbeSucceeds) {
  int calls = 0;
  EXPECT_TRUE(waitFor(
      "third call", 5s, [&](std::string&) { return ++calls == 3; }, 10ms));
  EXPECT_EQ(calls, 3);
}

TEST(Harness, WaitForFailsWithDescriptionAndLastObservedState) {
  int calls = 0;
  EXPECT_NONFATAL_FAILURE(
      {
        const bool done = waitFor(
            "the impossible", 200ms,
            [&](std::string& seen) {
              seen = "attempt " + std::to_string(++calls);
              return false;
            },
            20ms);
        EXPECT_FALSE(done);
      },
      "waiting for the impossible\nlast observed state:\nattempt ");
  EXPECT_GT(calls, 1);
}

TEST(Harness, WaitForRecordsExceptionsAsObservedState) {
  EXPECT_NONFATAL_FAILURE(
      (void)waitFor(
          "a throwing probe", 100ms, [](std::string&) -> bool { throw E2EError("boom"); }, 20ms),
      "exception: boom");
}

TEST(Harness, ReadEnvFileSkipsCommentsAndKeepsEqualsInValues) {
  const auto path = writeArtifact("harness_test.env", "# comment\n\nA=1\nB=x=y\nC=\n");
  const auto vars = readEnvFile(path);
  EXPECT_EQ(vars.size(), 3u);
  EXPECT_EQ(vars.at("A"), "1");
  EXPECT_EQ(vars.at("B"), "x=y");
  EXPECT_EQ(vars.at("C"), "");
}

TEST(Harness, OperatorBinaryIsBuilt) {
  const auto r = csiOperator({"version"});
  EXPECT_TRUE(r.ok()) << r;
}

} // namespace
} // namespace csiop::e2e
