#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csiop/runtime/concurrently.hpp>

namespace csiop::runtime {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// Waits `delay`, records that it started and finished, returns `name`.
asio::awaitable<std::string> task(std::string name, std::chrono::milliseconds delay,
                                  std::vector<std::string>& log, bool fail = false) {
  log.push_back("start " + name);
  asio::steady_timer t(co_await asio::this_coro::executor, delay);
  co_await t.async_wait(asio::use_awaitable);
  log.push_back("end " + name);
  if (fail) {
    throw std::runtime_error(name + " failed");
  }
  co_return name;
}

template <class T> T runToEnd(asio::io_context& io, asio::awaitable<T> work) {
  std::optional<T> result;
  std::exception_ptr error;
  asio::co_spawn(io, std::move(work), [&](std::exception_ptr e, T value) {
    error = e;
    result = std::move(value);
  });
  io.run();
  if (error) {
    std::rethrow_exception(error);
  }
  return *result;
}

TEST(AllOf, RunsTasksAtOnceAndReturnsResultsInOrder) {
  asio::io_context io;
  std::vector<std::string> log;
  std::vector<asio::awaitable<std::string>> tasks;
  tasks.push_back(task("slow", 60ms, log));
  tasks.push_back(task("fast", 10ms, log));
  tasks.push_back(task("middle", 30ms, log));
  const auto results = runToEnd(io, allOf(std::move(tasks)));
  EXPECT_EQ(results, (std::vector<std::string>{"slow", "fast", "middle"}));
  // All three started before any ended: they ran at the same time.
  ASSERT_EQ(log.size(), 6u);
  EXPECT_EQ(log[0].rfind("start", 0), 0u);
  EXPECT_EQ(log[1].rfind("start", 0), 0u);
  EXPECT_EQ(log[2].rfind("start", 0), 0u);
  EXPECT_EQ(log[3], "end fast");
  EXPECT_EQ(log[5], "end slow");
}

TEST(AllOf, WaitsForEveryTaskThenRethrowsTheFirstError) {
  asio::io_context io;
  std::vector<std::string> log;
  std::vector<asio::awaitable<std::string>> tasks;
  tasks.push_back(task("broken", 5ms, log, true));
  tasks.push_back(task("later", 30ms, log));
  EXPECT_THROW(runToEnd(io, allOf(std::move(tasks))), std::runtime_error);
  EXPECT_EQ(log.back(), "end later") << "the error waited for the other task";
}

TEST(AllOf, NoTasksIsNoWait) {
  asio::io_context io;
  EXPECT_TRUE(runToEnd(io, allOf(std::vector<asio::awaitable<std::string>>{})).empty());
}

} // namespace
} // namespace csiop::runtime
