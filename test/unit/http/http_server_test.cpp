#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <csiop/http/server.hpp>
#include <csiop/runtime/operator_metrics.hpp>
#include <csiop/runtime/probes.hpp>

#include "../runtime/test_util.hpp"
#include "loopback_client.hpp"

namespace csiop::http {
namespace {

using runtime::CheckResult;
using runtime::HealthChecks;
using runtime::metricsHandler;
using runtime::OperatorMetrics;
namespace test = runtime::test;

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using testing::connectTo;
using testing::exchange;
using testing::fetch;
using testing::Reply;
using testing::sendRaw;
using testing::watchForClose;

class HttpServerTest : public ::testing::Test {
protected:
  asio::io_context io;
  OperatorMetrics metrics;
  HealthChecks healthz{"healthz"};
  HealthChecks readyz{"readyz"};
  bool synced = false;
  std::vector<std::string> errors;
  std::unique_ptr<HttpServer> server;

  HttpServerTest() {
    metrics.setLeader(true);
    readyz.add("informers", [this] {
      return synced ? CheckResult::passed() : CheckResult::failed("caches not synced");
    });
  }

  void startServer(HttpServerOptions options = {}, std::string_view address = "127.0.0.1:0") {
    options.onError = [this](std::string_view message) { errors.emplace_back(message); };
    server = std::make_unique<HttpServer>(io.get_executor(), address, std::move(options));
    server->handle("/healthz", healthz.handler());
    server->handle("/readyz", readyz.handler());
    server->handle("/metrics", metricsHandler(metrics));
    server->start();
    ASSERT_NE(server->port(), 0);
  }

  template <class T> T run(asio::awaitable<T> work) {
    return test::runCoroutine(io, std::move(work));
  }
  Reply get(std::string target) { return run(fetch(server->port(), bhttp::verb::get, target)); }
  std::shared_ptr<tcp::socket> rawConnection() {
    return std::make_shared<tcp::socket>(run(connectTo(server->port())));
  }
  void runFor(std::chrono::milliseconds duration) {
    io.restart();
    io.run_for(duration);
  }
};

TEST(BindAddressTest, ParsesOperatorStyleFlags) {
  auto any = parseBindAddress(":8081");
  ASSERT_TRUE(any);
  EXPECT_FALSE(any->host);
  EXPECT_EQ(any->port, 8081);
  EXPECT_EQ(any->toString(), ":8081");

  auto v4 = parseBindAddress("127.0.0.1:8080");
  ASSERT_TRUE(v4 && v4->host);
  EXPECT_EQ(v4->host->to_string(), "127.0.0.1");
  EXPECT_EQ(v4->toString(), "127.0.0.1:8080");

  auto v6 = parseBindAddress("[::1]:9090");
  ASSERT_TRUE(v6 && v6->host);
  EXPECT_TRUE(v6->host->is_v6());
  EXPECT_EQ(v6->toString(), "[::1]:9090");

  EXPECT_EQ(parseBindAddress("localhost:0")->toString(), "127.0.0.1:0");
  EXPECT_EQ(parseBindAddress("0.0.0.0:65535")->toString(), "0.0.0.0:65535");
  EXPECT_FALSE(parseBindAddress("0")) << "\"0\" disables";
  EXPECT_FALSE(parseBindAddress("")) << "empty disables";
}

TEST(BindAddressTest, RejectsMalformedFlags) {
  for (const char* flag : {"8080", ":", ":-1", ":65536", ":80x", "abc:80", "::1:80", "[::1]",
                           "[1.2.3.4]:80", "[]:80", "1.2.3:80", "127.0.0.1:"}) {
    EXPECT_THROW(parseBindAddress(flag), std::invalid_argument) << flag;
  }
}

TEST_F(HttpServerTest, DisabledServerDoesNothing) {
  HttpServer disabled(io.get_executor(), "0");
  EXPECT_FALSE(disabled.enabled());
  disabled.start();
  EXPECT_EQ(disabled.port(), 0);
  io.restart();
  EXPECT_EQ(io.poll(), 0u);
}

TEST_F(HttpServerTest, InvalidAddressThrowsAtConstruction) {
  EXPECT_THROW(HttpServer(io.get_executor(), "8080"), std::invalid_argument);
}

TEST_F(HttpServerTest, ServesLivenessReadinessAndMetrics) {
  startServer();
  auto reply = get("/healthz");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, "ok");

