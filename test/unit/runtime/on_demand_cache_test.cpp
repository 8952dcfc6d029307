// OnDemandCache: a real Informer against a local server scripted like the API server, with the
// idle time on a ManualClock. Nothing is requested until a decision demands the cache; it stops,
// forgetting what it held without telling the handlers, once nothing has wanted it for the idle
// time; the next demand lists afresh.
#include <gtest/gtest.h>

#include <csiop/runtime/informer.hpp>
#include <csiop/runtime/on_demand_cache.hpp>
#include <csiop/testsupport/manual_clock.hpp>

#include "../kube/test_server.hpp"
#include "test_util.hpp"

namespace csiop::runtime {
namespace {

using kube::testing::Reply;
using kube::testing::Request;
using kube::testing::TestServer;
using namespace std::chrono_literals;

constexpr auto kIdle = 120s;

bool isWatch(const Request& r) {
  return r.target.find("watch=true") != std::string::npos;
}

class OnDemandCacheTest : public ::testing::Test {
protected:
  OnDemandCacheTest() {
    server_ = std::make_unique<TestServer>(io_, [this](const Request& r) {
      if (isWatch(r)) {
        ++watches_;
        return Reply{.chunks = {"\n"}, .holdOpen = true};
      }
      ++lists_;
      const Json pod = {{"metadata",
                         {{"name", "p" + std::to_string(lists_)},
                          {"namespace", "ns"},
                          {"resourceVersion", std::to_string(lists_)}}}};
      const Json body = {{"kind", "PodList"},
                         {"apiVersion", "v1"},
                         {"metadata", {{"resourceVersion", std::to_string(lists_)}}},
                         {"items", Json::array({pod})}};
      return Reply{.body = body.dump()};
    });
    client_ =
        std::make_unique<kube::Client>(io_.get_executor(), kube::Config{.server = server_->url()});
    informer_ = std::make_unique<Informer>(*client_, kube::resources::pods);
    informer_->onChange([this](const Json*, const Json* updated) {
      if (updated == nullptr) {
        ++deletionsHeard_;
      }
    });
    cache_ =
        std::make_unique<OnDemandCache>(io_.get_executor(), *informer_, clock_, kIdle, "the pods");
  }

  ~OnDemandCacheTest() override {
    cache_->stop();
    test::runUntil(
        io_, [&] { return !cache_->running(); }, 2s);
  }

  bool demand() { return test::runCoroutine(io_, cache_->demand(5s), 10s); }

  boost::asio::io_context io_;
  testsupport::ManualClock clock_{io_};
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<kube::Client> client_;
  std::unique_ptr<Informer> informer_;
  std::unique_ptr<OnDemandCache> cache_;
  int lists_ = 0;
  int watches_ = 0;
  int deletionsHeard_ = 0;
};

TEST_F(OnDemandCacheTest, NothingIsRequestedUntilADemandWhichWaitsForTheList) {
  io_.run_for(100ms);
  EXPECT_EQ(lists_ + watches_, 0);
  EXPECT_FALSE(cache_->running());
  ASSERT_TRUE(demand());
  EXPECT_TRUE(cache_->synced());
  EXPECT_EQ(lists_, 1);
  EXPECT_NE(informer_->get("ns", "p1"), nullptr);
  ASSERT_TRUE(test::runUntil(
      io_, [&] { return watches_ == 1; }, 5s));
  // A second demand while it runs lists nothing again.
  ASSERT_TRUE(demand());
  EXPECT_EQ(lists_, 1);
  EXPECT_EQ(cache_->starts(), 1U);
}

TEST_F(OnDemandCacheTest, IdleItStopsAndForgetsSilentlyAndTheNextDemandListsAfresh) {
  ASSERT_TRUE(demand());
  clock_.advance(kIdle - 1s);
  io_.run_for(50ms);
  EXPECT_TRUE(cache_->running()) << "not idle for long enough yet";
  clock_.advance(1s);
  ASSERT_TRUE(test::runUntil(
      io_, [&] { return !cache_->running(); }, 5s));
  EXPECT_EQ(informer_->size(), 0U) << "what it held is dropped";
  EXPECT_EQ(deletionsHeard_, 0) << "without telling the handlers";
  EXPECT_FALSE(cache_->synced());
  ASSERT_TRUE(demand());
  EXPECT_EQ(lists_, 2);
  EXPECT_NE(informer_->get("ns", "p2"), nullptr);
  EXPECT_EQ(cache_->starts(), 2U);
}

TEST_F(OnDemandCacheTest, AWantWithinTheIdleTimeKeepsItRunning) {
  ASSERT_TRUE(demand());
  clock_.advance(kIdle / 2);
  cache_->want();
  clock_.advance(kIdle / 2);
  io_.run_for(50ms);
  EXPECT_TRUE(cache_->running());
  clock_.advance(kIdle / 2);
  ASSERT_TRUE(test::runUntil(
      io_, [&] { return !cache_->running(); }, 5s));
  EXPECT_EQ(lists_, 1);
}

TEST_F(OnDemandCacheTest, HeldItRunsWithoutADemandAndReleasedItStopsAfterTheIdleTime) {
  cache_->hold(true);
  ASSERT_TRUE(test::runUntil(
      io_, [&] { return cache_->synced(); }, 5s))
      << "started by the hold";
  for (int i = 0; i < 3; ++i) {
    clock_.advance(kIdle);
    io_.run_for(20ms);
  }
  EXPECT_TRUE(cache_->running()) << "no idle stop while held";
  cache_->hold(false);
  clock_.advance(kIdle - 1s);
  io_.run_for(50ms);
  EXPECT_TRUE(cache_->running()) << "the idle time runs from the release";
  clock_.advance(1s);
  ASSERT_TRUE(test::runUntil(
      io_, [&] { return !cache_->running(); }, 5s));
  EXPECT_EQ(lists_, 1);
}

TEST_F(OnDemandCacheTest, AfterStopNoDemandStartsItAgain) {
  ASSERT_TRUE(demand());
  cache_->stop();
  ASSERT_TRUE(test::runUntil(
      io_, [&] { return !cache_->running(); }, 5s));
  EXPECT_FALSE(test::runCoroutine(io_, cache_->demand(1s), 5s));
  EXPECT_EQ(lists_, 1);
}

} // namespace
} // namespace csiop::runtime
