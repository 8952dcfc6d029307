// Client::watch against a local server that streams chunked JSON lines like the API server.
#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/detached.hpp>

#include <csiop/kube/client.hpp>

#include "test_server.hpp"

namespace csiop::kube {
namespace {

using testing::Reply;
using testing::Request;
using testing::runTask;
using testing::TestServer;
namespace asio = boost::asio;
using namespace std::chrono_literals;

std::string line(std::string_view type, std::string_view name, std::string_view rv) {
  Json object = {
      {"kind", "ConfigMap"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", rv}}}};
  if (!name.empty())
    object["metadata"]["name"] = name;
  return Json{{"type", type}, {"object", object}}.dump() + "\n";
}

const std::string kExpired =
    R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (10)","reason":"Expired","code":410}})json"
    "\n";

struct Seen {
  std::vector<std::string> events; // "TYPE name@rv"
  WatchEnd end = WatchEnd::Open;
  std::string resourceVersion;
  std::string error;
};

std::string describe(const WatchEvent& e) {
  const Json& meta = e.object.value("metadata", Json::object());
  return std::string(toString(e.type)) + " " + meta.value("name", "") + "@" +
         meta.value("resourceVersion", "");
}

class WatchTest : public ::testing::Test {
protected:
  void serve(TestServer::Handler handler) {
    server_ = std::make_unique<TestServer>(io_, std::move(handler));
    client_ = std::make_unique<Client>(io_.get_executor(), Config{.server = server_->url()});
  }
  asio::awaitable<Seen> drain(WatchOptions options) {
    Seen seen;
    Watch w = co_await client_->watch(resources::configmaps, "ns", std::move(options));
    try {
      while (auto event = co_await w.next())
        seen.events.push_back(describe(*event));
    } catch (const TransportError& e) {
      seen.error = e.what();
    }
    seen.end = w.end();
    seen.resourceVersion = w.resourceVersion();
    co_return seen;
  }

  asio::io_context io_;
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<Client> client_;
};

TEST_F(WatchTest, StreamsEventsWhateverTheChunkingAndTracksTheResourceVersion) {
  const std::string body = line("ADDED", "a", "11") + line("MODIFIED", "a", "12") +
                           line("BOOKMARK", "", "15") + line("DELETED", "a", "16") +
                           line("BOOKMARK", "", "20");
  serve([&](const Request&) {
    Reply r;
    // Odd chunk boundaries: mid-line, several lines in one chunk.
    r.chunks = {body.substr(0, 7), body.substr(7, 150), body.substr(157)};
    r.chunkDelay = 10ms;
    return r;
  });
  const Seen seen = runTask(io_, drain({.resourceVersion = "10", .timeoutSeconds = 30}));
  EXPECT_EQ(seen.events, (std::vector<std::string>{"ADDED a@11", "MODIFIED a@12", "BOOKMARK @15",
                                                   "DELETED a@16", "BOOKMARK @20"}));
  EXPECT_EQ(seen.end, WatchEnd::Closed);
  EXPECT_EQ(seen.resourceVersion, "20"); // a bookmark moves it on too
  EXPECT_EQ(server_->requests().at(0).target,
            "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=10"
            "&allowWatchBookmarks=true&timeoutSeconds=30");
}

TEST_F(WatchTest, WithoutEventsTheResourceVersionStaysTheRequestedOne) {
  serve([](const Request&) { return Reply{.chunks = {"\n"}}; });
  const Seen seen = runTask(io_, drain({.resourceVersion = "77", .allowWatchBookmarks = false}));
  EXPECT_TRUE(seen.events.empty());
  EXPECT_EQ(seen.end, WatchEnd::Closed);
  EXPECT_EQ(seen.resourceVersion, "77");
  EXPECT_EQ(server_->requests().at(0).target,
            "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=77");
}

TEST_F(WatchTest, AnErrorEvent410EndsTheWatchAsExpired) {
  serve([](const Request&) {
    return Reply{.chunks = {line("ADDED", "a", "11") + kExpired + line("ADDED", "b", "12")}};
  });
  const Seen seen = runTask(io_, drain({.resourceVersion = "5"}));
  EXPECT_EQ(seen.events, (std::vector<std::string>{"ADDED a@11", "ERROR @"}));
  EXPECT_EQ(seen.end, WatchEnd::Expired);
  EXPECT_EQ(seen.resourceVersion, "11");
}

TEST_F(WatchTest, OtherErrorEventsEndTheWatchAsError) {
  serve([](const Request&) {
    return Reply{.chunks = {R"({"type":"ERROR","object":{"kind":"Status","code":500,)"
                            R"("reason":"InternalError"}})"
                            "\n"}};
  });
  const Seen seen = runTask(io_, drain({}));
  EXPECT_EQ(seen.end, WatchEnd::Error);
}

TEST_F(WatchTest, AnHttp410IsReportedLikeAnErrorEvent) {
  serve([](const Request&) {
    return Reply{.status = 410,
                 .body = R"({"kind":"Status","reason":"Expired","code":410,"message":"old"})"};
  });
  runTask(io_, [&]() -> asio::awaitable<void> {
    Watch w = co_await client_->watch(resources::configmaps, "ns", {.resourceVersion = "3"});
    auto event = co_await w.next();
    EXPECT_TRUE(event && event->isExpired());
    EXPECT_EQ(event->error().status().message, "old");
    EXPECT_FALSE(co_await w.next());
    EXPECT_TRUE(w.expired());
    EXPECT_EQ(w.resourceVersion(), "3");
  }());
}

TEST_F(WatchTest, OtherHttpErrorsThrowWhenOpening) {
  serve([](const Request&) {
    return Reply{.status = 403, .body = R"({"kind":"Status","reason":"Forbidden","code":403})"};
  });
  try {
    runTask(io_, drain({}));
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isForbidden());
  }
}

TEST_F(WatchTest, CancelEndsAPendingNextPromptly) {
  serve(
      [](const Request&) { return Reply{.chunks = {line("ADDED", "a", "1")}, .holdOpen = true}; });
  const auto start = std::chrono::steady_clock::now();
  runTask(io_, [&]() -> asio::awaitable<void> {
    Watch w = co_await client_->watch(resources::configmaps, "ns", {});
    EXPECT_TRUE(co_await w.next());
    // Another coroutine on the same executor stops the watch (shutdown, lost leadership).
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          asio::steady_timer t(io_, 100ms);
          co_await t.async_wait(asio::use_awaitable);
          w.cancel();
        },
        asio::detached);
    EXPECT_FALSE(co_await w.next());
    EXPECT_EQ(w.end(), WatchEnd::Cancelled);
    EXPECT_FALSE(co_await w.next());
  }());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(WatchTest, AsioCancellationEndsItToo) {
  serve([](const Request&) { return Reply{.holdOpen = true}; });
  asio::cancellation_signal signal;
  std::optional<WatchEnd> end;
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        Watch w = co_await client_->watch(resources::configmaps, "ns", {});
        while (co_await w.next()) {
        }
        end = w.end();
      },
      asio::bind_cancellation_slot(signal.slot(), asio::detached));
  runTask(io_, [&]() -> asio::awaitable<void> {
    asio::steady_timer t(io_, 100ms);
    co_await t.async_wait(asio::use_awaitable);
    signal.emit(asio::cancellation_type::terminal);
    while (!end) {
      t.expires_after(10ms);
      co_await t.async_wait(asio::use_awaitable);
    }
  }());
  EXPECT_EQ(end, WatchEnd::Cancelled);
}

