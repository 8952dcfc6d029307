// TaskSupervisor: a task that ends with an unexpected exception is fatal (the handler runs once,
// with the task's name and the message; the check fails); a task that returns or is cancelled is
// not. hardExitAfter ends a process that is still running at its deadline.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>

#include <csiop/runtime/supervised.hpp>

namespace csiop::runtime {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

asio::awaitable<void> returns() {
  co_return;
}

asio::awaitable<void> throws(std::string what) {
  throw std::runtime_error(what);
  co_return;
}

asio::awaitable<void> cancelled() {
  throw boost::system::system_error(asio::error::operation_aborted);
  co_return;
}

asio::awaitable<void> failsWithSomethingElse() {
  throw boost::system::system_error(asio::error::connection_reset);
  co_return;
}

HttpRequest get(const std::string& path) {
  HttpRequest request;
  request.method = "GET";
  request.target = path;
  request.path = path;
  return request;
}

class TaskSupervisorTest : public ::testing::Test {
protected:
  TaskSupervisorTest()
      : supervisor_([this](const std::string& task, const std::string& what) {
          failures_.push_back(task + ": " + what);
        }) {}

  asio::io_context io_;
  std::vector<std::string> failures_;
  TaskSupervisor supervisor_;
};

TEST_F(TaskSupervisorTest, ATaskThatThrowsIsAFailureNamedAfterItAndTheChecksFail) {
  HealthChecks readyz("readyz");
  readyz.add("tasks", supervisor_.check());
  EXPECT_EQ(readyz.serve(get("/readyz")).status, 200u);

  asio::co_spawn(io_, throws("the watch decoder broke"),
                 supervisor_.supervise("informer for pods"));
  io_.run();

  EXPECT_EQ(failures_, std::vector<std::string>{"informer for pods: the watch decoder broke"});
  EXPECT_TRUE(supervisor_.failed());
  EXPECT_EQ(supervisor_.failure(), "informer for pods ended: the watch decoder broke");
  const HttpResponse response = readyz.serve(get("/readyz"));
  EXPECT_EQ(response.status, 503u);
  EXPECT_EQ(response.body, "[-]tasks failed: informer for pods ended: the watch decoder broke\n"
                           "readyz check failed\n");
}

TEST_F(TaskSupervisorTest, ATaskThatReturnsOrIsCancelledHasNotFailed) {
  asio::co_spawn(io_, returns(), supervisor_.supervise("worker 1"));
  asio::co_spawn(io_, cancelled(), supervisor_.supervise("shutdown"));
  io_.run();
  EXPECT_TRUE(failures_.empty());
  EXPECT_FALSE(supervisor_.failed());
  EXPECT_TRUE(supervisor_.check()().ok);
}

TEST_F(TaskSupervisorTest, AnErrorCodeOtherThanCancellationIsAFailure) {
  asio::co_spawn(io_, failsWithSomethingElse(), supervisor_.supervise("start-up"));
  io_.run();
  ASSERT_EQ(failures_.size(), 1u);
  EXPECT_EQ(failures_[0].rfind("start-up: ", 0), 0u) << failures_[0];
}

TEST_F(TaskSupervisorTest, OnlyTheFirstFailureIsActedOnAndReported) {
  asio::co_spawn(io_, throws("first"), supervisor_.supervise("worker 1"));
  asio::co_spawn(io_, throws("second"), supervisor_.supervise("worker 2"));
  io_.run();
  EXPECT_EQ(failures_, std::vector<std::string>{"worker 1: first"});
  EXPECT_EQ(supervisor_.failure(), "worker 1 ended: first");
  EXPECT_EQ(supervisor_.check()().reason, "worker 1 ended: first");
}

TEST(TaskSupervisor, WithoutAHandlerAFailureStillFailsTheCheck) {
  asio::io_context io;
  TaskSupervisor supervisor;
  asio::co_spawn(io, throws("boom"), supervisor.supervise("leader's work"));
  io.run();
  EXPECT_FALSE(supervisor.check()().ok);
}

TEST(HardExitAfterDeathTest, EndsAProcessStillRunningAtTheDeadline) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        hardExitAfter(20ms, 3);
        std::this_thread::sleep_for(10s); // a drain that hangs
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "");
}

} // namespace
} // namespace csiop::runtime
