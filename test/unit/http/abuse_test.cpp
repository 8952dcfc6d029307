// The server against hostile clients, on loopback with caps small enough to hit:
// idle keep-alive floods, connections that never send, bodies trickled to hold
// memory, idle connections left open. Each case ends with a normal client served.
// Peers are loopback addresses (127.0.0.1, .2, .3): each is a peer of its own.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/write.hpp>

#include <csiop/http/server.hpp>

#include "../common/run_io.hpp"
#include "loopback_client.hpp"

namespace csiop::http {
namespace {

namespace test = csiop::test;
using namespace testing;
using namespace std::chrono_literals;

constexpr const char* kAttacker = "127.0.0.1";
constexpr const char* kClient = "127.0.0.2";
constexpr const char* kOtherAttacker = "127.0.0.3";

// A connection of the test's, with what it read.
struct Held {
  std::shared_ptr<beast::tcp_stream> stream;
  std::shared_ptr<beast::flat_buffer> buffer{std::make_shared<beast::flat_buffer>()};
  std::shared_ptr<Watch> watch{};
};

class AbuseTest : public ::testing::Test {
protected:
  void startServer(HttpServerOptions options) {
    options.onError = [this](std::string_view message) { errors.emplace_back(message); };
    server = std::make_unique<HttpServer>(io.get_executor(), "127.0.0.1:0", std::move(options));
    server->handle("/healthz", [](const HttpRequest&) {
      return HttpResponse{200, "text/plain", "ok"};
    });
    server->handle(
        "/echo",
        [](const HttpRequest& r) {
          return HttpResponse{200, "text/plain", r.body};
        },
        HttpMethods::Post);
    server->start();
    ASSERT_NE(server->port(), 0);
  }

  template <class T> T run(asio::awaitable<T> work) {
    return test::runCoroutine(io, std::move(work));
  }

  Held connect(const char* from) {
    return Held{std::make_shared<beast::tcp_stream>(run(connectTo(server->port(), from)))};
  }
  // A keep-alive connection that has had one answer and waits for the next request.
  Held idleConnection(const char* from) {
    Held held = connect(from);
    EXPECT_EQ(run(exchange(*held.stream, *held.buffer, bhttp::verb::get, "/healthz")).status, 200u);
    held.watch = watchForClose(io, held.stream);
    return held;
  }
  // A connection that has not sent a byte.
  Held silentConnection(const char* from) {
    Held held = connect(from);
    held.watch = watchForClose(io, held.stream);
    return held;
  }
  void send(Held& held, const std::string& bytes) {
    asio::write(held.stream->socket(), asio::buffer(bytes));
  }
  // A normal request from kClient, answered within `limit`.
  Reply normalGet(std::chrono::seconds limit = 5s) {
    return test::runCoroutine(io, fetch(server->port(), bhttp::verb::get, "/healthz", kClient),
                              limit);
  }
  void settle() {
    io.restart();
    io.run_for(50ms);
  }
  static std::size_t closed(const std::vector<Held>& all) {
    std::size_t n = 0;
    for (const auto& held : all) {
      n += held.watch && held.watch->closed ? 1 : 0;
    }
    return n;
  }