TEST_F(WatchTest, SilenceLongerThanTheIdleTimeoutIsATransportError) {
  serve([](const Request&) { return Reply{.holdOpen = true}; });
  const Seen seen = runTask(io_, drain({.idleTimeout = 200ms}));
  EXPECT_EQ(seen.end, WatchEnd::Broken);
  EXPECT_NE(seen.error.find("nothing received for 200 ms"), std::string::npos) << seen.error;
}

TEST_F(WatchTest, AStreamCutMidEventIsATransportError) {
  serve([](const Request&) {
    return Reply{.chunks = {line("ADDED", "a", "1") + R"({"type":"ADD)"}, .cutMidStream = true};
  });
  const Seen seen = runTask(io_, drain({}));
  EXPECT_EQ(seen.events, std::vector<std::string>{"ADDED a@1"});
  EXPECT_EQ(seen.end, WatchEnd::Broken);
  EXPECT_FALSE(seen.error.empty());
}

TEST_F(WatchTest, StreamingListOptions) {
  serve([](const Request&) { return Reply{.chunks = {"\n"}}; });
  runTask(io_, drain({.labelSelector = "a=b",
                      .fieldSelector = "metadata.name=x",
                      .sendInitialEvents = true}));
  EXPECT_EQ(server_->requests().at(0).target,
            "/api/v1/namespaces/ns/configmaps?watch=true&labelSelector=a%3Db"
            "&fieldSelector=metadata.name%3Dx&allowWatchBookmarks=true&sendInitialEvents=true"
            "&resourceVersionMatch=NotOlderThan");
}

} // namespace
} // namespace csiop::kube
