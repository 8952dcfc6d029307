// The e2e harness itself (no cluster needed): process running, timeouts, waitFor reporting.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <fstream>

#include "harness.hpp"

namespace csiop::e2e {
namespace {

TEST(Harness, RunSeparatesStdoutStderrAndExitCode) {
  const auto r = run({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_FALSE(r.timedOut);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(Harness, RunPassesArgvWithoutAShell) {
  const std::string tricky = "$(echo injected); 'quoted' \"x\" *";
  const auto r = run({"printf", "%s", tricky});
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_EQ(r.out, tricky);
}

TEST(Harness, RunFeedsLargeStdin) {
  std::string input;
  for (int i = 0; i < 200000; ++i)
    input += "line " + std::to_string(i) + "\n";
  const auto r = run({"cat"}, {.input = input});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, input);
}

TEST(Harness, RunSurvivesAChildThatIgnoresStdin) {
  const auto r = run({"true"}, {.input = std::string(1 << 20, 'x')});
  EXPECT_TRUE(r.ok()) << r;
}

TEST(Harness, RunWithoutInputGivesEmptyStdin) {
  const auto r = run({"cat"});
  EXPECT_TRUE(r.ok()) << r;
  EXPECT_EQ(r.out, "");
}

TEST(Harness, RunTimeoutKillsTheWholePipeline) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = bash("echo started; sleep 30 | cat", {.timeout = 500ms});
  EXPECT_TRUE(r.timedOut);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "started\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(Harness, RunReportsAMissingProgram) {
  const auto r = run({"/nonexistent/csiop-e2e-program"});
  EXPECT_EQ(r.exitCode, 127);
  EXPECT_NE(r.err.find("cannot run"), std::string::npos) << r;
}

TEST(Harness, RunAddsEnvironment) {
  const auto r = run({"sh", "-c", "printf %s \"$CSIOP_E2E_TEST_VAR\""},
                     {.env = {{"CSIOP_E2E_TEST_VAR", "v a l"}}});
  EXPECT_EQ(r.out, "v a l");
}

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
