// Informer: the real Kubernetes client against a local server scripted like the API server
// (list replies, chunked watch streams, 410s, errors, broken connections). Tests wait for
// conditions (the io_context runs until they hold) rather than for fixed times; the only
// timings asserted are lower bounds (a backoff is at least its length) and "stop() ends run()
// well before a pending backoff would".
#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>

#include <csiop/runtime/informer.hpp>

#include "../kube/test_server.hpp"
#include "test_util.hpp"

namespace csiop::runtime {
namespace {

using kube::testing::Reply;
using kube::testing::Request;
using kube::testing::TestServer;
namespace asio = boost::asio;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

Json configMap(const std::string& name, const std::string& rv, const std::string& value = "v") {
  return {{"metadata", {{"name", name}, {"namespace", "ns"}, {"resourceVersion", rv}}},
          {"data", {{"k", value}}}};
}

// A list as the API server returns it: items without apiVersion/kind.
Reply listReply(const std::vector<Json>& items, const std::string& rv) {
  const Json body = {{"kind", "ConfigMapList"},
                     {"apiVersion", "v1"},
                     {"metadata", {{"resourceVersion", rv}}},
                     {"items", items}};
  return Reply{.body = body.dump()};
}

std::string event(const std::string& type, Json object) {
  object["apiVersion"] = "v1";
  object["kind"] = "ConfigMap";
  return Json{{"type", type}, {"object", object}}.dump() + "\n";
}

std::string bookmark(const std::string& rv) {
  return event("BOOKMARK", {{"metadata", {{"resourceVersion", rv}}}});
}

Json status(int code, const std::string& reason) {
  return {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
          {"message", "m"},   {"reason", reason},   {"code", code}};
}

std::string errorEvent(int code, const std::string& reason) {
  return Json{{"type", "ERROR"}, {"object", status(code, reason)}}.dump() + "\n";
}

Reply errorReply(int code, const std::string& reason) {
  return Reply{.status = code, .body = status(code, reason).dump()};
}

// A watch that streams these lines and stays open.
Reply openWatch(std::vector<std::string> lines = {}) {
  return Reply{.chunks = lines.empty() ? std::vector<std::string>{"\n"} : std::move(lines),
               .holdOpen = true};
}

std::string nameAt(const Json* object) {
  return (*object)["metadata"].value("name", "") + "@" +
         (*object)["metadata"].value("resourceVersion", "");
}

// What a handler saw: "add a@1", "update a@1>a@11", "delete b@2".
std::string describe(const Json* old, const Json* updated) {
  if (old == nullptr)
    return "add " + nameAt(updated);
  if (updated == nullptr)
    return "delete " + nameAt(old);
  return "update " + nameAt(old) + ">" + nameAt(updated);
}

std::string queryValue(const std::string& target, const std::string& key) {
  const std::string needle = key + "=";
  std::size_t at = target.find("?" + needle);
  if (at == std::string::npos)
    at = target.find("&" + needle);
  if (at == std::string::npos)
    return "<none>";
  const std::size_t start = at + 1 + needle.size();
  return target.substr(start, target.find('&', start) - start);
}

bool isWatch(const Request& r) {
  return r.target.find("watch=true") != std::string::npos;
}

class InformerTest : public ::testing::Test {
protected:
  // The n-th (1-based) list or watch request gets script(n, request).
  using Script = std::function<Reply(std::size_t n, const Request&)>;

  void serve(Script lists, Script watches, kube::ResourceRef ref = kube::resources::configmaps,
             std::string labelSelector = {}) {
    server_ = std::make_unique<TestServer>(io_, [this, lists, watches](const Request& r) {
      auto& times = isWatch(r) ? watchTimes_ : listTimes_;
      times.push_back(Clock::now());
      return isWatch(r) ? watches(times.size(), r) : lists(times.size(), r);
    });
    kube::ClientOptions options;
    options.observer = [this](std::string_view verb, std::string_view, int code,
                              std::chrono::nanoseconds) {
      if (verb == "list" && code != 200)
        ++failedLists_;
    };
    client_ = std::make_unique<kube::Client>(
        io_.get_executor(), kube::Config{.server = server_->url()}, std::move(options));
    informer_ = std::make_unique<Informer>(*client_, std::move(ref), std::move(labelSelector));
    informer_->onChange(
        [this](const Json* old, const Json* updated) { seen_.push_back(describe(old, updated)); });
  }

