#include <csiop/http/server.hpp>

#include <csiop/http/body_budget.hpp>
#include <csiop/http/connection_slots.hpp>

#include <charconv>
#include <exception>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace csiop::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

// ---------------------------------------------------------------- addresses

std::string BindAddress::toString() const {
  const std::string portText = std::to_string(port);
  if (!host) {
    return ":" + portText;
  }
  if (host->is_v6()) {
    return "[" + host->to_string() + "]:" + portText;
  }
  return host->to_string() + ":" + portText;
}

std::optional<BindAddress> parseBindAddress(std::string_view flag) {
  if (flag.empty() || flag == "0") {
    return std::nullopt;
  }
  const auto fail = [&](std::string_view why) {
    return std::invalid_argument("invalid bind address \"" + std::string(flag) +
                                 "\": " + std::string(why));
  };
  std::string_view hostText;
  std::string_view portText;
  bool bracketed = false;
  if (flag.front() == '[') {
    const auto close = flag.find("]:");
    if (close == std::string_view::npos) {
      throw fail("expected [ipv6]:port");
    }
    hostText = flag.substr(1, close - 1);
    portText = flag.substr(close + 2);
    bracketed = true;
  } else {
    const auto colon = flag.rfind(':');
    if (colon == std::string_view::npos) {
      throw fail("expected [host]:port, e.g. \":8080\" or \"127.0.0.1:8080\"");
    }
    hostText = flag.substr(0, colon);
    portText = flag.substr(colon + 1);
    if (hostText.find(':') != std::string_view::npos) {
      throw fail("an IPv6 address needs brackets, e.g. \"[::1]:8080\"");
    }
  }
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(portText.data(), portText.data() + portText.size(), port);
  if (portText.empty() || ec != std::errc() || end != portText.data() + portText.size() ||
      port > 65535) {
    throw fail("the port must be a number from 0 to 65535");
  }
  BindAddress address;
  address.port = static_cast<std::uint16_t>(port);
  if (hostText.empty()) {
    if (bracketed) {
      throw fail("empty IPv6 address");
    }
    return address;
  }
  if (!bracketed && hostText == "localhost") {
    address.host = asio::ip::make_address_v4("127.0.0.1");
    return address;
  }
  boost::system::error_code parseError;
  const auto host = asio::ip::make_address(std::string(hostText), parseError);
  if (parseError || (bracketed && !host.is_v6())) {
    throw fail("the host must be an IP address or \"localhost\"");
  }
  address.host = host;
  return address;
}

// ------------------------------------------------------------------- server

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  struct Connection {
    beast::tcp_stream stream; // deadlines and closing; TLS runs on top of it
    asio::ip::address peer;
    ConnectionSlots::Id slot;
    bool waiting = true;  // for the first byte of a request
    bool evicted = false; // closed to make room for another
  };
  struct Route {
    HttpHandler handler{}; // or:
    // Shared so that a running coroutine keeps it, whatever happens to the route.
    std::shared_ptr<const AsyncHttpHandler> asyncHandler{};
    HttpMethods methods = HttpMethods::GetHead;
  };

  Impl(asio::any_io_executor ex, std::optional<BindAddress> bind, HttpServerOptions opts)
      : executor(std::move(ex)), address(bind), options(std::move(opts)),
        slots(options.maxConnections, options.maxConnectionsPerPeer),
        bodies(options.bodyBudgetBytes, options.bodyBudgetPerPeerBytes) {}

  asio::any_io_executor executor;
  std::optional<BindAddress> address;
  HttpServerOptions options;
  std::unordered_map<std::string, Route> handlers;
  std::optional<tcp::acceptor> acceptor;
  std::uint16_t boundPort = 0;
  bool started = false;
  bool stopping = false;
  bool serverGone = false; // the HttpServer object was destroyed
  std::size_t open = 0;    // sessions not yet ended (evicted ones included)
  ConnectionSlots slots;
  BodyBudget bodies;
  std::unordered_map<ConnectionSlots::Id, Connection*> connections;

  void report(std::string_view message) const {
    if (options.onError) {
      options.onError(message);
    }
  }

  void listen();
  void stop();
  void evict(ConnectionSlots::Id slot);
  static asio::awaitable<void> acceptLoop(std::shared_ptr<Impl> self);
  static asio::awaitable<void> session(std::shared_ptr<Impl> self, tcp::socket socket,
                                       asio::ip::address peer, ConnectionSlots::Id slot);
  template <class Stream>
  asio::awaitable<void> serve(Connection& connection, Stream& stream,
                              std::chrono::steady_clock::time_point acceptedAt);
  template <class Stream>
  asio::awaitable<void> answerAndClose(Connection& connection, Stream& stream,
                                       beast::flat_buffer& buffer, const HttpResponse& response);
  asio::awaitable<HttpResponse> respond(HttpRequest request, http::verb method);
  std::size_t bodyBytesToReserve(const http::request_parser<http::string_body>& parser) const;
};