  reply = get("/readyz");
  EXPECT_EQ(reply.status, 503u);
  EXPECT_EQ(reply.body, "[-]informers failed: caches not synced\nreadyz check failed\n");
  synced = true;
  reply = get("/readyz");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, "ok");

  reply = get("/metrics");
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.contentType, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(reply.body, metrics.exposition());
  EXPECT_NE(reply.body.find("\ncsiop_leader 1\n"), std::string::npos) << reply.body;
  EXPECT_TRUE(errors.empty());
}

TEST_F(HttpServerTest, UnknownPathIs404OtherMethodsAre405) {
  startServer();
  EXPECT_EQ(get("/nope").status, 404u);
  EXPECT_EQ(get("/healthz/extra").status, 404u);
  EXPECT_EQ(get("/healthz?x=1").status, 200u) << "the query is not part of the path";
  for (const auto verb : {bhttp::verb::post, bhttp::verb::put, bhttp::verb::delete_}) {
    const auto reply = run(fetch(server->port(), verb, "/metrics"));
    EXPECT_EQ(reply.status, 405u);
    EXPECT_EQ(reply.allow, "GET, HEAD");
  }
  EXPECT_EQ(run(fetch(server->port(), bhttp::verb::post, "/nope")).status, 404u);
}

TEST_F(HttpServerTest, HeadGivesTheHeadersWithoutTheBody) {
  startServer();
  const auto full = get("/metrics");
  const auto head = run(fetch(server->port(), bhttp::verb::head, "/metrics"));
  EXPECT_EQ(head.status, 200u);
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(head.contentLength, std::to_string(full.body.size()));
  EXPECT_EQ(head.contentType, full.contentType);
}

TEST_F(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  startServer();
  const auto replies = run([&]() -> asio::awaitable<std::vector<Reply>> {
    beast::tcp_stream stream(co_await connectTo(server->port()));
    beast::flat_buffer buffer;
    std::vector<Reply> all;
    for (const char* target : {"/healthz", "/metrics", "/readyz", "/healthz"}) {
      all.push_back(co_await exchange(stream, buffer, bhttp::verb::get, target));
      EXPECT_EQ(server->connections(), 1u);
    }
    co_return all;
  }());
  ASSERT_EQ(replies.size(), 4u);
  EXPECT_EQ(replies[0].status, 200u);
  EXPECT_EQ(replies[2].status, 503u);
  for (const auto& reply : replies) {
    EXPECT_TRUE(reply.keepAlive);
  }
  ASSERT_TRUE(test::runUntil(io, [&] { return server->connections() == 0; }));
}