  void start() {
    asio::co_spawn(io_, informer_->run(), [this](std::exception_ptr e) {
      runError_ = e;
      runDone_ = true;
    });
  }

  // Runs the io_context until done() holds; false if it does not within `limit`.
  bool runUntil(const std::function<bool()>& done, std::chrono::milliseconds limit = 5s) {
    return runtime::test::runUntil(io_, done, limit);
  }

  // stop() and wait for run() to end; how long that took.
  Clock::duration stopAndJoin() {
    const auto stopped = Clock::now();
    informer_->stop();
    EXPECT_TRUE(runUntil([&] { return runDone_; }, 2s)) << "run() did not end after stop()";
    return Clock::now() - stopped;
  }

  void TearDown() override {
    // A test that failed early leaves scripts that refer to its locals: answer without them.
    if (server_)
      server_->setHandler([](const Request&) { return errorReply(503, "ServiceUnavailable"); });
    if (informer_ && !runDone_)
      stopAndJoin();
    if (runError_) {
      try {
        std::rethrow_exception(runError_);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "run() threw: " << e.what();
      }
    }
  }

  std::vector<std::string> targets(bool watches) const {
    std::vector<std::string> out;
    for (const auto& r : server_->requests())
      if (isWatch(r) == watches)
        out.push_back(r.target);
    return out;
  }