namespace {

using Clock = std::chrono::steady_clock;

bool isHttpParseError(const boost::system::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message;
}

// The answer to a request that could not be read, or 0 for none (timeouts,
// resets and the like: the connection just closes).
unsigned statusForReadError(const boost::system::error_code& ec) {
  if (ec == http::error::header_limit) {
    return 431;
  }
  if (ec == http::error::body_limit) {
    return 413;
  }
  return isHttpParseError(ec) ? 400 : 0;
}

template <class Body>
void setCommonHeaders(http::response<Body>& message, const HttpResponse& response, bool keepAlive) {
  message.result(response.status);
  message.set(http::field::content_type, response.contentType);
  message.set("X-Content-Type-Options", "nosniff");
  for (const auto& [name, value] : response.headers) {
    message.set(name, value);
  }
  message.keep_alive(keepAlive);
}

HttpResponse textResponse(unsigned status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

// One peer for an IPv4 client whether the listener is IPv4 or dual-stack.
asio::ip::address peerOf(const asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  }
  return address;
}

HttpRequest requestView(http::request<http::string_body>& request) {
  HttpRequest view;
  view.method = std::string(request.method_string());
  view.target = std::string(request.target());
  const auto question = view.target.find('?');
  view.path = view.target.substr(0, question);
  if (question != std::string::npos) {
    view.query = view.target.substr(question + 1);
  }
  view.contentType = std::string(request[http::field::content_type]);
  view.body = std::move(request.body());
  return view;
}

} // namespace

void HttpServer::Impl::listen() {
  const std::string where = address->toString();
  const auto bindTo = [&](const tcp::endpoint& endpoint, bool dualStack) {
    acceptor.emplace(executor);
    acceptor->open(endpoint.protocol());
    acceptor->set_option(asio::socket_base::reuse_address(true));
    if (endpoint.protocol() == tcp::v6()) {
      acceptor->set_option(asio::ip::v6_only(!dualStack));
    }
    acceptor->bind(endpoint);
    acceptor->listen(asio::socket_base::max_listen_connections);
  };
  try {
    if (address->host) {
      bindTo(tcp::endpoint(*address->host, address->port), false);
    } else {
      try {
        bindTo(tcp::endpoint(tcp::v6(), address->port), true);
      } catch (const boost::system::system_error& e) {
        // No IPv6 on this host: every IPv4 interface instead.
        if (e.code() != boost::system::errc::address_family_not_supported &&
            e.code() != boost::system::errc::address_not_available) {
          throw;
        }
        bindTo(tcp::endpoint(tcp::v4(), address->port), false);
      }
    }
    boundPort = acceptor->local_endpoint().port();
  } catch (const boost::system::system_error& e) {
    acceptor.reset();
    throw std::runtime_error("cannot listen on " + where + ": " + e.code().message());
  }
}