  asio::io_context io;
  std::vector<std::string> errors;
  std::unique_ptr<HttpServer> server;
};

TEST_F(AbuseTest, IdleKeepAliveFloodFromOnePeerHoldsItsShareAndOtherPeersAreServed) {
  startServer({.maxConnections = 16, .maxConnectionsPerPeer = 8});
  std::vector<Held> flood;
  for (int i = 0; i < 16; ++i) {
    flood.push_back(idleConnection(kAttacker)); // each past the 8th evicts the peer's oldest
  }
  settle();
  EXPECT_EQ(closed(flood), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_TRUE(flood[i].watch->closed) << "the peer's longest idle go first: " << i;
  }
  EXPECT_EQ(server->connections(), 8u);
  EXPECT_EQ(normalGet().status, 200u);
  EXPECT_EQ(closed(flood), 8u) << "the server had room: nobody else evicted";
}

TEST_F(AbuseTest, IdleKeepAliveFloodFillingTheServerGivesWayToANewConnection) {
  startServer({.maxConnections = 16, .maxConnectionsPerPeer = 8});
  std::vector<Held> flood;
  for (int i = 0; i < 16; ++i) {
    flood.push_back(idleConnection(i % 2 == 0 ? kAttacker : kOtherAttacker));
  }
  EXPECT_EQ(server->connections(), 16u);
  std::vector<Held> clients; // each keeps its connection, taking a slot
  for (int round = 0; round < 3; ++round) {
    clients.push_back(idleConnection(kClient));
  }
  settle();
  EXPECT_EQ(closed(flood), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(flood[i].watch->closed) << "the longest idle go first: " << i;
  }
  EXPECT_EQ(server->connections(), 16u);
}

TEST_F(AbuseTest, SilentConnectionsOfABigPeerGiveWayToASmallOneAndTheBigPeerIsCapped) {
  // The read deadline is long: the client is not served because they time out.
  startServer({.readTimeout = 20s, .maxConnections = 16, .maxConnectionsPerPeer = 8});
  std::vector<Held> silent;
  for (int i = 0; i < 16; ++i) {
    silent.push_back(silentConnection(i < 8 ? kAttacker : kOtherAttacker));
  }
  ASSERT_TRUE(test::runUntil(io, [&] { return server->connections() == 16; }));
  EXPECT_EQ(normalGet().status, 200u);
  settle();
  EXPECT_EQ(closed(silent), 1u);
  EXPECT_TRUE(silent[0].watch->closed) << "the oldest of a peer holding the most";

  // A peer at its cap with nothing idle: its next connection is closed at once.
  Held extra = silentConnection(kOtherAttacker);
  ASSERT_TRUE(test::runUntil(
      io, [&] { return extra.watch->closed; }, 2s));
  EXPECT_EQ(closed(silent), 1u);
  EXPECT_TRUE(errors.empty()) << errors.front();
}

TEST_F(AbuseTest, SilentConnectionsAreClosedAtTheReadDeadline) {
  startServer({.readTimeout = 200ms, .maxConnections = 16, .maxConnectionsPerPeer = 16});
  std::vector<Held> silent;
  for (int i = 0; i < 16; ++i) {
    silent.push_back(silentConnection(kAttacker));
  }
  ASSERT_TRUE(test::runUntil(
      io, [&] { return closed(silent) == 16; }, 5s));
  ASSERT_TRUE(test::runUntil(
      io, [&] { return server->connections() == 0; }, 5s));
  EXPECT_EQ(normalGet().status, 200u);
}

TEST_F(AbuseTest, IdleKeepAliveConnectionsAreClosedAfterTheIdleTimeout) {
  startServer({.idleTimeout = 200ms, .maxConnections = 16, .maxConnectionsPerPeer = 16});
  std::vector<Held> idle;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 12; ++i) {
    idle.push_back(idleConnection(kAttacker));
  }
  ASSERT_TRUE(test::runUntil(
      io, [&] { return closed(idle) == 12; }, 5s));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 190ms);
  ASSERT_TRUE(test::runUntil(
      io, [&] { return server->connections() == 0; }, 5s));
}

// Bodies: maxBodyBytes 24 KiB, budget 64 KiB in all and 32 KiB per peer;
// an attacker announces 16 KiB bodies and sends 100 bytes of each.
class BodyBudgetAbuseTest : public AbuseTest {
protected:
  void SetUp() override {
    startServer({.maxBodyBytes = 24 * 1024,
                 .readTimeout = 20s,
                 .bodyBudgetBytes = 64 * 1024,
                 .bodyBudgetPerPeerBytes = 32 * 1024});
  }
  static std::string head(std::size_t contentLength) {
    return "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: " +
           std::to_string(contentLength) + "\r\n\r\n";
  }
  // Sends a header announcing 16 KiB and the first 100 bytes, and reads
  // whatever answer comes.
  struct Trickler {
    Held held;
    std::shared_ptr<test::Outcome<Reply>> reply;
  };
  Trickler trickle(const char* from) {
    Trickler t{connect(from), {}};
    send(t.held, head(16 * 1024) + std::string(100, 'x'));
    t.reply = test::spawn(io, readReply(*t.held.stream, *t.held.buffer));
    settle();
    return t;
  }
  static std::size_t refused(const std::vector<Trickler>& all) {
    std::size_t n = 0;
    for (const auto& t : all) {
      if (t.reply->done && t.reply->value) {
        EXPECT_EQ(t.reply->value->status, 503u);
        EXPECT_EQ(t.reply->value->retryAfter, "1");
        EXPECT_FALSE(t.reply->value->keepAlive);
        ++n;
      }
    }
    return n;
  }
  Reply normalPost(const char* from, std::string body) {
    return test::runCoroutine(
        io, fetch(server->port(), bhttp::verb::post, "/echo", from, std::move(body)), 5s);
  }
};