TEST_F(HttpServerTest, ServesManyConcurrentConnections) {
  startServer();
  constexpr int kClients = 100;
  int ok = 0;
  int finished = 0;
  for (int i = 0; i < kClients; ++i) {
    // From four addresses: one peer may hold 64 connections at most.
    const char* from = std::array{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"}[i % 4];
    asio::co_spawn(
        io,
        [&, from]() -> asio::awaitable<void> {
          beast::tcp_stream stream(co_await connectTo(server->port(), from));
          beast::flat_buffer buffer;
          for (int request = 0; request < 3; ++request) {
            const auto reply = co_await exchange(stream, buffer, bhttp::verb::get, "/healthz");
            ok += reply.status == 200 ? 1 : 0;
          }
        },
        [&](std::exception_ptr) { ++finished; });
  }
  ASSERT_TRUE(test::runUntil(io, [&] { return finished == kClients; }));
  EXPECT_EQ(ok, 3 * kClients);
}

TEST_F(HttpServerTest, OversizedHeadersAre431AndOversizedBodies413) {
  startServer({.maxHeaderBytes = 1024, .maxBodyBytes = 1024});
  auto reply = run(sendRaw(server->port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                               std::string(4096, 'a') + "\r\n\r\n"));
  EXPECT_EQ(reply.status, 431u);
  EXPECT_FALSE(reply.keepAlive);
  reply = run(sendRaw(server->port(),
                      "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"));
  EXPECT_EQ(reply.status, 413u);
}

TEST_F(HttpServerTest, MalformedRequestIs400) {
  startServer();
  const auto reply = run(sendRaw(server->port(), "NOT A REQUEST\r\n\r\n"));
  EXPECT_EQ(reply.status, 400u);
}

TEST_F(HttpServerTest, ClientTricklingARequestIsDropped) {
  startServer({.readTimeout = 300ms});
  const auto socket = rawConnection();
  const auto watch = watchForClose(io, socket);
  // At one byte per 20ms the request would take 8s; the server must give up
  // after its 300ms read deadline, long before.
  const std::string request =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(400, 'a') + "\r\n\r\n";
  std::size_t sent = 0;
  for (; sent < request.size() && !watch->closed; ++sent) {
    boost::system::error_code ec;
    asio::write(*socket, asio::buffer(&request[sent], 1), ec);
    if (ec) {
      break;
    }
    runFor(20ms);
  }
  ASSERT_TRUE(test::runUntil(io, [&] { return watch->closed; }));
  EXPECT_LT(sent, request.size()) << "the server waited for the whole trickled request";
  EXPECT_EQ(watch->received, 0u) << "no response to a request that never completed";
  ASSERT_TRUE(test::runUntil(io, [&] { return server->connections() == 0; }));
}

TEST_F(HttpServerTest, ClientThatNeverSendsIsDropped) {
  startServer({.readTimeout = 200ms});
  const auto watch = watchForClose(io, rawConnection());
  ASSERT_TRUE(test::runUntil(io, [&] { return watch->closed; }));
  ASSERT_TRUE(test::runUntil(io, [&] { return server->connections() == 0; }));
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionIsClosed) {
  startServer({.idleTimeout = 200ms});
  auto stream = std::make_shared<beast::tcp_stream>(run(connectTo(server->port())));
  beast::flat_buffer buffer;
  EXPECT_EQ(run(exchange(*stream, buffer, bhttp::verb::get, "/healthz")).status, 200u);
  bool closed = false;
  asio::co_spawn(
      io,
      [stream, &closed]() -> asio::awaitable<void> {
        std::array<char, 64> data{};
        auto [ec, n] = co_await stream->async_read_some(asio::buffer(data),
                                                        asio::as_tuple(asio::use_awaitable));
        closed = ec == asio::error::eof && n == 0;
      },
      asio::detached);
  ASSERT_TRUE(test::runUntil(io, [&] { return closed; }));
}

TEST_F(HttpServerTest, StopClosesTheListenerAndIdleConnectionsButFinishesTheRequestInFlight) {
  startServer();
  // An idle keep-alive connection.
  auto idle = std::make_shared<beast::tcp_stream>(run(connectTo(server->port())));
  beast::flat_buffer idleBuffer;
  EXPECT_EQ(run(exchange(*idle, idleBuffer, bhttp::verb::get, "/healthz")).status, 200u);
  bool idleClosed = false;
  asio::co_spawn(
      io,
      [idle, &idleClosed]() -> asio::awaitable<void> {
        std::array<char, 64> data{};
        auto [ec, n] =
            co_await idle->async_read_some(asio::buffer(data), asio::as_tuple(asio::use_awaitable));
        idleClosed = ec && n == 0;
      },
      asio::detached);
  // A request in flight when stop() is called: its handler stops the server.
  server->handle("/stop", [&](const HttpRequest&) {
    server->stop();
    return HttpResponse{200, "text/plain", "stopping", {}};
  });
  const auto port = server->port();
  const auto reply = run([&]() -> asio::awaitable<Reply> {
    beast::tcp_stream stream(co_await connectTo(port));
    beast::flat_buffer buffer;
    co_return co_await exchange(stream, buffer, bhttp::verb::get, "/stop", true);
  }());
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, "stopping");
  EXPECT_FALSE(reply.keepAlive) << "the last response says Connection: close";
  ASSERT_TRUE(test::runUntil(io, [&] { return idleClosed; }));
  EXPECT_THROW(run(connectTo(port)), boost::system::system_error) << "listener still open";
  ASSERT_TRUE(test::runUntil(io, [&] { return server->connections() == 0; }));
  // Nothing is left running: run() returns.
  server.reset();
  io.restart();
  io.run_for(10s);
  EXPECT_TRUE(io.stopped());
}

