// HttpClient against a local Beast server: keep-alive reuse, stale pooled connections,
// timeouts, chunked bodies, TLS verification, bearer token rotation.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include <csiop/kube/http.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ssl/context.hpp>

#include "test_pki.hpp"
#include "test_server.hpp"

namespace csiop::kube {
namespace {

using testing::Reply;
using testing::Request;
using testing::runTask;
using testing::TestPki;
using testing::TestServer;
namespace asio = boost::asio;
using namespace std::chrono_literals;

Reply ok(std::string body = R"({"ok":true})") {
  Reply r;
  r.body = std::move(body);
  return r;
}

Config plain(const TestServer& server) {
  Config c;
  c.server = server.url();
  return c;
}

HttpRequest request(Method method, std::string target, std::string body = {}) {
  HttpRequest r(method, std::move(target));
  r.body = std::move(body);
  return r;
}

asio::awaitable<std::vector<int>> getMany(HttpClient& client, int n, std::string target = "/x") {
  std::vector<int> codes;
  for (int i = 0; i < n; ++i)
    codes.push_back((co_await client.send(HttpRequest(Method::Get, target))).status);
  co_return codes;
}

TEST(Http, SequentialRequestsReuseOneConnection) {
  asio::io_context io;
  TestServer server(io, [](const Request&) { return ok(); });
  HttpClient client(io.get_executor(), plain(server));
  const auto codes = runTask(io, getMany(client, 50));
  EXPECT_EQ(codes, std::vector<int>(50, 200));
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(client.stats().connects, 1u);
  EXPECT_EQ(client.stats().reuses, 49u);
  EXPECT_EQ(client.stats().requests, 50u);
  EXPECT_EQ(client.stats().idle, 1u);
  EXPECT_EQ(server.requests().back().onConnection, 50);
}

TEST(Http, SendsHostUserAgentAcceptAndBody) {
  asio::io_context io;
  TestServer server(io, [](const Request&) { return ok(); });
  Config config = plain(server);
  config.server += "/prefix/";
  config.token = "s3cret";
  HttpClient client(io.get_executor(), config, {.userAgent = "csi-operator/test"});
  HttpRequest post = request(Method::Post, "/api/v1/x?a=b", "{}");
  post.contentType = "application/json";
  const auto response = runTask(io, client.send(post));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, R"({"ok":true})");
  EXPECT_EQ(response.contentType, "application/json");
  const Request& seen = server.requests().at(0);
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.target, "/prefix/api/v1/x?a=b");
  EXPECT_EQ(seen.headers.at("host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(seen.headers.at("user-agent"), "csi-operator/test");
  EXPECT_EQ(seen.headers.at("accept"), "application/json");
  EXPECT_EQ(seen.headers.at("authorization"), "Bearer s3cret");
  EXPECT_EQ(seen.headers.at("content-type"), "application/json");
  EXPECT_EQ(seen.body, "{}");
}

TEST(Http, ConcurrentRequestsOpenMoreConnectionsAndThePoolKeepsAFew) {
  asio::io_context io;
  TestServer server(io, [](const Request&) {
    Reply r = ok();
    r.delay = 50ms;
    return r;
  });
  HttpClient client(io.get_executor(), plain(server), {.maxIdleConnections = 2});
  runTask(io, [&]() -> asio::awaitable<void> {
    int done = 0;
    for (int i = 0; i < 5; ++i)
      asio::co_spawn(
          io,
          [&]() -> asio::awaitable<void> {
            co_await client.send(HttpRequest(Method::Get, "/x"));
            ++done;
          },
          asio::detached);
    asio::steady_timer timer(io);
    while (done < 5) {
      timer.expires_after(10ms);
      co_await timer.async_wait(asio::use_awaitable);
    }
  }());
  EXPECT_EQ(server.connections(), 5);
  EXPECT_EQ(client.stats().idle, 2u);
  runTask(io, getMany(client, 3));
  EXPECT_EQ(server.connections(), 5); // served by the pooled ones
}

TEST(Http, AConnectionTheServerClosedWhileIdleIsNotReused) {
  asio::io_context io;
  TestServer server(io, [](const Request&) {
    Reply r = ok();
    r.closeAfter = true; // says keep-alive, then closes: a server's idle timeout
    return r;
  });
  HttpClient client(io.get_executor(), plain(server));
  runTask(io, getMany(client, 1));
  // Let the FIN arrive.
  runTask(io, [&]() -> asio::awaitable<void> {
    asio::steady_timer t(io, 50ms);
    co_await t.async_wait(asio::use_awaitable);
  }());
  EXPECT_EQ(runTask(io, getMany(client, 1)), std::vector<int>{200});
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(client.stats().retries, 0u); // detected before use, not by a failed request
}

// The race the liveness check cannot see: the server closes the connection just as the next
// request arrives on it.
Reply dropSecondRequestOnFirstConnection(const Request& r) {
  if (r.connection == 1 && r.onConnection == 2) {
    Reply drop;
    drop.drop = true;
    return drop;
  }
  return ok();
}

TEST(Http, AnIdempotentRequestOnADeadPooledConnectionIsRetriedOnce) {
  asio::io_context io;
  TestServer server(io, dropSecondRequestOnFirstConnection);
  HttpClient client(io.get_executor(), plain(server));
  EXPECT_EQ(runTask(io, getMany(client, 3)), std::vector<int>(3, 200));
  EXPECT_EQ(client.stats().retries, 1u);
  EXPECT_EQ(server.connections(), 2);
}

TEST(Http, ANonIdempotentRequestIsNotRetried) {
  asio::io_context io;
  TestServer server(io, dropSecondRequestOnFirstConnection);
  HttpClient client(io.get_executor(), plain(server));
  runTask(io, getMany(client, 1));
  try {
    runTask(io, client.send(request(Method::Post, "/x", "{}")));
    FAIL() << "no error";
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::Closed) << e.what();
  }
  EXPECT_EQ(client.stats().retries, 0u);
  EXPECT_EQ(server.requests().size(), 2u);
  // ... unless the caller says it is safe (server-side apply is).
  server.setHandler([](const Request& r) {
    return r.connection == 2 && r.onConnection == 2 ? Reply{.drop = true} : ok();
  });
  runTask(io, getMany(client, 1)); // second connection, first request
  HttpRequest apply = request(Method::Patch, "/x", "{}");
  apply.idempotent = true;
  const auto response = runTask(io, client.send(apply));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(client.stats().retries, 1u);
}

TEST(Http, IdleConnectionsOlderThanTheIdleTimeoutAreNotReused) {
  asio::io_context io;
  TestServer server(io, [](const Request&) { return ok(); });
  HttpClient client(io.get_executor(), plain(server), {.idleTimeout = 20ms});
  runTask(io, getMany(client, 1));
  runTask(io, [&]() -> asio::awaitable<void> {
    asio::steady_timer t(io, 40ms);
    co_await t.async_wait(asio::use_awaitable);
  }());
  runTask(io, getMany(client, 1));
  EXPECT_EQ(server.connections(), 2);
}

TEST(Http, ConnectionCloseIsHonoured) {
  asio::io_context io;
  TestServer server(io, [](const Request&) {
    Reply r = ok();
    r.connectionClose = true;
    return r;
  });
  HttpClient client(io.get_executor(), plain(server));
  runTask(io, getMany(client, 3));
  EXPECT_EQ(server.connections(), 3);
  EXPECT_EQ(client.stats().retries, 0u);
  EXPECT_EQ(client.stats().idle, 0u);
}

TEST(Http, TimeoutIsATransportError) {
  asio::io_context io;
  TestServer server(io, [](const Request&) {
    Reply r = ok();
    r.delay = 3s;
    return r;
  });
  HttpClient client(io.get_executor(), plain(server), {.timeout = 5s});
  const auto start = std::chrono::steady_clock::now();
  try {
    HttpRequest slow(Method::Get, "/slow");
    slow.timeout = 200ms;
    runTask(io, client.send(slow));
    FAIL() << "no timeout";
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::Timeout) << e.what();
    EXPECT_NE(std::string(e.what()).find("GET http://127.0.0.1:"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(client.stats().idle, 0u); // the timed-out connection is not pooled
}

TEST(Http, ConnectionRefusedIsATransportError) {
  asio::io_context io;
  unsigned short port = 0;
  {
    TestServer server(io, [](const Request&) { return ok(); });
    port = server.port();
  }
  HttpClient client(io.get_executor(), {.server = "http://127.0.0.1:" + std::to_string(port)});
  try {
    runTask(io, client.send(HttpRequest(Method::Get, "/")));
    FAIL();
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::Connect) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot connect to 127.0.0.1:"), std::string::npos);
  }
}

TEST(Http, ChunkedResponsesAreAssembled) {
  asio::io_context io;
  TestServer server(io, [](const Request&) {
    Reply r;
    r.chunks = {"{\"a\":", "[1,2,", "3]}"};
    r.chunkDelay = 5ms;
    return r;
  });
  HttpClient client(io.get_executor(), plain(server));
  EXPECT_EQ(runTask(io, client.send(HttpRequest(Method::Get, "/"))).body, R"({"a":[1,2,3]})");
  EXPECT_EQ(runTask(io, client.send(HttpRequest(Method::Get, "/"))).body, R"({"a":[1,2,3]})");
  EXPECT_EQ(server.connections(), 1);
}

TEST(Http, ResponsesLargerThanTheLimitAreRefused) {
  asio::io_context io;
  TestServer server(io, [](const Request&) { return ok(std::string(2000, 'x')); });
  HttpClient client(io.get_executor(), plain(server), {.maxBodyBytes = 1000});
  try {
    runTask(io, client.send(HttpRequest(Method::Get, "/")));
    FAIL();
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::Protocol) << e.what();
  }
}

TEST(Http, StreamsDeliverChunksAsTheyArrive) {
  asio::io_context io;
  TestServer server(io, [](const Request&) {
    Reply r;
    r.chunks = {"one\n", "two\n", "three\n"};
    r.chunkDelay = 20ms;
    return r;
  });
  HttpClient client(io.get_executor(), plain(server));
  const auto pieces = runTask(io, [&]() -> asio::awaitable<std::vector<std::string>> {
    auto stream = co_await client.openStream(HttpRequest(Method::Get, "/watch"));
    EXPECT_EQ(stream.status(), 200);
    std::vector<std::string> out;
    while (auto bytes = co_await stream.read(1s))
      out.push_back(*bytes);
    co_return out;
  }());
  EXPECT_EQ(pieces, (std::vector<std::string>{"one\n", "two\n", "three\n"}));
}

TEST(Http, BearerTokenFollowsTheRotatingFile) {
  asio::io_context io;
  TestServer server(io, [](const Request&) { return ok(); });
  const auto path =
      std::filesystem::temp_directory_path() / ("csiop-token-" + std::to_string(::getpid()));
  std::ofstream(path) << "first\n";
  Config config = plain(server);
  config.tokenFile = std::make_shared<TokenFile>(path);
  HttpClient client(io.get_executor(), config);
  runTask(io, getMany(client, 1));
  std::ofstream(path, std::ios::trunc) << "second-token\n"; // kubelet rotated it
  runTask(io, getMany(client, 1));
  std::filesystem::remove(path);
  EXPECT_EQ(server.requests().at(0).headers.at("authorization"), "Bearer first");
  EXPECT_EQ(server.requests().at(1).headers.at("authorization"), "Bearer second-token");
}

// --- TLS -------------------------------------------------------------------------------------

std::shared_ptr<asio::ssl::context> serverTls(const testing::KeyPair& pair,
                                              const std::string& clientCa = {}) {
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  ctx->use_certificate_chain(asio::buffer(pair.certPem));
  ctx->use_private_key(asio::buffer(pair.keyPem), asio::ssl::context::pem);
  if (!clientCa.empty()) {
    ctx->add_certificate_authority(asio::buffer(clientCa));
    ctx->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
  }
  return ctx;
}

const TestPki& pki() {
  static const TestPki instance;
  return instance;
}

TEST(Https, VerifiesTheServerAgainstTheCaAndItsIpAddress) {
  asio::io_context io;
  TestServer server(
      io, [](const Request&) { return ok(); },
      serverTls(pki().server("IP:127.0.0.1,DNS:localhost")));
  HttpClient client(io.get_executor(), {.server = server.url(), .caPem = pki().caPem()});
  EXPECT_EQ(runTask(io, getMany(client, 10)), std::vector<int>(10, 200));
  EXPECT_EQ(server.connections(), 1); // keep-alive over TLS too
}

TEST(Https, VerifiesTheDnsNameAndTlsServerName) {
  asio::io_context io;
  TestServer server(
      io, [](const Request&) { return ok(); }, serverTls(pki().server("DNS:kube.internal")));
  HttpClient client(
      io.get_executor(),
      {.server = server.url(), .caPem = pki().caPem(), .tlsServerName = "kube.internal"});
  EXPECT_EQ(runTask(io, getMany(client, 1)), std::vector<int>{200});

  HttpClient byIp(io.get_executor(), {.server = server.url(), .caPem = pki().caPem()});
  try {
    runTask(io, getMany(byIp, 1));
    FAIL() << "a certificate for kube.internal was accepted for 127.0.0.1";
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::Tls);
    EXPECT_NE(std::string(e.what()).find("certificate verify failed: "), std::string::npos)
        << e.what();
  }
}

