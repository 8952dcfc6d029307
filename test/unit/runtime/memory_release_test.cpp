// runtime/memory_release.hpp: freed memory handed back once the work stops, once per quiet spell.
#include <chrono>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <csiop/runtime/memory_release.hpp>
#include <csiop/testsupport/manual_clock.hpp>

namespace csiop::runtime {
namespace {

using namespace std::chrono_literals;

class IdleMemoryReleaseTest : public ::testing::Test {
protected:
  boost::asio::io_context io;
  testsupport::ManualClock clock{io};
  int released = 0;
  IdleMemoryRelease idle{io.get_executor(), clock, 5s, [this] { ++released; }};
};

TEST_F(IdleMemoryReleaseTest, ReleasesOnceTheWorkHasStoppedForTheQuietPeriod) {
  clock.advance(1h);
  EXPECT_EQ(released, 0); // no work yet: nothing freed to hand back
  idle.activity();
  clock.advance(4s);
  idle.activity(); // still busy: the wait starts again
  clock.advance(4s);
  EXPECT_EQ(released, 0);
  clock.advance(1s);
  EXPECT_EQ(released, 1);
  clock.advance(1h);
  EXPECT_EQ(released, 1); // once per quiet spell
  EXPECT_EQ(idle.releases(), 1u);
  idle.activity();
  clock.advance(5s);
  EXPECT_EQ(released, 2);
}

TEST_F(IdleMemoryReleaseTest, NothingAfterStop) {
  idle.activity();
  idle.stop();
  idle.activity();
  clock.advance(1h);
  EXPECT_EQ(released, 0);
  EXPECT_EQ(clock.pendingTimers(), 0u);
}

} // namespace
} // namespace csiop::runtime
