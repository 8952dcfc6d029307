// Asynchronous handlers (HttpServer::handleAsync): coroutines that await while
// the server's one thread serves other connections.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csiop/http/server.hpp>

#include "../common/run_io.hpp"
#include "loopback_client.hpp"

namespace csiop::http {
namespace {

namespace test = csiop::test;
using namespace testing;
using namespace std::chrono_literals;

class AsyncHandlerTest : public ::testing::Test {
protected:
  void startServer(HttpServerOptions options = {}) {
    options.onError = [this](std::string_view message) { errors.emplace_back(message); };
    server = std::make_unique<HttpServer>(io.get_executor(), "127.0.0.1:0", std::move(options));
    server->handleAsync("/sleep", [](HttpRequest request) -> asio::awaitable<HttpResponse> {
      asio::steady_timer timer(co_await asio::this_coro::executor, 300ms);
      co_await timer.async_wait(asio::use_awaitable);
      co_return HttpResponse{200, "text/plain", "slept " + request.query};
    });
    // Waits until the test (or /open) opens the gate.
    server->handleAsync("/gate", [this](HttpRequest) -> asio::awaitable<HttpResponse> {
      ++entered;
      co_await gate.async_wait(asio::as_tuple(asio::use_awaitable));
      ++finished;
      co_return HttpResponse{200, "text/plain", "through"};
    });
    server->handle("/open", [this](const HttpRequest&) {
      gate.cancel();
      return HttpResponse{200, "text/plain", "opened"};
    });
    server->handleAsync("/throw", [](HttpRequest) -> asio::awaitable<HttpResponse> {
      asio::steady_timer timer(co_await asio::this_coro::executor, 1ms);
      co_await timer.async_wait(asio::use_awaitable);
      throw std::runtime_error("kaput");
    });
    server->handleAsync(
        "/echo",
        [](HttpRequest request) -> asio::awaitable<HttpResponse> {
          co_return HttpResponse{200, request.contentType, request.method + " " + request.body};
        },
        HttpMethods::Post);
    server->start();
    ASSERT_NE(server->port(), 0);
  }

  template <class T> T run(asio::awaitable<T> work) {
    return test::runCoroutine(io, std::move(work));
  }
  Reply request(bhttp::verb verb, std::string target, std::string body = {}) {
    return run(fetch(server->port(), verb, std::move(target), "127.0.0.1", std::move(body)));
  }
  auto spawnRequest(std::string target) {
    return test::spawn(io, fetch(server->port(), bhttp::verb::get, std::move(target)));
  }

  asio::io_context io;
  asio::steady_timer gate{io, asio::steady_timer::time_point::max()};
  int entered = 0;
  int finished = 0;
  std::vector<std::string> errors;
  std::unique_ptr<HttpServer> server;
};

TEST_F(AsyncHandlerTest, AnswersOnceItsAwaitDone) {
  startServer();
  const auto reply = request(bhttp::verb::get, "/sleep?x");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, "slept x");
  const auto head = request(bhttp::verb::head, "/sleep?x");
  EXPECT_EQ(head.status, 200u);
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(head.contentLength, "7");
  EXPECT_TRUE(errors.empty());
}

TEST_F(AsyncHandlerTest, RoutesAndMethodsAsForPlainHandlers) {
  startServer();
  const auto posted = request(bhttp::verb::post, "/echo", "body");
  EXPECT_EQ(posted.status, 200u);
  EXPECT_EQ(posted.body, "POST body");
  const auto wrong = request(bhttp::verb::get, "/echo");
  EXPECT_EQ(wrong.status, 405u);
  EXPECT_EQ(wrong.allow, "POST");
  EXPECT_EQ(request(bhttp::verb::post, "/sleep", "x").status, 405u);
  EXPECT_EQ(request(bhttp::verb::get, "/nope").status, 404u);
}

TEST_F(AsyncHandlerTest, RequestsOnTwoConnectionsInterleave) {
  startServer();
  const auto first = spawnRequest("/gate");
  const auto second = spawnRequest("/gate");
  ASSERT_TRUE(test::runUntil(io, [&] { return entered == 2; })) << "both handlers wait at once";
  EXPECT_EQ(request(bhttp::verb::get, "/sleep?third").body, "slept third")
      << "a third is served meanwhile";
  EXPECT_FALSE(first->done || second->done);
  EXPECT_EQ(request(bhttp::verb::get, "/open").status, 200u);
  ASSERT_TRUE(test::runUntil(io, [&] { return first->done && second->done; }));
  EXPECT_EQ(first->value->body, "through");
  EXPECT_EQ(second->value->body, "through");
}

TEST_F(AsyncHandlerTest, SleepsOnTwoConnectionsOverlap) {
  startServer();
  const auto start = std::chrono::steady_clock::now();
  const auto a = spawnRequest("/sleep?a");
  const auto b = spawnRequest("/sleep?b");
  ASSERT_TRUE(test::runUntil(io, [&] { return a->done && b->done; }));
  EXPECT_EQ(a->value->body, "slept a");
  EXPECT_EQ(b->value->body, "slept b");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 590ms) << "one after the other";
}