TEST(Https, RejectsAServerSignedByAnotherCa) {
  asio::io_context io;
  const TestPki other("other-ca");
  TestServer server(
      io, [](const Request&) { return ok(); }, serverTls(other.server("IP:127.0.0.1")));
  HttpClient client(io.get_executor(), {.server = server.url(), .caPem = pki().caPem()});
  try {
    runTask(io, getMany(client, 1));
    FAIL();
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::Tls);
    EXPECT_NE(std::string(e.what()).find("unable to get local issuer certificate"),
              std::string::npos)
        << e.what();
  }
  // insecure-skip-tls-verify, only when asked for.
  HttpClient insecure(io.get_executor(), {.server = server.url(), .insecureSkipTlsVerify = true});
  EXPECT_EQ(runTask(io, getMany(insecure, 1)), std::vector<int>{200});
}

TEST(Https, PresentsTheClientCertificate) {
  asio::io_context io;
  TestServer server(
      io, [](const Request&) { return ok(); },
      serverTls(pki().server("IP:127.0.0.1"), pki().caPem()));
  const auto admin = pki().client("admin");
  HttpClient client(io.get_executor(), {.server = server.url(),
                                        .caPem = pki().caPem(),
                                        .clientCertPem = admin.certPem,
                                        .clientKeyPem = admin.keyPem});
  EXPECT_EQ(runTask(io, getMany(client, 1)), std::vector<int>{200});

  HttpClient anonymous(io.get_executor(), {.server = server.url(), .caPem = pki().caPem()});
  EXPECT_THROW(runTask(io, getMany(anonymous, 1)), TransportError);
}

TEST(Https, UnusablePemIsAConfigError) {
  asio::io_context io;
  EXPECT_THROW(HttpClient(io.get_executor(), {.server = "https://h", .caPem = "junk"}),
               ConfigError);
  EXPECT_THROW(HttpClient(io.get_executor(), {.server = "nope"}), ConfigError);
}

} // namespace
} // namespace csiop::kube
