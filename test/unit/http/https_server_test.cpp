// The HTTP server's POST routes and its TLS mode: the handshake, the context chosen per
// connection (so a reloaded certificate serves new connections while open ones keep theirs),
// and clients that do not speak TLS.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <csiop/http/server.hpp>

#include "../common/tls_client.hpp"
#include "../kube/test_pki.hpp"
#include "../runtime/test_util.hpp"

namespace csiop::http {
namespace {

namespace test = runtime::test;

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using kube::testing::KeyPair;
using kube::testing::TestPki;
using namespace std::chrono_literals;

std::shared_ptr<ssl::context> serverContext(const KeyPair& pair) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::no_sslv2 | ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                       ssl::context::no_tlsv1_1);
  context->use_certificate_chain(asio::buffer(pair.certPem));
  context->use_private_key(asio::buffer(pair.keyPem), ssl::context::pem);
  return context;
}

using Client = csiop::testing::TlsClient;

asio::awaitable<void> connect(Client& client, std::uint16_t port) {
  co_await client.connect(port);
}

asio::awaitable<bhttp::response<bhttp::string_body>> post(Client& client, std::string body) {
  co_return co_await client.request(bhttp::verb::post, "/echo", std::move(body));
}

class HttpsServerTest : public ::testing::Test {
protected:
  HttpsServerTest() : first(pki.server("IP:127.0.0.1")), current(serverContext(first)) {
    HttpServerOptions options;
    options.onError = [this](std::string_view m) { errors.emplace_back(m); };
    options.tls = [this] { return current; };
    server = std::make_unique<HttpServer>(io.get_executor(), "127.0.0.1:0", options);
    server->handle(
        "/echo",
        [](const HttpRequest& r) {
          return HttpResponse{200, "text/plain", r.method + " " + r.contentType + " " + r.body};
        },
        HttpMethods::Post);
    server->handle("/healthz", [](const HttpRequest&) {
      return HttpResponse{200, "text/plain", "ok"};
    });
    server->start();
  }

  template <class T> T run(asio::awaitable<T> work) {
    return test::runCoroutine(io, std::move(work));
  }

  asio::io_context io;
  TestPki pki;
  KeyPair first;
  std::shared_ptr<ssl::context> current;
  std::vector<std::string> errors;
  std::unique_ptr<HttpServer> server;
};

TEST_F(HttpsServerTest, PostRouteGetsBodyAndContentTypeOverTls) {
  Client client(io, pki.caPem());
  run(connect(client, server->port()));
  const auto response = run(post(client, R"({"a":1})"));
  EXPECT_EQ(response.result_int(), 200u);
  EXPECT_EQ(response.body(), R"(POST application/json {"a":1})");
}

TEST_F(HttpsServerTest, MethodsAreCheckedPerRoute) {
  Client client(io, pki.caPem());
  run(connect(client, server->port()));
  const auto wrong = run(client.request(bhttp::verb::get, "/echo"));
  EXPECT_EQ(wrong.result_int(), 405u);
  EXPECT_EQ(wrong[bhttp::field::allow], "POST");
  const auto postToGet = run(client.request(bhttp::verb::post, "/healthz", "x"));
  EXPECT_EQ(postToGet.result_int(), 405u);
  EXPECT_EQ(postToGet[bhttp::field::allow], "GET, HEAD");
}

TEST_F(HttpsServerTest, ANewContextServesNewConnectionsWhileOpenOnesKeepTheirs) {
  Client before(io, pki.caPem());
  run(connect(before, server->port()));
  // The certificate is replaced by one from another CA.
  TestPki other("other-ca");
  current = serverContext(other.server("IP:127.0.0.1"));

  Client trustsOld(io, pki.caPem());
  EXPECT_THROW(run(connect(trustsOld, server->port())), boost::system::system_error)
      << "a new connection gets the new certificate";
  Client trustsNew(io, other.caPem());
  run(connect(trustsNew, server->port()));
  EXPECT_EQ(run(post(trustsNew, "new")).body(), "POST application/json new");
  EXPECT_EQ(run(post(before, "old")).body(), "POST application/json old")
      << "the open keep-alive connection still works";
}

TEST_F(HttpsServerTest, PlainHttpOnTheTlsPortIsClosedAndTheServerKeepsServing) {
  const auto closed = run([&]() -> asio::awaitable<bool> {
    beast::tcp_stream plain(co_await asio::this_coro::executor);
    co_await plain.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server->port()),
                                 asio::use_awaitable);
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    co_await asio::async_write(plain, asio::buffer(request), asio::use_awaitable);
    beast::flat_buffer buffer;
    bhttp::response<bhttp::string_body> response;
    auto [ec, n] =
        co_await bhttp::async_read(plain, buffer, response, asio::as_tuple(asio::use_awaitable));
    co_return ec.failed();
  }());
  EXPECT_TRUE(closed);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find("TLS handshake failed"), std::string::npos) << errors.front();
  Client client(io, pki.caPem());
  run(connect(client, server->port()));
  EXPECT_EQ(run(post(client, "still")).result_int(), 200u);
}

} // namespace
} // namespace csiop::http