TEST_F(HttpServerTest, HandlerExceptionIs500AndReported) {
  startServer();
  server->handle("/boom",
                 [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("kaput"); });
  EXPECT_EQ(get("/boom").status, 500u);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("kaput"), std::string::npos);
  EXPECT_EQ(get("/healthz").status, 200u) << "the server carries on";
}

TEST_F(HttpServerTest, AtTheCapANewConnectionEvictsTheLongestIdleOrIsClosedWhenNoneIs) {
  startServer({.maxConnections = 2});
  std::vector<std::shared_ptr<beast::tcp_stream>> streams;
  beast::flat_buffer buffer;
  for (int i = 0; i < 2; ++i) {
    streams.push_back(std::make_shared<beast::tcp_stream>(run(connectTo(server->port()))));
    EXPECT_EQ(run(exchange(*streams.back(), buffer, bhttp::verb::get, "/healthz")).status, 200u);
  }
  EXPECT_EQ(server->connections(), 2u);
  const auto oldest = watchForClose(io, streams[0]);
  EXPECT_EQ(get("/healthz").status, 200u) << "served in the place of an idle one";
  ASSERT_TRUE(test::runUntil(io, [&] { return oldest->closed; })) << "the longest idle goes";
  EXPECT_EQ(run(exchange(*streams[1], buffer, bhttp::verb::get, "/healthz")).status, 200u);
  ASSERT_TRUE(test::runUntil(io, [&] { return server->connections() == 1; }));

  // Two connections that have not sent a request are held, not idle: nothing
  // to evict, so a third is closed at once.
  streams[1]->close();
  ASSERT_TRUE(test::runUntil(io, [&] { return server->connections() == 0; }));
  const auto silent1 = rawConnection();
  const auto silent2 = rawConnection();
  ASSERT_TRUE(test::runUntil(io, [&] { return server->connections() == 2; }));
  EXPECT_THROW(run(fetch(server->port(), bhttp::verb::get, "/healthz")),
               boost::system::system_error);
  silent1->close();
  ASSERT_TRUE(test::runUntil(io, [&] { return server->connections() == 1; }));
  EXPECT_EQ(get("/healthz").status, 200u);
}

TEST_F(HttpServerTest, PortInUseIsAClearError) {
  startServer();
  const std::string address = "127.0.0.1:" + std::to_string(server->port());
  HttpServer second(io.get_executor(), address);
  try {
    second.start();
    FAIL() << "bound a port already in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on " + address), std::string::npos)
        << e.what();
  }
}

TEST_F(HttpServerTest, AllInterfacesIncludeLoopbackIPv4) {
  startServer({}, ":0");
  EXPECT_EQ(get("/healthz").status, 200u);
}

TEST_F(HttpServerTest, RequestsReadAfterTheServerIsDestroyedNeverReachAHandler) {
  startServer();
  bool called = false;
  server->handle("/late", [&](const HttpRequest&) {
    called = true;
    return HttpResponse{};
  });
  const auto socket = rawConnection();
  const std::string head = "GET /late HTTP/1.1\r\n";
  asio::write(*socket, asio::buffer(head));
  runFor(50ms);
  server.reset();
  const std::string rest = "Host: x\r\n\r\n";
  boost::system::error_code ec;
  asio::write(*socket, asio::buffer(rest), ec);
  const auto watch = watchForClose(io, socket);
  ASSERT_TRUE(test::runUntil(io, [&] { return watch->closed; }));
  EXPECT_FALSE(called);
}

} // namespace
} // namespace csiop::http
