#include <csignal>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <csiop/runtime/signals.hpp>

#include "test_util.hpp"

namespace csiop::runtime {
namespace {

TEST(SignalHandlerTest, SigtermRunsTheCallbackOnTheIoContext) {
  boost::asio::io_context io;
  int caught = 0;
  SignalHandler handler(io.get_executor(), [&](int signal) { caught = signal; });
  std::raise(SIGTERM);
  EXPECT_EQ(caught, 0) << "not in signal context";
  ASSERT_TRUE(test::runUntil(io, [&] { return caught != 0; }));
  EXPECT_EQ(caught, SIGTERM);
  EXPECT_EQ(handler.received(), 1);
}

TEST(SignalHandlerTest, SigintToo) {
  boost::asio::io_context io;
  int caught = 0;
  SignalHandler handler(io.get_executor(), [&](int signal) { caught = signal; });
  std::raise(SIGINT);
  ASSERT_TRUE(test::runUntil(io, [&] { return caught != 0; }));
  EXPECT_EQ(caught, SIGINT);
}

TEST(SignalHandlerTest, SecondSignalExitsAtOnce) {
  EXPECT_EXIT(
      {
        boost::asio::io_context io;
        int calls = 0;
        SignalHandler handler(io.get_executor(), [&](int) { ++calls; });
        std::raise(SIGTERM);
        test::runUntil(io, [&] { return calls == 1; });
        std::raise(SIGINT);
        test::runUntil(
            io, [] { return false; }, std::chrono::seconds(20));
        std::_Exit(0); // not reached when the second signal exits
      },
      ::testing::ExitedWithCode(1), "");
}

TEST(SignalHandlerTest, SecondSignalIsOnlyCountedWhenExitIsDisabled) {
  boost::asio::io_context io;
  int calls = 0;
  SignalHandler handler(
      io.get_executor(), [&](int) { ++calls; }, {SIGTERM}, false);
  std::raise(SIGTERM);
  ASSERT_TRUE(test::runUntil(io, [&] { return handler.received() == 1; }));
  std::raise(SIGTERM);
  ASSERT_TRUE(test::runUntil(io, [&] { return handler.received() == 2; }));
  EXPECT_EQ(calls, 1);
}

TEST(SignalHandlerTest, CancelLetsTheIoContextFinish) {
  boost::asio::io_context io;
  SignalHandler handler(io.get_executor(), [](int) {});
  io.restart();
  EXPECT_EQ(io.poll(), 0u);
  EXPECT_FALSE(io.stopped()) << "the pending signal wait is outstanding work";
  handler.cancel();
  io.restart();
  io.run_for(std::chrono::seconds(10));
  EXPECT_TRUE(io.stopped());
}

} // namespace
} // namespace csiop::runtime
