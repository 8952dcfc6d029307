#include "clients.hpp"

#include <poll.h>

#include <algorithm>
#include <exception>
#include <optional>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <csiop/webhook/server.hpp>

namespace csiop::bench::endpoint {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// A connection, plain or TLS (the TLS stream on top of the plain one).
struct Clients::Connection {
  Connection(asio::io_context& io, std::uint16_t serverPort) : port(serverPort), plain(io) {}

  std::uint16_t port;
  beast::tcp_stream plain;
  std::optional<asio::ssl::stream<beast::tcp_stream&>> tls;
  beast::flat_buffer buffer;

  asio::awaitable<void> connect(const Endpoint& endpoint, const std::string& from) {
    auto& socket = plain.socket();
    socket.open(tcp::v4());
    socket.bind(tcp::endpoint(asio::ip::make_address(from), 0));
    co_await plain.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), endpoint.port),
                                 asio::use_awaitable);
    socket.set_option(tcp::no_delay(true));
  }
  asio::awaitable<void> handshake() {
    co_await tls->async_handshake(asio::ssl::stream_base::client, asio::use_awaitable);
  }
  template <class Message> asio::awaitable<void> write(Message& message) {
    if (tls) {
      co_await http::async_write(*tls, message, asio::use_awaitable);
    } else {
      co_await http::async_write(plain, message, asio::use_awaitable);
    }
  }
  asio::awaitable<void> writeBytes(asio::const_buffer bytes) {
    if (tls) {
      co_await asio::async_write(*tls, bytes, asio::use_awaitable);
    } else {
      co_await asio::async_write(plain, bytes, asio::use_awaitable);
    }
  }
  asio::awaitable<http::response<http::string_body>> read() {
    http::response<http::string_body> response;
    if (tls) {
      co_await http::async_read(*tls, buffer, response, asio::use_awaitable);
    } else {
      co_await http::async_read(plain, buffer, response, asio::use_awaitable);
    }
    co_return response;
  }
  // Closed or half-closed by the server.
  bool closedByPeer() const {
    pollfd p{const_cast<beast::tcp_stream&>(plain).socket().native_handle(), POLLRDHUP, 0};
    return !plain.socket().is_open() ||
           (::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0);
  }
};

namespace {

// Runs `work` on `io` until it ends (other work on `io` may stay pending).
template <class T> T runOn(asio::io_context& io, asio::awaitable<T> work) {
  std::optional<T> result;
  std::exception_ptr error;
  bool done = false;
  asio::co_spawn(io, std::move(work), [&](std::exception_ptr e, T value) {
    error = e;
    result = std::move(value);
    done = true;
  });
  io.restart();
  while (!done) {
    io.run_one();
  }
  if (error) {
    std::rethrow_exception(error);
  }
  return std::move(*result);
}

http::request<http::string_body> request(http::verb verb, std::string target) {
  http::request<http::string_body> message{verb, target, 11};
  message.set(http::field::host, "127.0.0.1");
  message.keep_alive(true);
  return message;
}

} // namespace

Clients::Clients(const std::string& caPem) : tls_(asio::ssl::context::tls_client) {
  tls_.add_certificate_authority(asio::buffer(caPem));
  tls_.set_verify_mode(asio::ssl::verify_peer);
  tls_.set_verify_callback(asio::ssl::host_name_verification("127.0.0.1"));
}

Clients::~Clients() {
  release();
}

std::size_t Clients::flood(const Endpoint& endpoint, Hold hold, std::size_t count,
                           const std::vector<std::string>& from) {
  return runOn(io_, [&]() -> asio::awaitable<std::size_t> {
    std::size_t next = 0;
    std::size_t opened = 0;
    const auto worker = [&]() -> asio::awaitable<void> {
      while (next < count) {
        const std::size_t index = next++;
        auto connection = std::make_shared<Connection>(io_, endpoint.port);
        if (endpoint.tls && hold == Hold::KeepAlive) {
          connection->tls.emplace(connection->plain, tls_);
        }
        try {
          connection->plain.expires_after(std::chrono::seconds(10));
          co_await connection->connect(endpoint, from[index % from.size()]);
          if (hold == Hold::KeepAlive) {
            if (connection->tls) {
              co_await connection->handshake();
            }
            auto get = request(http::verb::get, "/healthz");
            co_await connection->write(get);
            const auto response = co_await connection->read();
            if (response.result_int() != 200 || !response.keep_alive()) {
              continue;
            }
          }
          connection->plain.expires_never();
          held_.push_back(connection);
          ++opened;
        } catch (const std::exception&) {
          // Refused or closed by the server: not held.
        }
      }
    };
    int workers = 0;
    for (int i = 0; i < 64; ++i) {
      ++workers;
      asio::co_spawn(io_, worker(), [&](std::exception_ptr) { --workers; });
    }
    while (workers > 0) {
      asio::steady_timer tick(io_, std::chrono::milliseconds(5));
      co_await tick.async_wait(asio::use_awaitable);
    }
    co_return opened;
  }());
}

