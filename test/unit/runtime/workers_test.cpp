// Workers: the worker loop on a real work queue, with a scripted reconcile: what each outcome
// does to the key, that a key is never reconciled twice at once, that an exception is an Error,
// that every reconcile is counted, that an Error waits as long as the server asked, and that an
// exception out of the loop itself is the worker's supervisor's.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csiop/runtime/workers.hpp>
#include <csiop/testsupport/manual_clock.hpp>

#include "test_util.hpp"

namespace csiop::runtime {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// The value of one series of the exposition, e.g. csiop_reconcile_total{result="error"}.
double series(const OperatorMetrics& metrics, const std::string& name) {
  const std::string text = metrics.exposition();
  const std::size_t at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + name.size() + 2));
}

class WorkersTest : public ::testing::Test {
protected:
  WorkersTest()
      : queue_(io_.get_executor()),
        workers_(queue_, metrics_, [this](std::string key) { return reconcile(std::move(key)); }) {}

  // Scripted: "done" converges; "requeue" asks to be looked at again twice, then converges;
  // "error" fails twice, then converges; "throw" throws once, then converges; "slow" takes
  // 50 ms. Counts reconciles by key and the most running at once per key.
  asio::awaitable<ReconcileResult> reconcile(std::string key) {
    const int n = ++calls_[key];
    backoffSeen_[key].push_back(queue_.numRequeues(key));
    ++running_[key];
    maxRunning_[key] = std::max(maxRunning_[key], running_[key]);
    if (key == "slow") {
      asio::steady_timer t(io_, 50ms);
      co_await t.async_wait(asio::use_awaitable);
    }
    --running_[key];
    if (key == "requeue" && n <= 2) {
      co_return ReconcileResult::requeueAfter(10ms);
    }
    if (key == "error" && n <= 2) {
      co_return ReconcileResult::error("scripted failure");
    }
    if (key == "throw" && n == 1) {
      throw std::runtime_error("scripted exception");
    }
    co_return ReconcileResult::done();
  }

  bool runUntil(const std::function<bool()>& done) { return test::runUntil(io_, done, 10s); }

  asio::io_context io_;
  WorkQueue queue_;
  OperatorMetrics metrics_;
  TaskSupervisor supervisor_;
  Workers workers_;
  std::map<std::string, int> calls_, running_, maxRunning_;
  std::map<std::string, std::vector<int>> backoffSeen_; // the key's failures at each reconcile
};

TEST_F(WorkersTest, EachOutcomeDoesWhatItSaysAndEveryReconcileIsCounted) {
  int hooks = 0;
  workers_.afterEach([&] { ++hooks; });
  workers_.start(io_.get_executor(), 2, supervisor_);
  for (const char* key : {"done", "requeue", "error", "throw"}) {
    queue_.add(key);
  }
  ASSERT_TRUE(runUntil([&] {
    return calls_["done"] == 1 && calls_["requeue"] == 3 && calls_["error"] == 3 &&
           calls_["throw"] == 2 && queue_.numWaiting() == 0 && queue_.numProcessing() == 0;
  })) << "requeue "
      << calls_["requeue"] << ", error " << calls_["error"] << ", throw " << calls_["throw"];
  EXPECT_EQ(hooks, 9);
  // A requeue is no failure: no backoff builds up; errors (and the exception) back off.
  EXPECT_EQ(backoffSeen_["requeue"], (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(backoffSeen_["error"], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(backoffSeen_["throw"], (std::vector<int>{0, 1}));
  // Converged keys have their backoff reset; nothing is queued any more.
  for (const char* key : {"done", "requeue", "error", "throw"}) {
    EXPECT_EQ(queue_.numRequeues(key), 0) << key;
  }
  EXPECT_EQ(queue_.len(), 0u);
  EXPECT_EQ(series(metrics_, "csiop_reconcile_total{result=\"success\"}"), 4);
  EXPECT_EQ(series(metrics_, "csiop_reconcile_total{result=\"requeue\"}"), 2);
  EXPECT_EQ(series(metrics_, "csiop_reconcile_total{result=\"error\"}"), 3);
  EXPECT_FALSE(supervisor_.failed()) << "an exception out of a reconcile is no worker's end";
  queue_.shutdown();
}

TEST_F(WorkersTest, AKeyAddedWhileItIsReconciledWaitsForThatReconcile) {
  workers_.start(io_.get_executor(), 4, supervisor_);
  queue_.add("slow");
  ASSERT_TRUE(runUntil([&] { return running_["slow"] == 1; }));
  queue_.add("slow"); // four idle workers, yet the key is in flight
  ASSERT_TRUE(runUntil([&] { return calls_["slow"] == 2 && queue_.numProcessing() == 0; }));
  EXPECT_EQ(maxRunning_["slow"], 1);
  queue_.shutdown();
}

TEST_F(WorkersTest, WorkersEndWhenTheQueueShutsDown) {
  workers_.start(io_.get_executor(), 3, supervisor_);
  queue_.shutdown();
  io_.run_for(1s); // returns once nothing is left to run: every worker has ended
  EXPECT_TRUE(io_.stopped());
  EXPECT_TRUE(calls_.empty());
  EXPECT_FALSE(supervisor_.failed()) << supervisor_.failure();
}

// Not a reconcile's failure (that is an Error) but the loop's own: the worker ends, and its
// supervisor knows which and why.
TEST_F(WorkersTest, AnExceptionOutOfTheLoopEndsTheWorkerAndIsItsSupervisorsFailure) {
  workers_.afterEach([] { throw std::logic_error("the hook broke"); });
  workers_.start(io_.get_executor(), 1, supervisor_);
  queue_.add("done");
  ASSERT_TRUE(runUntil([&] { return supervisor_.failed(); }));
  EXPECT_EQ(supervisor_.failure(), "worker 1 ended: the hook broke");
  queue_.shutdown();
}

// An Error whose server asked for a wait (Retry-After) longer than the key's backoff (5 ms) is
// queued again after that wait; one that asked for nothing, after the backoff.
TEST(WorkersRetryAfterTest, AnErrorWaitsAsLongAsTheServerAskedWhenThatIsLonger) {
  asio::io_context io;
  testsupport::ManualClock clock(io);
  WorkQueue queue(io.get_executor(), clock);
  OperatorMetrics metrics;
  TaskSupervisor supervisor;
  std::map<std::string, int> calls;
  Workers workers(queue, metrics, [&](std::string key) -> asio::awaitable<ReconcileResult> {
    ++calls[key];
    co_return key == "throttled" ? ReconcileResult::error("429 TooManyRequests", 2s)
                                 : ReconcileResult::error("500 InternalError");
  });
  workers.start(io.get_executor(), 1, supervisor);
  queue.add("throttled");
  queue.add("plain");
  clock.settle();
  ASSERT_EQ(calls, (std::map<std::string, int>{{"plain", 1}, {"throttled", 1}}));
  clock.advance(5ms);
  EXPECT_EQ(calls["plain"], 2) << "after its backoff";
  clock.advance(2s - 5ms - 1ms);
  EXPECT_EQ(calls["throttled"], 1) << "before the server's wait";
  clock.advance(1ms);
  EXPECT_EQ(calls["throttled"], 2) << "at the server's wait";
  queue.shutdown();
  clock.settle();
  EXPECT_FALSE(supervisor.failed()) << supervisor.failure();
}

} // namespace
} // namespace csiop::runtime
