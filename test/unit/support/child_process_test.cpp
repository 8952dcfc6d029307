// ChildProcess, free ports and the operator's command line: what the e2e harness and the
// benchmarks start their operators with.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <csiop/testsupport/operator_command.hpp>
#include <csiop/testsupport/ports.hpp>
#include <csiop/testsupport/process.hpp>

namespace csiop::testsupport {
namespace {

using namespace std::chrono_literals;

class ChildProcessTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("csiop-child-process-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::filesystem::path dir;
};

TEST_F(ChildProcessTest, WritesStdoutAndStderrToItsLogAndReportsTheExitCode) {
  ChildProcess child({"sh", "-c", "echo out; echo err >&2; exit 3"}, dir / "child.log");
  EXPECT_EQ(child.wait(10s), 3);
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.exitCode(), 3);
  EXPECT_EQ(child.log(), "out\nerr\n");
}

TEST_F(ChildProcessTest, AddsEnvironment) {
  ChildProcess child({"sh", "-c", "printf %s \"$CSIOP_SUPPORT_TEST_VAR\""}, dir / "env.log",
                     {{"CSIOP_SUPPORT_TEST_VAR", "v a l"}});
  EXPECT_EQ(child.wait(10s), 0);
  EXPECT_EQ(child.log(), "v a l");
}

TEST_F(ChildProcessTest, StopEndsItWithSigtermOrAfterTheGraceWithSigkill) {
  ChildProcess polite({"sleep", "30"}, dir / "polite.log");
  EXPECT_EQ(polite.stop(10s), 128 + SIGTERM);
  ChildProcess stubborn({"sh", "-c", "trap '' TERM; echo ready; sleep 30"}, dir / "stubborn.log");
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (stubborn.log().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(stubborn.stop(200ms), 128 + SIGKILL);
}

TEST_F(ChildProcessTest, SignalsReachItsWholeProcessGroup) {
  ChildProcess child({"sh", "-c", "sleep 30 & echo $!; wait"}, dir / "group.log");
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (child.log().find('\n') == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  const pid_t sleeper = std::stoi(child.log());
  EXPECT_EQ(::getpgid(sleeper), child.pid());
  child.signal(SIGKILL);
  EXPECT_EQ(child.wait(10s), 128 + SIGKILL);
  // The grandchild is gone too (or a zombie until its new parent reaps it).
  std::string state = "R";
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream stat("/proc/" + std::to_string(sleeper) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) {
      state = "gone";
      break;
    }
    state = line.substr(line.rfind(')') + 2, 1);
    if (state == "Z") {
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(state == "gone" || state == "Z") << state;
}

TEST_F(ChildProcessTest, GetsNoneOfTheCallersOtherDescriptors) {
  const int inheritable = ::open("/dev/null", O_RDONLY); // no O_CLOEXEC
  ASSERT_GE(inheritable, 0);
  const std::string fd = std::to_string(inheritable);
  ChildProcess child({"sh", "-c", "test -e /proc/$$/fd/" + fd + " && echo open || echo closed"},
                     dir / "fd.log");
  EXPECT_EQ(child.wait(10s), 0);
  ::close(inheritable);
  EXPECT_EQ(child.log(), "closed\n");
  const auto r = run({"sh", "-c", "test -e /proc/$$/fd/" + fd + " && echo open || echo closed"});
  EXPECT_EQ(r.out, "closed\n") << r;
}

TEST_F(ChildProcessTest, RestartsOnceItHasExited) {
  ChildProcess child({"sh", "-c", "echo first"}, dir / "restart.log");
  EXPECT_EQ(child.wait(10s), 0);
  child.restart({"sh", "-c", "echo second; exit 4"}, dir / "restart.log");
  EXPECT_EQ(child.wait(10s), 4);
  EXPECT_EQ(child.log(), "first\nsecond\n");
  ChildProcess running({"sleep", "30"}, dir / "running.log");
  EXPECT_THROW(running.restart({"true"}, dir / "running.log"), std::logic_error);
}

TEST_F(ChildProcessTest, AMissingProgramThrows) {
  EXPECT_THROW(ChildProcess({"/nonexistent/csiop-test-program"}, dir / "missing.log"),
               std::runtime_error);
  EXPECT_THROW(ChildProcess({"csiop-no-such-program-on-path"}, dir / "missing.log"),
               std::runtime_error);
}

TEST(FreeLoopbackPort, GivesAPortOfLoopback) {
  const int port = freeLoopbackPort();
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
  const auto ports = freeOperatorPorts();
  EXPECT_GT(ports.metrics, 0);
  EXPECT_GT(ports.health, 0);
}

TEST(OperatorCommand, PutsMetricsAndProbesOnTheGivenLoopbackPorts) {
  EXPECT_EQ(operatorCommand("/bin/csi-operator", "run", "/k/config", {8080, 8081}),
            (std::vector<std::string>{"/bin/csi-operator", "run", "--kubeconfig", "/k/config",
                                      "--metrics-bind-address", "127.0.0.1:8080",
                                      "--health-probe-bind-address", "127.0.0.1:8081"}));
}

} // namespace
} // namespace csiop::testsupport