TEST_F(BodyBudgetAbuseTest, OnePeerHoldsItsShareOnlyAndANormalRequestIsServed) {
  std::vector<Trickler> attack;
  for (int i = 0; i < 6; ++i) {
    attack.push_back(trickle(kAttacker));
  }
  EXPECT_EQ(server->bodyBytesReserved(), 32u * 1024) << "two bodies of 16 KiB";
  EXPECT_EQ(refused(attack), 4u);
  const Reply reply = normalPost(kClient, std::string(2000, 'n'));
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, std::string(2000, 'n'));
  EXPECT_EQ(server->bodyBytesReserved(), 32u * 1024) << "the normal body given back";

  // Completing the held bodies answers them and gives their bytes back.
  for (auto& t : attack) {
    if (!t.reply->done) {
      send(t.held, std::string(16 * 1024 - 100, 'x'));
    }
  }
  ASSERT_TRUE(test::runUntil(io, [&] {
    for (const auto& t : attack) {
      if (!t.reply->done) {
        return false;
      }
    }
    return true;
  }));
  EXPECT_EQ(server->bodyBytesReserved(), 0u);
}

TEST_F(BodyBudgetAbuseTest, ManyPeersTogetherNeverHoldMoreThanTheTotal) {
  std::vector<Trickler> attack;
  for (const char* from : {"127.0.0.1", "127.0.0.3", "127.0.0.4", "127.0.0.5"}) {
    for (int i = 0; i < 3; ++i) {
      attack.push_back(trickle(from));
    }
  }
  EXPECT_EQ(server->bodyBytesReserved(), 64u * 1024);
  EXPECT_EQ(refused(attack), 8u);
  EXPECT_EQ(normalGet().status, 200u) << "a request without a body needs no budget";
  // The documented limit: peers together can exhaust the total, and then a
  // request with a body is refused, to be retried.
  const Reply refusedPost = normalPost(kClient, "small");
  EXPECT_EQ(refusedPost.status, 503u);
  EXPECT_EQ(refusedPost.retryAfter, "1");
  for (auto& t : attack) {
    t.held.stream->close();
  }
  ASSERT_TRUE(test::runUntil(io, [&] { return server->bodyBytesReserved() == 0; }));
  EXPECT_EQ(normalPost(kClient, "small").status, 200u);
}

TEST_F(BodyBudgetAbuseTest, AChunkedBodyReservesTheMostItMayGrowTo) {
  Held held = connect(kAttacker);
  send(held, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
  auto reply = test::spawn(io, readReply(*held.stream, *held.buffer));
  ASSERT_TRUE(test::runUntil(io, [&] { return server->bodyBytesReserved() == 24u * 1024; }));
  send(held, "0\r\n\r\n");
  ASSERT_TRUE(test::runUntil(io, [&] { return reply->done; }));
  ASSERT_TRUE(reply->value);
  EXPECT_EQ(reply->value->status, 200u);
  EXPECT_EQ(reply->value->body, "hello");
  EXPECT_EQ(server->bodyBytesReserved(), 0u);
}

TEST_F(BodyBudgetAbuseTest, ABodyOverTheLimitIsStill413) {
  Held held = connect(kAttacker);
  send(held, head(25 * 1024));
  const Reply reply = run(readReply(*held.stream, *held.buffer));
  EXPECT_EQ(reply.status, 413u);
  EXPECT_EQ(server->bodyBytesReserved(), 0u);
}

} // namespace
} // namespace csiop::http