TEST_F(AsyncHandlerTest, AHandlerThatThrowsGives500AndIsReported) {
  startServer();
  EXPECT_EQ(request(bhttp::verb::get, "/throw").status, 500u);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("/throw"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("kaput"), std::string::npos) << errors[0];
  EXPECT_EQ(request(bhttp::verb::get, "/sleep").status, 200u) << "the server carries on";
}

TEST_F(AsyncHandlerTest, DeadlinesDoNotCoverTheHandler) {
  startServer({.readTimeout = 100ms, .writeTimeout = 100ms});
  EXPECT_EQ(request(bhttp::verb::get, "/sleep?late").body, "slept late");
}

TEST_F(AsyncHandlerTest, ItsConnectionIsBusyNeverEvicted) {
  startServer({.maxConnections = 2});
  const auto waiting = spawnRequest("/gate");
  ASSERT_TRUE(test::runUntil(io, [&] { return entered == 1; }));
  auto idle = std::make_shared<beast::tcp_stream>(run(connectTo(server->port())));
  beast::flat_buffer buffer;
  EXPECT_EQ(run(exchange(*idle, buffer, bhttp::verb::get, "/sleep")).status, 200u);
  const auto idleWatch = watchForClose(io, idle);
  EXPECT_EQ(request(bhttp::verb::get, "/sleep").status, 200u) << "in the idle one's place";
  ASSERT_TRUE(test::runUntil(io, [&] { return idleWatch->closed; }));
  EXPECT_FALSE(waiting->done);

  // With the handler's connection and one not yet sending, nothing can go.
  const auto silent = std::make_shared<tcp::socket>(run(connectTo(server->port())));
  ASSERT_TRUE(test::runUntil(io, [&] { return server->connections() == 2; }));
  EXPECT_THROW(request(bhttp::verb::get, "/sleep"), boost::system::system_error);
  gate.cancel();
  ASSERT_TRUE(test::runUntil(io, [&] { return waiting->done; }));
  ASSERT_TRUE(waiting->value);
  EXPECT_EQ(waiting->value->body, "through");
}

TEST_F(AsyncHandlerTest, StopLetsARunningHandlerFinish) {
  startServer();
  const auto waiting = spawnRequest("/gate");
  ASSERT_TRUE(test::runUntil(io, [&] { return entered == 1; }));
  server->stop();
  io.restart();
  io.run_for(50ms);
  EXPECT_FALSE(waiting->done);
  gate.cancel();
  ASSERT_TRUE(test::runUntil(io, [&] { return waiting->done; }));
  ASSERT_TRUE(waiting->value);
  EXPECT_EQ(waiting->value->body, "through");
  EXPECT_FALSE(waiting->value->keepAlive);
  ASSERT_TRUE(test::runUntil(io, [&] { return server->connections() == 0; }));
}

TEST_F(AsyncHandlerTest, DestroyingTheServerWhileAHandlerRunsDropsItsAnswer) {
  startServer();
  const auto waiting = spawnRequest("/gate");
  ASSERT_TRUE(test::runUntil(io, [&] { return entered == 1; }));
  server.reset();
  gate.cancel();
  ASSERT_TRUE(test::runUntil(io, [&] { return waiting->done; }));
  EXPECT_EQ(finished, 1) << "the handler ran to its end";
  EXPECT_TRUE(waiting->error) << "closed without an answer";
  // Nothing is left running: run() returns.
  io.restart();
  io.run_for(10s);
  EXPECT_TRUE(io.stopped());
}

} // namespace
} // namespace csiop::http
