// run() and bash(): argv without a shell, stdin fed, stdout and stderr apart, timeouts that
// reach the whole pipeline, what a missing program gives.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <csiop/testsupport/process.hpp>

namespace csiop::testsupport {
namespace {

using namespace std::chrono_literals;

TEST(Run, SeparatesStdoutStderrAndExitCode) {
  const auto r = run({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_FALSE(r.timedOut);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(Run, PassesArgvWithoutAShell) {
  const std::string tricky = "$(echo injected); 'quoted' \"x\" *";
  const auto r = run({"printf", "%s", tricky});
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_EQ(r.out, tricky);
}

TEST(Run, FeedsLargeStdin) {
  std::string input;
  for (int i = 0; i < 200000; ++i)
    input += "line " + std::to_string(i) + "\n";
  const auto r = run({"cat"}, {.input = input});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, input);
}

TEST(Run, SurvivesAChildThatIgnoresStdin) {
  const auto r = run({"true"}, {.input = std::string(1 << 20, 'x')});
  EXPECT_TRUE(r.ok()) << r;
}

TEST(Run, WithoutInputGivesEmptyStdin) {
  const auto r = run({"cat"});
  EXPECT_TRUE(r.ok()) << r;
  EXPECT_EQ(r.out, "");
}

TEST(Run, TimeoutKillsTheWholePipeline) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = bash("echo started; sleep 30 | cat", {.timeout = 500ms});
  EXPECT_TRUE(r.timedOut);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "started\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(Run, ReportsAMissingProgram) {
  const auto r = run({"/nonexistent/csiop-e2e-program"});
  EXPECT_EQ(r.exitCode, 127);
  EXPECT_NE(r.err.find("cannot run"), std::string::npos) << r;
}

TEST(Run, AddsEnvironment) {
  const auto r = run({"sh", "-c", "printf %s \"$CSIOP_E2E_TEST_VAR\""},
                     {.env = {{"CSIOP_E2E_TEST_VAR", "v a l"}}});
  EXPECT_EQ(r.out, "v a l");
}

} // namespace
} // namespace csiop::testsupport