void HttpServer::Impl::stop() {
  if (stopping) {
    return;
  }
  stopping = true;
  if (acceptor) {
    boost::system::error_code ignored;
    acceptor->close(ignored);
  }
  for (const auto& [slot, connection] : connections) {
    if (connection->waiting) {
      connection->stream.close(); // its pending read ends with operation_aborted
    }
  }
}

void HttpServer::Impl::evict(ConnectionSlots::Id slot) {
  const auto found = connections.find(slot);
  if (found != connections.end()) {
    found->second->evicted = true;
    found->second->stream.close(); // frees its descriptor now; its session ends soon
  }
}

asio::awaitable<void> HttpServer::Impl::acceptLoop(std::shared_ptr<Impl> self) {
  while (!self->stopping) {
    auto [ec, socket] = co_await self->acceptor->async_accept(asio::as_tuple(asio::use_awaitable));
    if (self->stopping || ec == asio::error::operation_aborted) {
      co_return;
    }
    if (ec) {
      // E.g. out of file descriptors: report, breathe, retry.
      self->report("http server: accept failed: " + ec.message());
      asio::steady_timer pause(self->executor, std::chrono::milliseconds(50));
      co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
      continue;
    }
    boost::system::error_code peerError;
    const tcp::endpoint remote = socket.remote_endpoint(peerError);
    const asio::ip::address peer = peerOf(remote.address());
    const ConnectionSlots::Admission admission =
        peerError ? ConnectionSlots::Admission{} : self->slots.admit(peer);
    if (admission.evicted) {
      self->evict(*admission.evicted);
    }
    if (!admission.id) {
      boost::system::error_code ignored;
      socket.close(ignored);
      continue;
    }
    // A response goes out in several writes (over TLS, a record for its
    // header and one for its body): without this, Nagle holds the last one
    // back until the client's delayed ACK, 40 ms later.
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    ++self->open;
    asio::co_spawn(self->executor, session(self, std::move(socket), peer, *admission.id),
                   asio::detached);
  }
}

asio::awaitable<void> HttpServer::Impl::session(std::shared_ptr<Impl> self, tcp::socket socket,
                                                asio::ip::address peer, ConnectionSlots::Id slot) {
  Connection connection{beast::tcp_stream(std::move(socket)), peer, slot};
  self->connections.emplace(slot, &connection);
  const auto acceptedAt = Clock::now();
  try {
    if (self->options.tls) {
      // The context of this connection, kept alive for as long as it lasts.
      const std::shared_ptr<asio::ssl::context> context = self->options.tls();
      if (!context) {
        throw std::runtime_error("no TLS context");
      }
      asio::ssl::stream<beast::tcp_stream&> tls(connection.stream, *context);
      connection.stream.expires_at(acceptedAt + self->options.readTimeout);
      auto [ec] = co_await tls.async_handshake(asio::ssl::stream_base::server,
                                               asio::as_tuple(asio::use_awaitable));
      if (ec && !connection.evicted && !self->stopping) {
        self->report("http server: TLS handshake failed: " + ec.message());
      } else if (!ec) {
        co_await self->serve(connection, tls, acceptedAt);
      }
    } else {
      co_await self->serve(connection, connection.stream, acceptedAt);
    }
  } catch (const std::exception& e) {
    self->report(std::string("http server: connection failed: ") + e.what());
  }
  boost::system::error_code ignored;
  connection.stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  connection.stream.close();
  self->connections.erase(slot);
  self->slots.remove(slot);
  --self->open;
}

