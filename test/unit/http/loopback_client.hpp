// Plain-HTTP clients of the server tests, on loopback: connecting from a chosen
// 127.0.0.x address (a peer of its own for the server's per-peer caps), one
// request and its answer, raw bytes, and a watch for the server's close.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

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

namespace csiop::http::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

struct Reply {
  unsigned status = 0;
  std::string body;
  std::string contentType;
  std::string contentLength;
  std::string allow;
  std::string retryAfter;
  bool keepAlive = false;
};

// Connects to 127.0.0.1:port from the loopback address `from` (any 127.x.y.z).
inline asio::awaitable<tcp::socket> connectTo(std::uint16_t port, const char* from = "127.0.0.1") {
  tcp::socket socket(co_await asio::this_coro::executor);
  socket.open(tcp::v4());
  socket.bind(tcp::endpoint(asio::ip::make_address(from), 0));
  co_await socket.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port),
                                asio::use_awaitable);
  co_return socket;
}

inline asio::awaitable<Reply> readReply(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                        bool head = false) {
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(16 * 1024 * 1024);
  parser.skip(head);
  co_await bhttp::async_read(stream, buffer, parser, asio::use_awaitable);
  const auto& response = parser.get();
  Reply reply;
  reply.status = response.result_int();
  reply.body = response.body();
  reply.contentType = std::string(response[bhttp::field::content_type]);
  reply.contentLength = std::string(response[bhttp::field::content_length]);
  reply.allow = std::string(response[bhttp::field::allow]);
  reply.retryAfter = std::string(response[bhttp::field::retry_after]);
  reply.keepAlive = response.keep_alive();
  co_return reply;
}

inline asio::awaitable<Reply> exchange(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                       bhttp::verb verb, std::string target, bool keepAlive = true,
                                       std::string body = {}) {
  bhttp::request<bhttp::string_body> request{verb, target, 11};
  request.set(bhttp::field::host, "127.0.0.1");
  request.keep_alive(keepAlive);
  if (!body.empty()) {
    request.body() = std::move(body);
    request.prepare_payload();
  }
  co_await bhttp::async_write(stream, request, asio::use_awaitable);
  co_return co_await readReply(stream, buffer, verb == bhttp::verb::head);
}

// One request on a connection of its own, from `from`.
inline asio::awaitable<Reply> fetch(std::uint16_t port, bhttp::verb verb, std::string target,
                                    const char* from = "127.0.0.1", std::string body = {}) {
  beast::tcp_stream stream(co_await connectTo(port, from));
  beast::flat_buffer buffer;
  co_return co_await exchange(stream, buffer, verb, std::move(target), false, std::move(body));
}

// Sends raw bytes, then reads one response.
inline asio::awaitable<Reply> sendRaw(std::uint16_t port, std::string bytes) {
  beast::tcp_stream stream(co_await connectTo(port));
  co_await asio::async_write(stream, asio::buffer(bytes), asio::use_awaitable);
  beast::flat_buffer buffer;
  co_return co_await readReply(stream, buffer);
}

// Watches a socket until the server closes it.
struct Watch {
  bool closed = false;
  std::size_t received = 0;
};

template <class Socket>
std::shared_ptr<Watch> watchForClose(asio::io_context& io, std::shared_ptr<Socket> socket) {
  auto watch = std::make_shared<Watch>();
  asio::co_spawn(
      io,
      [socket, watch]() -> asio::awaitable<void> {
        std::array<char, 1024> data{};
        for (;;) {
          auto [ec, n] = co_await socket->async_read_some(asio::buffer(data),
                                                          asio::as_tuple(asio::use_awaitable));
          if (ec) {
            watch->closed = true;
            co_return;
          }
          watch->received += n;
        }
      },
      asio::detached);
  return watch;
}

} // namespace csiop::http::testing
