// A TLS HTTP/1.1 client for the server tests: verifies the server against a CA
// and the host name 127.0.0.1, keeps the connection open between requests.
#pragma once

#include <cstdint>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

namespace csiop::testing {

struct TlsClient {
  TlsClient(boost::asio::io_context& io, const std::string& caPem)
      : context(boost::asio::ssl::context::tls_client), stream(io, context) {
    context.add_certificate_authority(boost::asio::buffer(caPem));
    stream.set_verify_mode(boost::asio::ssl::verify_peer);
    stream.set_verify_callback(boost::asio::ssl::host_name_verification("127.0.0.1"));
  }

  boost::asio::awaitable<void> connect(std::uint16_t port) {
    co_await boost::beast::get_lowest_layer(stream).async_connect(
        boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port),
        boost::asio::use_awaitable);
    co_await stream.async_handshake(boost::asio::ssl::stream_base::client,
                                    boost::asio::use_awaitable);
  }

  // Sends `method target` with `body` (as application/json when not empty), reads the answer.
  boost::asio::awaitable<boost::beast::http::response<boost::beast::http::string_body>>
  request(boost::beast::http::verb method, std::string target, std::string body = {}) {
    namespace http = boost::beast::http;
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json");
    }
    req.body() = std::move(body);
    req.prepare_payload();
    co_await http::async_write(stream, req, boost::asio::use_awaitable);
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    co_await http::async_read(stream, buffer, parser, boost::asio::use_awaitable);
    co_return parser.release();
  }

  boost::asio::ssl::context context;
  boost::asio::ssl::stream<boost::beast::tcp_stream> stream;
  boost::beast::flat_buffer buffer;
};

} // namespace csiop::testing