template <class Stream>
asio::awaitable<void> HttpServer::Impl::serve(Connection& connection, Stream& stream,
                                              Clock::time_point acceptedAt) {
  auto& transport = connection.stream; // deadlines apply to every read and write through it
  beast::flat_buffer buffer;
  bool first = true;
  for (;;) {
    if (stopping) {
      co_return;
    }
    // Wait for a request to begin. The first must arrive within readTimeout
    // of the accept; later ones within idleTimeout of the previous response.
    if (buffer.size() == 0) {
      if (!first) {
        slots.set(connection.slot, ConnectionSlots::State::Idle);
      }
      connection.waiting = true;
      transport.expires_at(first ? acceptedAt + options.readTimeout
                                 : Clock::now() + options.idleTimeout);
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(4096),
                                                     asio::as_tuple(asio::use_awaitable));
      connection.waiting = false;
      if (ec) {
        co_return; // closed by the client, timed out, evicted, or stop()
      }
      buffer.commit(n);
    }
    slots.set(connection.slot, ConnectionSlots::State::Busy);

    // The header first, so that the body's size is reserved before it is read.
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(options.maxHeaderBytes));
    parser.body_limit(options.maxBodyBytes);
    transport.expires_at(first ? acceptedAt + options.readTimeout
                               : Clock::now() + options.readTimeout);
    auto [readError, bytes] = co_await http::async_read_header(stream, buffer, parser,
                                                               asio::as_tuple(asio::use_awaitable));
    std::optional<BodyBudget::Reservation> reservation;
    if (!readError) {
      reservation = bodies.reserve(connection.peer, bodyBytesToReserve(parser));
      if (!reservation) {
        HttpResponse busy = textResponse(503, "too many request bodies in progress\n");
        busy.headers.emplace_back("Retry-After", "1");
        co_await answerAndClose(connection, stream, buffer, busy);
        co_return;
      }
      if (!parser.is_done()) {
        std::tie(readError, bytes) =
            co_await http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
      }
    }
    if (readError) {
      if (const unsigned status = statusForReadError(readError); status != 0) {
        co_await answerAndClose(
            connection, stream, buffer,
            textResponse(status, status == 400 ? "bad request\n" : "request too large\n"));
      }
      co_return;
    }

    http::request<http::string_body> request = parser.release();
    const bool goneBefore = serverGone;
    const HttpResponse response = co_await respond(requestView(request), request.method());
    reservation.reset(); // the body died with the handler's copy
    if (serverGone && !goneBefore) {
      co_return; // destroyed while the handler ran: its answer is dropped
    }
    const bool keepAlive = request.keep_alive() && !stopping;
    transport.expires_after(options.writeTimeout);
    boost::system::error_code writeError;
    if (request.method() == http::verb::head) {
      http::response<http::empty_body> message;
      message.version(request.version());
      setCommonHeaders(message, response, keepAlive);
      message.content_length(response.body.size());
      std::tie(writeError, std::ignore) =
          co_await http::async_write(stream, message, asio::as_tuple(asio::use_awaitable));
    } else {
      http::response<http::string_body> message;
      message.version(request.version());
      setCommonHeaders(message, response, keepAlive);
      message.body() = response.body;
      message.prepare_payload();
      std::tie(writeError, std::ignore) =
          co_await http::async_write(stream, message, asio::as_tuple(asio::use_awaitable));
    }
    if (writeError || !keepAlive) {
      co_return;
    }
    first = false;
  }
}

template <class Stream>
asio::awaitable<void> HttpServer::Impl::answerAndClose(Connection& connection, Stream& stream,
                                                       beast::flat_buffer& buffer,
                                                       const HttpResponse& response) {
  auto& transport = connection.stream;
  http::response<http::string_body> message;
  setCommonHeaders(message, response, false);
  message.body() = response.body;
  message.prepare_payload();
  transport.expires_after(options.writeTimeout);
  co_await http::async_write(stream, message, asio::as_tuple(asio::use_awaitable));
  // The rest of the request is unread; half-close and let the client read
  // the answer before the connection goes (a close with unread data would
  // reset it).
  boost::system::error_code ignored;
  transport.socket().shutdown(tcp::socket::shutdown_send, ignored);
  transport.expires_after(std::chrono::milliseconds(500));
  for (std::size_t drained = 0; drained < 1024 * 1024;) {
    buffer.clear();
    auto [drainError, n] =
        co_await stream.async_read_some(buffer.prepare(4096), asio::as_tuple(asio::use_awaitable));
    if (drainError) {
      break;
    }
    drained += n;
  }
}