void Clients::holdBodies(const Endpoint& endpoint, std::size_t count,
                         const std::vector<std::string>& from, std::size_t contentLength,
                         std::size_t sent) {
  const std::string head = "POST " + std::string(csiop::webhook::kValidatePath) +
                           " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           "Content-Length: " +
                           std::to_string(contentLength) + "\r\n\r\n";
  const std::string body(sent, ' '); // one buffer for every connection
  runOn(io_, [&]() -> asio::awaitable<bool> {
    int active = 0;
    for (std::size_t i = 0; i < count; ++i) {
      auto connection = std::make_shared<Connection>(io_, endpoint.port);
      if (endpoint.tls) {
        connection->tls.emplace(connection->plain, tls_);
      }
      held_.push_back(connection);
      ++active;
      asio::co_spawn(
          io_,
          [&, connection, i]() -> asio::awaitable<void> {
            connection->plain.expires_after(std::chrono::seconds(10));
            co_await connection->connect(endpoint, from[i % from.size()]);
            if (connection->tls) {
              co_await connection->handshake();
            }
            co_await connection->writeBytes(asio::buffer(head));
            co_await connection->writeBytes(asio::buffer(body));
            connection->plain.expires_never();
          },
          [&](std::exception_ptr) { --active; }); // refused: the server closes it
    }
    while (active > 0) {
      asio::steady_timer tick(io_, std::chrono::milliseconds(5));
      co_await tick.async_wait(asio::use_awaitable);
    }
    co_return true;
  }());
}

std::size_t Clients::held(const Endpoint& endpoint) const {
  return static_cast<std::size_t>(std::count_if(held_.begin(), held_.end(), [&](const auto& c) {
    return c->port == endpoint.port && !c->closedByPeer();
  }));
}

void Clients::release() {
  for (const auto& connection : held_) {
    boost::system::error_code ignored;
    connection->plain.socket().close(ignored);
  }
  held_.clear();
  io_.restart();
  io_.poll();
}

Probe Clients::review(const Endpoint& endpoint, const std::string& body, const std::string& from,
                      std::chrono::milliseconds timeout) {
  return runOn(io_, [&]() -> asio::awaitable<Probe> {
    Probe probe;
    const auto start = Clock::now();
    Connection connection(io_, endpoint.port);
    connection.tls.emplace(connection.plain, tls_);
    connection.plain.expires_after(timeout);
    try {
      co_await connection.connect(endpoint, from);
      co_await connection.handshake();
      auto post = request(http::verb::post, csiop::webhook::kValidatePath);
      post.set(http::field::content_type, "application/json");
      post.body() = body;
      post.prepare_payload();
      co_await connection.write(post);
      const auto response = co_await connection.read();
      probe.answered = response.result_int() == 200 &&
                       response.body().find("\"allowed\":true") != std::string::npos;
      if (!probe.answered) {
        probe.problem =
            "HTTP " + std::to_string(response.result_int()) + ": " + response.body().substr(0, 200);
      }
    } catch (const boost::system::system_error& e) {
      probe.problem = e.code().message(); // what() adds the source location
    } catch (const std::exception& e) {
      probe.problem = e.what();
    }
    probe.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    co_return probe;
  }());
}

Probe Clients::healthz(const Endpoint& endpoint, const std::string& from,
                       std::chrono::milliseconds timeout) {
  return runOn(io_, [&]() -> asio::awaitable<Probe> {
    Probe probe;
    const auto start = Clock::now();
    Connection connection(io_, endpoint.port);
    connection.plain.expires_after(timeout);
    try {
      co_await connection.connect(endpoint, from);
      auto get = request(http::verb::get, "/healthz");
      get.keep_alive(false); // as the kubelet's probes
      co_await connection.write(get);
      const auto response = co_await connection.read();
      probe.answered = response.result_int() == 200;
      if (!probe.answered) {
        probe.problem = "HTTP " + std::to_string(response.result_int());
      }
    } catch (const boost::system::system_error& e) {
      probe.problem = e.code().message(); // what() adds the source location
    } catch (const std::exception& e) {
      probe.problem = e.what();
    }
    probe.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    co_return probe;
  }());
}

} // namespace csiop::bench::endpoint