  asio::io_context io_;
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<kube::Client> client_;
  std::unique_ptr<Informer> informer_;
  bool runDone_ = false;
  std::exception_ptr runError_;
  std::vector<std::string> seen_;
  std::vector<Clock::time_point> listTimes_;
  std::vector<Clock::time_point> watchTimes_;
  int failedLists_ = 0;
};

TEST_F(InformerTest, ListsThenWatchesFromTheListVersionPassingTheLabelSelectorToBoth) {
  serve(
      [](std::size_t, const Request&) {
        return listReply({configMap("a", "1"), configMap("b", "2")}, "10");
      },
      [](std::size_t, const Request&) { return openWatch(); }, kube::resources::configmaps,
      "app=x,tier!=db");
  EXPECT_FALSE(informer_->synced());
  start();
  ASSERT_TRUE(runUntil([&] { return informer_->watchesStarted() == 1; }));
  EXPECT_TRUE(informer_->synced());
  EXPECT_EQ(informer_->relists(), 1u);

  const auto lists = targets(false);
  ASSERT_EQ(lists.size(), 1u);
  EXPECT_TRUE(lists[0].starts_with("/api/v1/configmaps?")) << lists[0]; // every namespace
  EXPECT_EQ(queryValue(lists[0], "labelSelector"), "app%3Dx%2Ctier%21%3Ddb") << lists[0];
  const auto watches = targets(true);
  ASSERT_EQ(watches.size(), 1u);
  EXPECT_TRUE(watches[0].starts_with("/api/v1/configmaps?")) << watches[0];
  EXPECT_EQ(queryValue(watches[0], "resourceVersion"), "10") << watches[0];
  EXPECT_EQ(queryValue(watches[0], "labelSelector"), "app%3Dx%2Ctier%21%3Ddb") << watches[0];
  EXPECT_EQ(queryValue(watches[0], "allowWatchBookmarks"), "true") << watches[0];
  // The server ends the watch after a jittered 5..10 minutes, like client-go's reflector.
  const int timeout = std::stoi(queryValue(watches[0], "timeoutSeconds"));
  EXPECT_GE(timeout, 300);
  EXPECT_LT(timeout, 600);

  EXPECT_EQ(seen_, (std::vector<std::string>{"add a@1", "add b@2"}));
  EXPECT_EQ(informer_->size(), 2u);
  const Json* a = informer_->get("ns", "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ((*a)["data"]["k"], "v");
  // Cached objects describe themselves although list items carry no apiVersion/kind.
  EXPECT_EQ((*a)["apiVersion"], "v1");
  EXPECT_EQ((*a)["kind"], "ConfigMap");
  EXPECT_EQ(informer_->get("", "a"), nullptr);
  EXPECT_EQ(informer_->get("other", "a"), nullptr);
  EXPECT_EQ(informer_->get("ns", "c"), nullptr);
  std::vector<std::string> listed;
  for (const Json* object : informer_->list())
    listed.push_back(nameAt(object));
  EXPECT_EQ(listed, (std::vector<std::string>{"a@1", "b@2"}));
}

TEST_F(InformerTest, WatchEventsReachTheCacheAndEveryHandler) {
  serve(
      [](std::size_t, const Request&) {
        return listReply({configMap("a", "1"), configMap("b", "2")}, "10");
      },
      [](std::size_t, const Request&) {
        return openWatch({event("ADDED", configMap("c", "11")),
                          event("MODIFIED", configMap("a", "12", "changed")),
                          event("DELETED", configMap("b", "13")),
                          event("DELETED", configMap("never-seen", "14"))});
      });
  std::vector<std::string> second;
  std::vector<std::string> oldValues;
  informer_->onChange([&](const Json* old, const Json* updated) {
    second.push_back(describe(old, updated));
    if (old != nullptr && updated != nullptr)
      oldValues.push_back((*old)["data"]["k"]);
  });
  start();
  ASSERT_TRUE(runUntil([&] { return seen_.size() == 5; }));
  const std::vector<std::string> expected = {"add a@1", "add b@2", "add c@11", "update a@1>a@12",
                                             "delete b@2"};
  EXPECT_EQ(seen_, expected);
  EXPECT_EQ(second, expected);
  EXPECT_EQ(oldValues, std::vector<std::string>{"v"});
  ASSERT_NE(informer_->get("ns", "a"), nullptr);
  EXPECT_EQ((*informer_->get("ns", "a"))["data"]["k"], "changed");
  EXPECT_EQ(informer_->get("ns", "b"), nullptr);
  ASSERT_NE(informer_->get("ns", "c"), nullptr);
  EXPECT_EQ((*informer_->get("ns", "c"))["kind"], "ConfigMap");
  EXPECT_EQ(informer_->size(), 2u);
  EXPECT_EQ(informer_->relists(), 1u);
}

TEST_F(InformerTest, ATransformCutsObjectsDownAndKeepsOthersOutOfTheCache) {
  serve(
      [](std::size_t, const Request&) {
        return listReply({configMap("a", "1"), configMap("b", "2", "drop")}, "10");
      },
      [](std::size_t, const Request&) {
        return openWatch({event("ADDED", configMap("c", "11", "drop")),
                          event("MODIFIED", configMap("a", "12", "changed")),
                          event("ADDED", configMap("d", "13")),
                          // an update the transform refuses: it leaves the cache as a deletion
                          event("MODIFIED", configMap("d", "14", "drop")),
                          // an update that differs only in what the transform cuts: stored, unheard
                          event("MODIFIED", configMap("a", "15", "cut away")),
                          event("ADDED", configMap("e", "16"))});
      });
  informer_->setTransform([](Json& object) {
    if (object["data"]["k"] == "drop") {
      return false;
    }
    // Only the value's first letter survives: "changed" and "cut away" look alike.
    object["data"] = {{"initial", object["data"]["k"].get<std::string>().substr(0, 1)}};
    return true;
  });
  start();
  ASSERT_TRUE(runUntil([&] { return seen_.size() == 5; }));
  EXPECT_EQ(seen_, (std::vector<std::string>{"add a@1", "update a@1>a@12", "add d@13",
                                             "delete d@13", "add e@16"}));
  EXPECT_EQ((*informer_->get("ns", "a"))["metadata"]["resourceVersion"], "15");
  ASSERT_NE(informer_->get("ns", "a"), nullptr);
  EXPECT_EQ((*informer_->get("ns", "a"))["data"], (Json{{"initial", "c"}}));
  for (const char* gone : {"b", "c", "d"}) {
    EXPECT_EQ(informer_->get("ns", gone), nullptr) << gone;
  }
  EXPECT_EQ(informer_->size(), 2u);
}

// An index files each object under the values it names; byIndex and countByIndex follow every
// list, addition, change, deletion and relist.
TEST_F(InformerTest, AnIndexFollowsListsEventsAndRelists) {
  serve(
      [](std::size_t n, const Request&) {
        if (n == 1)
          return listReply({configMap("a", "1", "x"), configMap("b", "2", "x")}, "10");
        // The relist: a moved to y, b went, c came with x.
        return listReply({configMap("a", "30", "y"), configMap("c", "31", "x")}, "40");
      },
      [](std::size_t n, const Request&) {
        if (n == 1)
          return openWatch({event("ADDED", configMap("d", "11", "y")),
                            event("MODIFIED", configMap("b", "12", "y")),
                            event("DELETED", configMap("d", "13", "y")),
                            // filed under no value at all
                            event("ADDED", configMap("e", "14", "")), errorEvent(410, "Expired")});
        return openWatch();
      });
  informer_->addIndex("value", [](const Json& object) {
    const std::string v = object["data"]["k"].get<std::string>();
    return v.empty() ? std::vector<std::string>{} : std::vector<std::string>{v};
  });
  const auto names = [&](const std::string& value) {
    std::vector<std::string> out;
    for (const Json* o : informer_->byIndex("value", value))
      out.push_back(nameAt(o));
    return out;
  };
  start();
  ASSERT_TRUE(runUntil([&] { return informer_->synced(); }));
  ASSERT_TRUE(runUntil([&] { return informer_->relists() == 2; }));
  EXPECT_EQ(names("x"), (std::vector<std::string>{"c@31"}));
  EXPECT_EQ(names("y"), (std::vector<std::string>{"a@30"}));
  EXPECT_EQ(informer_->countByIndex("value", "y"), 1u);
  EXPECT_EQ(informer_->countByIndex("value", "nothing"), 0u);
  EXPECT_TRUE(names("nothing").empty());
  EXPECT_THROW(informer_->byIndex("unknown", "x"), std::logic_error);
}

// Between the list and the relist, the index follows each event.
TEST_F(InformerTest, AnIndexFollowsEachWatchEvent) {
  serve(
      [](std::size_t, const Request&) {
        return listReply({configMap("a", "1", "x"), configMap("b", "2", "x")}, "10");
      },
      [](std::size_t, const Request&) {
        return openWatch({event("ADDED", configMap("d", "11", "y")),
                          event("MODIFIED", configMap("b", "12", "y")),
                          event("ADDED", configMap("e", "13", "x")),
                          event("DELETED", configMap("e", "14", "x"))});
      });
  informer_->addIndex("value", [](const Json& object) {
    return std::vector<std::string>{object["data"]["k"].get<std::string>()};
  });
  start();
  ASSERT_TRUE(runUntil([&] { return seen_.size() == 6; }));
  EXPECT_EQ(informer_->countByIndex("value", "x"), 1u); // a; b moved, e came and went
  EXPECT_EQ(informer_->countByIndex("value", "y"), 2u); // b, d
  ASSERT_EQ(informer_->byIndex("value", "x").size(), 1u);
  EXPECT_EQ(nameAt(informer_->byIndex("value", "x").front()), "a@1");
}

TEST_F(InformerTest, AClosedWatchResumesFromTheLastVersionABookmarkIncluded) {
  serve([](std::size_t, const Request&) { return listReply({configMap("a", "1")}, "10"); },
        [](std::size_t n, const Request&) {
          if (n == 1) // ends normally, as at timeoutSeconds
            return Reply{.chunks = {event("ADDED", configMap("c", "11")), bookmark("20")}};
          if (n == 2)
            return Reply{.chunks = {event("MODIFIED", configMap("c", "21", "x"))}};
          return openWatch();
        });
  start();
  ASSERT_TRUE(runUntil([&] { return informer_->watchesStarted() == 3; }));
  const auto watches = targets(true);
  ASSERT_EQ(watches.size(), 3u);
  EXPECT_EQ(queryValue(watches[0], "resourceVersion"), "10");
  EXPECT_EQ(queryValue(watches[1], "resourceVersion"), "20"); // the bookmark's, not c's 11
  EXPECT_EQ(queryValue(watches[2], "resourceVersion"), "21");
  EXPECT_EQ(informer_->relists(), 1u); // resumed, not relisted
  EXPECT_EQ(targets(false).size(), 1u);
  // A bookmark is no change.
  EXPECT_EQ(seen_, (std::vector<std::string>{"add a@1", "add c@11", "update c@11>c@21"}));
}

// What a test waits on to know a cache has caught up: the list's version, then each event's
// once the store shows it, a bookmark's included.
TEST_F(InformerTest, TheLastSyncResourceVersionIsTheListsThenTheLastEventsOnceApplied) {
  const auto feed = std::make_shared<kube::testing::ChunkFeed>();
  serve([](std::size_t, const Request&) { return listReply({configMap("a", "1")}, "10"); },
        [&](std::size_t, const Request&) { return Reply{.feed = feed}; });
  EXPECT_EQ(informer_->lastSyncResourceVersion(), "");
  start();
  ASSERT_TRUE(runUntil([&] { return informer_->watchesStarted() == 1; }));
  EXPECT_EQ(informer_->lastSyncResourceVersion(), "10");
  feed->push(event("ADDED", configMap("c", "11")));
  ASSERT_TRUE(runUntil([&] { return informer_->lastSyncResourceVersion() == "11"; }));
  EXPECT_NE(informer_->get("ns", "c"), nullptr);
  feed->push(bookmark("20"));
  ASSERT_TRUE(runUntil([&] { return informer_->lastSyncResourceVersion() == "20"; }));
  EXPECT_EQ(seen_, (std::vector<std::string>{"add a@1", "add c@11"}));
}

TEST_F(InformerTest, ABrokenWatchResumesAfterABackoffWithoutRelisting) {
  serve([](std::size_t, const Request&) { return listReply({configMap("a", "1")}, "10"); },
        [](std::size_t n, const Request&) {
          if (n == 1)
            return Reply{.chunks = {event("ADDED", configMap("c", "11")) + R"({"type":"MOD)"},
                         .cutMidStream = true};
          return openWatch();
        });
  start();
  ASSERT_TRUE(runUntil([&] { return informer_->watchesStarted() == 2; }));
  const auto watches = targets(true);
  ASSERT_EQ(watches.size(), 2u);
  EXPECT_EQ(queryValue(watches[1], "resourceVersion"), "11");
  EXPECT_EQ(informer_->relists(), 1u);
  EXPECT_EQ(targets(false).size(), 1u);
  EXPECT_GE(watchTimes_[1] - watchTimes_[0], 190ms); // the first backoff is 200 ms
  EXPECT_EQ(seen_, (std::vector<std::string>{"add a@1", "add c@11"}));
}

TEST_F(InformerTest, AnExpiredWatchRelistsAndTheRelistNotifiesEveryDifference) {
  serve(
      [](std::size_t n, const Request&) {
        if (n == 1)
          return listReply({configMap("a", "1"), configMap("b", "2"), configMap("c", "3")}, "10");
        // While the informer could not watch, b changed, c went and d came; a is as it was.
        return listReply({configMap("a", "1"), configMap("b", "15", "new"), configMap("d", "16")},
                         "20");
      },
      [](std::size_t n, const Request&) {
        if (n == 1)
          return openWatch({errorEvent(410, "Expired")});
        return openWatch({event("MODIFIED", configMap("d", "21"))});
      });
  start();
  ASSERT_TRUE(runUntil([&] { return seen_.size() == 7; }));
  EXPECT_EQ(seen_, (std::vector<std::string>{"add a@1", "add b@2", "add c@3", "delete c@3",
                                             "update b@2>b@15", "add d@16", "update d@16>d@21"}));
  EXPECT_EQ(informer_->relists(), 2u);
  EXPECT_EQ(informer_->watchesStarted(), 2u);
  EXPECT_TRUE(informer_->synced());
  const auto watches = targets(true);
  ASSERT_EQ(watches.size(), 2u);
  EXPECT_EQ(queryValue(watches[1], "resourceVersion"), "20"); // the relist's
  EXPECT_EQ(informer_->get("ns", "c"), nullptr);
  ASSERT_NE(informer_->get("ns", "b"), nullptr);
  EXPECT_EQ((*informer_->get("ns", "b"))["data"]["k"], "new");
  EXPECT_EQ((*informer_->get("ns", "b"))["kind"], "ConfigMap");
  EXPECT_EQ(informer_->size(), 3u);
}

TEST_F(InformerTest, AWatchRefusedWith410Relists) {
  serve(
      [](std::size_t n, const Request&) {
        return n == 1 ? listReply({configMap("a", "1")}, "10") : listReply({}, "30");
      },
      [](std::size_t n, const Request&) {
        return n == 1 ? errorReply(410, "Expired") : openWatch();
      });
  start();
  ASSERT_TRUE(runUntil([&] { return targets(true).size() == 2; }));
  EXPECT_EQ(informer_->relists(), 2u);
  EXPECT_EQ(queryValue(targets(true)[1], "resourceVersion"), "30");
  EXPECT_EQ(seen_, (std::vector<std::string>{"add a@1", "delete a@1"}));
  EXPECT_EQ(informer_->size(), 0u);
}

TEST_F(InformerTest, AnErrorEventInTheStreamRelists) {
  serve(
      [](std::size_t n, const Request&) {
        return n == 1 ? listReply({configMap("a", "1")}, "10")
                      : listReply({configMap("a", "5", "w")}, "40");
      },
      [](std::size_t n, const Request&) {
        return n == 1 ? openWatch({errorEvent(500, "InternalError")}) : openWatch();
      });
  start();
  ASSERT_TRUE(runUntil([&] { return targets(true).size() == 2; }));
  EXPECT_EQ(informer_->relists(), 2u);
  EXPECT_EQ(queryValue(targets(true)[1], "resourceVersion"), "40");
  EXPECT_EQ(seen_, (std::vector<std::string>{"add a@1", "update a@1>a@5"}));
  ASSERT_EQ(listTimes_.size(), 2u);
  EXPECT_GE(listTimes_[1] - watchTimes_[0], 190ms) << "a server in trouble is not relisted at once";
}

TEST_F(InformerTest, AFailedWatchRequestIsRetriedWithABackoff) {
  serve([](std::size_t, const Request&) { return listReply({configMap("a", "1")}, "10"); },
        [](std::size_t n, const Request&) {
          return n == 1 ? errorReply(500, "InternalError") : openWatch();
        });
  start();
  ASSERT_TRUE(runUntil([&] { return informer_->watchesStarted() == 1; }));
  ASSERT_EQ(watchTimes_.size(), 2u);
  ASSERT_EQ(listTimes_.size(), 2u); // relisted: the error may hide a gap in the versions
  EXPECT_GE(listTimes_[1] - watchTimes_[0], 190ms);
  EXPECT_EQ(seen_, std::vector<std::string>{"add a@1"}); // the relist found no difference
}

TEST_F(InformerTest, ListErrorsAreRetriedWithADoublingBackoffAndSyncedWaitsForASuccess) {
  std::vector<bool> syncedAtRequest;
  serve(
      [&](std::size_t n, const Request&) {
        syncedAtRequest.push_back(informer_->synced());
        if (n == 1) // no answer: a transport error (on a fresh connection: not retried)
          return Reply{.drop = true};
        if (n == 2)
          return errorReply(500, "InternalError");
        return listReply({configMap("a", "1")}, "10");
      },
      [](std::size_t, const Request&) { return openWatch(); });
  start();
  ASSERT_TRUE(runUntil([&] { return informer_->synced(); }));
  EXPECT_EQ(syncedAtRequest, (std::vector<bool>{false, false, false}));
  ASSERT_EQ(listTimes_.size(), 3u);
  EXPECT_GE(listTimes_[1] - listTimes_[0], 190ms); // 200 ms
  EXPECT_GE(listTimes_[2] - listTimes_[1], 390ms); // 400 ms
  EXPECT_EQ(informer_->relists(), 1u);             // lists that succeeded
  EXPECT_EQ(seen_, std::vector<std::string>{"add a@1"});
  ASSERT_TRUE(runUntil([&] { return informer_->watchesStarted() == 1; }));
}

// The API server's Retry-After (a 429's header, or a Status's details.retryAfterSeconds) is
// waited for when it is longer than the backoff (200 ms).
TEST_F(InformerTest, AListAnsweredWithRetryAfterIsRetriedNoSoonerThanItAsks) {
  serve(
      [](std::size_t n, const Request&) {
        if (n == 1)
          return Reply{.status = 429,
                       .body = status(429, "TooManyRequests").dump(),
                       .headers = {{"Retry-After", "1"}}};
        return listReply({configMap("a", "1")}, "10");
      },
      [](std::size_t, const Request&) { return openWatch(); });
  start();
  ASSERT_TRUE(runUntil([&] { return informer_->synced(); }));
  ASSERT_EQ(listTimes_.size(), 2u);
  EXPECT_GE(listTimes_[1] - listTimes_[0], 990ms);
}

TEST_F(InformerTest, AWatchAnsweredWithRetryAfterSecondsIsRetriedNoSoonerThanItAsks) {
  serve([](std::size_t, const Request&) { return listReply({configMap("a", "1")}, "10"); },
        [](std::size_t n, const Request&) {
          if (n > 1)
            return openWatch();
          Json unavailable = status(503, "ServiceUnavailable");
          unavailable["details"] = {{"retryAfterSeconds", 1}};
          return Reply{.status = 503, .body = unavailable.dump()};
        });
  start();
  ASSERT_TRUE(runUntil([&] { return informer_->watchesStarted() == 1; }, 5s));
  ASSERT_EQ(listTimes_.size(), 2u);
  EXPECT_GE(listTimes_[1] - watchTimes_[0], 990ms);
}

// Only the API server's answers and transport errors are retried: anything else (here a handler
// that throws) ends run() with it, for its supervisor to act on (supervised.hpp).
TEST_F(InformerTest, AnUnexpectedExceptionEndsRun) {
  serve([](std::size_t, const Request&) { return listReply({}, "10"); },
        [](std::size_t, const Request&) {
          return openWatch({event("ADDED", configMap("a", "11"))});
        });
  informer_->onChange([](const Json*, const Json*) { throw std::logic_error("handler bug"); });
  start();
  ASSERT_TRUE(runUntil([&] { return runDone_; }));
  ASSERT_TRUE(runError_);
  try {
    std::rethrow_exception(std::exchange(runError_, nullptr));
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "handler bug");
  }
  EXPECT_EQ(informer_->relists(), 1u);
  EXPECT_EQ(server_->requests().size(), 2u) << "not retried";
  informer_->stop(); // as the manager's shutdown does: the watch that went is not touched
}

TEST_F(InformerTest, StopEndsRunPromptlyWhileWatching) {
  serve([](std::size_t, const Request&) { return listReply({}, "10"); },
        [](std::size_t, const Request&) {
          return openWatch({event("ADDED", configMap("a", "11"))});
        });
  start();
  ASSERT_TRUE(runUntil([&] { return seen_.size() == 1; }));
  EXPECT_LT(stopAndJoin(), 1s);
  EXPECT_EQ(informer_->watchesStarted(), 1u);
  // The cache stays readable after stop().
  EXPECT_NE(informer_->get("ns", "a"), nullptr);
}

TEST_F(InformerTest, StopEndsRunPromptlyDuringABackoff) {
  serve([](std::size_t, const Request&) { return errorReply(503, "ServiceUnavailable"); },
        [](std::size_t, const Request&) { return openWatch(); });
  start();
  // After the third failure the informer waits 800 ms.
  ASSERT_TRUE(runUntil([&] { return failedLists_ == 3; }));
  EXPECT_LT(stopAndJoin(), 400ms);
  EXPECT_EQ(listTimes_.size(), 3u);
  EXPECT_FALSE(informer_->synced());
}

TEST_F(InformerTest, StopDuringAFailingListEndsRunWithoutWaitingForTheBackoff) {
  Clock::time_point stopped;
  serve(
      [&](std::size_t n, const Request&) {
        if (n == 3) { // the informer would wait 800 ms after this failure
          stopped = Clock::now();
          informer_->stop();
        }
        return errorReply(503, "ServiceUnavailable");
      },
      [](std::size_t, const Request&) { return openWatch(); });
  start();
  ASSERT_TRUE(runUntil([&] { return runDone_; }));
  EXPECT_LT(Clock::now() - stopped, 400ms);
  EXPECT_EQ(listTimes_.size(), 3u);
}

TEST_F(InformerTest, StopWhileTheWatchIsOpeningEndsRun) {
  serve([](std::size_t, const Request&) { return listReply({}, "10"); },
        [this](std::size_t, const Request&) {
          informer_->stop(); // before the informer holds the watch it could cancel
          return openWatch();
        });
  start();
  ASSERT_TRUE(runUntil([&] { return runDone_; }, 2s)) << "run() went on watching after stop()";
  EXPECT_EQ(watchTimes_.size(), 1u);
}

TEST_F(InformerTest, StopBeforeRunMakesNoRequest) {
  serve([](std::size_t, const Request&) { return listReply({}, "10"); },
        [](std::size_t, const Request&) { return openWatch(); });
  informer_->stop();
  start();
  ASSERT_TRUE(runUntil([&] { return runDone_; }, 2s));
  EXPECT_TRUE(server_->requests().empty());
  EXPECT_FALSE(informer_->synced());
}

TEST_F(InformerTest, ClusterScopedObjectsAreKeyedByNameAlone) {
  const auto driver = [](const std::string& name, const std::string& rv) {
    return Json{{"metadata", {{"name", name}, {"resourceVersion", rv}}}};
  };
  serve(
      [&](std::size_t, const Request&) {
        return listReply({driver("d1", "1"), driver("d2", "2")}, "10");
      },
      [&](std::size_t, const Request&) {
        // An event object without apiVersion/kind is completed from the resource too.
        const std::string bare = Json{{"type", "ADDED"}, {"object", driver("d3", "12")}}.dump();
        return openWatch({event("DELETED", driver("d1", "11")), bare + "\n"});
      },
      kube::resources::csidrivers);
  start();
  ASSERT_TRUE(runUntil([&] { return seen_.size() == 4; }));
  EXPECT_EQ(targets(false).at(0).substr(0, targets(false).at(0).find('?')),
            "/apis/storage.k8s.io/v1/csidrivers");
  EXPECT_EQ(informer_->get("", "d1"), nullptr);
  const Json* d2 = informer_->get("", "d2");
  ASSERT_NE(d2, nullptr);
  EXPECT_EQ((*d2)["apiVersion"], "storage.k8s.io/v1");
  EXPECT_EQ((*d2)["kind"], "CSIDriver");
  const Json* d3 = informer_->get("", "d3");
  ASSERT_NE(d3, nullptr);
  EXPECT_EQ((*d3)["apiVersion"], "storage.k8s.io/v1");
  EXPECT_EQ((*d3)["kind"], "CSIDriver");
  EXPECT_EQ(informer_->resource(), kube::resources::csidrivers);
}

} // namespace
} // namespace csiop::runtime