std::size_t
HttpServer::Impl::bodyBytesToReserve(const http::request_parser<http::string_body>& parser) const {
  if (parser.chunked()) {
    return options.maxBodyBytes; // the most it may grow to
  }
  // The parser has refused a Content-Length over maxBodyBytes already (413).
  return static_cast<std::size_t>(parser.content_length().value_or(0));
}

asio::awaitable<HttpResponse> HttpServer::Impl::respond(HttpRequest request, http::verb method) {
  if (serverGone) {
    co_return textResponse(503, "shutting down\n");
  }
  const auto route = handlers.find(request.path);
  if (route == handlers.end()) {
    co_return textResponse(404, "404 page not found\n");
  }
  const bool post = route->second.methods == HttpMethods::Post;
  if (post ? method != http::verb::post : method != http::verb::get && method != http::verb::head) {
    HttpResponse response = textResponse(405, "method not allowed\n");
    response.headers.emplace_back("Allow", post ? "POST" : "GET, HEAD");
    co_return response;
  }
  if (!post) {
    request.body.clear(); // POST only
  }
  // Copies: the route may be replaced, or the server destroyed, while an
  // asynchronous handler runs.
  const std::string path = request.path;
  const std::shared_ptr<const AsyncHttpHandler> asyncHandler = route->second.asyncHandler;
  try {
    // Not a conditional expression: GCC 12 mishandles a co_await in one.
    HttpResponse response;
    if (asyncHandler) {
      response = co_await (*asyncHandler)(std::move(request));
    } else {
      response = route->second.handler(request);
    }
    if (response.status < 100 || response.status > 999) {
      throw std::logic_error("handler returned status " + std::to_string(response.status));
    }
    co_return response;
  } catch (const std::exception& e) {
    report("http server: handler for " + path + " failed: " + e.what());
  } catch (...) {
    report("http server: handler for " + path + " failed");
  }
  co_return textResponse(500, "internal server error\n");
}

HttpServer::HttpServer(asio::any_io_executor executor, std::string_view bindAddress,
                       HttpServerOptions options)
    : impl_(std::make_shared<Impl>(std::move(executor), parseBindAddress(bindAddress),
                                   std::move(options))) {}

HttpServer::~HttpServer() {
  impl_->stop();
  impl_->serverGone = true;
  impl_->handlers.clear();
}

void HttpServer::handle(std::string path, HttpHandler handler, HttpMethods methods) {
  impl_->handlers.insert_or_assign(std::move(path), Impl::Route{std::move(handler), {}, methods});
}

void HttpServer::handleAsync(std::string path, AsyncHttpHandler handler, HttpMethods methods) {
  impl_->handlers.insert_or_assign(
      std::move(path),
      Impl::Route{{}, std::make_shared<const AsyncHttpHandler>(std::move(handler)), methods});
}

void HttpServer::start() {
  if (!impl_->address || impl_->started || impl_->stopping) {
    return;
  }
  impl_->listen();
  impl_->started = true;
  asio::co_spawn(impl_->executor, Impl::acceptLoop(impl_), [impl = impl_](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& error) {
        impl->report(std::string("http server: accept loop failed: ") + error.what());
      } catch (...) {
        impl->report("http server: accept loop failed");
      }
    }
  });
}

void HttpServer::stop() {
  impl_->stop();
}

bool HttpServer::enabled() const {
  return impl_->address.has_value();
}

std::uint16_t HttpServer::port() const {
  return impl_->boundPort;
}

std::size_t HttpServer::connections() const {
  return impl_->open;
}

std::size_t HttpServer::bodyBytesReserved() const {
  return impl_->bodies.used();
}

} // namespace csiop::http
