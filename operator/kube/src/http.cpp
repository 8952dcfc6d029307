#include <csiop/kube/http.hpp>
#include <csiop/kube/warning_header.hpp>

#include <poll.h>

#include <deque>
#include <optional>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <csiop/kube/errors.hpp>
#include <csiop/kube/server_url.hpp>

namespace csiop::kube {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

http::verb toVerb(Method method) {
  switch (method) {
  case Method::Get:
    return http::verb::get;
  case Method::Post:
    return http::verb::post;
  case Method::Put:
    return http::verb::put;
  case Method::Patch:
    return http::verb::patch;
  case Method::Delete:
    return http::verb::delete_;
  }
  return http::verb::get;
}

bool isIpAddress(const std::string& host) {
  error_code ec;
  (void)asio::ip::make_address(host, ec);
  return !ec;
}

// The peer went away: what a request on a connection the server closed while it sat idle
// fails with.
bool isClosedError(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message ||
         ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::connection_aborted || ec == asio::error::broken_pipe ||
         ec == asio::error::not_connected || ec == asio::ssl::error::stream_truncated;
}

[[noreturn]] void throwCancelled(const error_code& ec) {
  throw boost::system::system_error(ec);
}

// What one read from a connection asks for while it reads a response. Beast reads as much as
// its buffer has room for, but no less than 512 bytes, and a buffer that started small stays
// small: an 11 KB watch event was some 22 reads of 512 bytes, each a pass through the TLS stream
// and the scheduler. A TLS record holds at most 16 KiB, so one read takes a whole record. An idle
// pooled connection gives the room back.
constexpr std::size_t kReadSize = 16 * 1024;

// One connection, plain or TLS.
class Connection {
public:
  Connection(const asio::any_io_executor& executor, asio::ssl::context* tls) {
    if (tls)
      tls_.emplace(executor, *tls);
    else
      plain_.emplace(executor);
  }

  beast::tcp_stream& lowest() { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }
  bool isTls() const { return tls_.has_value(); }
  beast::ssl_stream<beast::tcp_stream>& tls() { return *tls_; }

  // Still usable after sitting in the pool: nothing buffered and nothing to read (a readable
  // idle socket means the server closed it or sent something we did not ask for).
  bool looksAlive() {
    if (buffer.size() != 0 || !lowest().socket().is_open())
      return false;
    pollfd fd{};
    fd.fd = lowest().socket().native_handle();
    fd.events = POLLIN | POLLRDHUP;
    return ::poll(&fd, 1, 0) == 0;
  }

  template <class Message> asio::awaitable<error_code> write(Message& message) {
    const auto start = [&](auto& stream) { return http::async_write(stream, message, use_tuple); };
    co_return co_await onStream(start);
  }
  template <class Parser> asio::awaitable<error_code> read(Parser& parser) {
    const auto start = [&](auto& stream) {
      return http::async_read(stream, buffer, parser, use_tuple);
    };
    co_return co_await onStream(start);
  }
  template <class Parser> asio::awaitable<error_code> readHeader(Parser& parser) {
    const auto start = [&](auto& stream) {
      return http::async_read_header(stream, buffer, parser, use_tuple);
    };
    co_return co_await onStream(start);
  }
  template <class Parser> asio::awaitable<error_code> readSome(Parser& parser) {
    const auto start = [&](auto& stream) {
      return http::async_read_some(stream, buffer, parser, use_tuple);
    };
    co_return co_await onStream(start);
  }

  void close() {
    error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
  }

  beast::flat_buffer buffer;
  std::chrono::steady_clock::time_point idleSince;

private:
  // The one place that chooses the stream: `start` begins an operation on the stream it is
  // given (TLS or plain) and returns its awaitable; the byte count is not needed.
  template <class Start> asio::awaitable<error_code> onStream(const Start& start) {
    if (tls_) {
      auto [ec, n] = co_await start(*tls_);
      co_return ec;
    }
    auto [ec, n] = co_await start(*plain_);
    co_return ec;
  }

  std::optional<beast::tcp_stream> plain_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls_;
};

using Response = http::response_parser<http::string_body>;

HttpResponse toResponse(Response& parser) {
  auto& message = parser.get();
  HttpResponse out;
  out.status = static_cast<int>(message.result_int());
  out.contentType = std::string(message[http::field::content_type]);
  out.retryAfter = std::string(message[http::field::retry_after]);
  for (auto [it, end] = message.equal_range(http::field::warning); it != end; ++it) {
    out.warnings.push_back(warningText(it->value()));
  }
  out.body = std::move(message.body());
  return out;
}

} // namespace

std::string_view toString(Method method) {
  switch (method) {
  case Method::Get:
    return "GET";
  case Method::Post:
    return "POST";
  case Method::Put:
    return "PUT";
  case Method::Patch:
    return "PATCH";
  case Method::Delete:
    return "DELETE";
  }
  return "?";
}

// --- HttpStream ------------------------------------------------------------------------------

struct HttpStream::Impl {
  std::unique_ptr<Connection> connection;
  std::unique_ptr<Response> parser;
  std::string description; // "GET https://host/path" for messages
  int status = 0;
  std::string contentType;
  std::string retryAfter;
  bool cancelled = false;
  bool done = false;

  asio::awaitable<std::optional<std::string>> read(std::chrono::milliseconds idleTimeout) {
    for (;;) {
      if (cancelled)
        throwCancelled(asio::error::operation_aborted);
      if (done || !connection)
        co_return std::nullopt;
      if (parser->is_done()) {
        finish();
        co_return std::nullopt;
      }
      if (idleTimeout.count() > 0)
        connection->lowest().expires_after(idleTimeout);
      else
        connection->lowest().expires_never();
      const error_code ec = co_await connection->readSome(*parser);
      if (cancelled || ec == asio::error::operation_aborted)
        throwCancelled(asio::error::operation_aborted);
      if (ec == beast::error::timeout)
        throw TransportError(TransportError::Kind::Timeout,
                             description + ": nothing received for " +
                                 std::to_string(idleTimeout.count()) + " ms");
      if (ec && isClosedError(ec))
        throw TransportError(TransportError::Kind::Closed,
                             description + ": connection closed mid-stream: " + ec.message());
      if (ec)
        throw TransportError(TransportError::Kind::Protocol, description + ": " + ec.message());
      std::string bytes = std::move(parser->get().body());
      parser->get().body().clear();
      if (parser->is_done())
        finish();
      if (!bytes.empty())
        co_return bytes;
    }
  }

  void finish() {
    done = true;
    if (connection)
      connection->close();
  }

  void cancel() {
    cancelled = true;
    if (connection)
      connection->close(); // completes a pending read with operation_aborted
  }
};

HttpStream::HttpStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpStream::HttpStream(HttpStream&&) noexcept = default;
HttpStream& HttpStream::operator=(HttpStream&&) noexcept = default;
HttpStream::~HttpStream() {
  if (impl_ && impl_->connection)
    impl_->connection->close();
}
int HttpStream::status() const {
  return impl_->status;
}
const std::string& HttpStream::contentType() const {
  return impl_->contentType;
}
const std::string& HttpStream::retryAfter() const {
  return impl_->retryAfter;
}
void HttpStream::cancel() {
  impl_->cancel();
}

asio::awaitable<std::optional<std::string>> HttpStream::read(std::chrono::milliseconds idle) {
  return impl_->read(idle);
}

asio::awaitable<std::string> HttpStream::readAll(std::size_t maxBytes) {
  std::string all;
  while (auto bytes = co_await impl_->read(std::chrono::seconds(30))) {
    all += *bytes;
    if (all.size() >= maxBytes) {
      all.resize(maxBytes);
      impl_->finish();
      break;
    }
  }
  co_return all;
}

// --- HttpClient ------------------------------------------------------------------------------

struct HttpClient::Impl {
  asio::any_io_executor executor;
  Config config;
  HttpOptions options;
  ServerUrl url;
  std::string hostHeader;
  std::string verifyName; // the name the server certificate must carry
  std::optional<asio::ssl::context> tls;
  std::deque<std::unique_ptr<Connection>> idle; // oldest first
  HttpStats stats;

  Impl(asio::any_io_executor ex, Config cfg, HttpOptions opts)
      : executor(std::move(ex)), config(std::move(cfg)), options(std::move(opts)),
        url(ServerUrl::parse(config.server)) {
    const bool defaultPort = url.port == (url.tls ? "443" : "80");
    hostHeader = defaultPort
                     ? (url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host)
                     : url.hostPort();
    verifyName = config.tlsServerName.empty() ? url.host : config.tlsServerName;
    if (url.tls)
      tls.emplace(makeTlsContext());
  }

  asio::ssl::context makeTlsContext() const {
    const std::string where = config.origin.empty() ? "TLS" : config.origin;
    asio::ssl::context ctx(asio::ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
    ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_compression);
    error_code ec;
    if (config.insecureSkipTlsVerify) {
      ctx.set_verify_mode(asio::ssl::verify_none);
    } else {
      ctx.set_verify_mode(asio::ssl::verify_peer);
      if (!config.caPem.empty())
        ctx.add_certificate_authority(asio::buffer(config.caPem), ec);
      else
        ctx.set_default_verify_paths(ec);
      if (ec)
        throw ConfigError(where + ": unusable certificate authority: " + ec.message());
    }
    if (!config.clientCertPem.empty()) {
      ctx.use_certificate_chain(asio::buffer(config.clientCertPem), ec);
      if (ec)
        throw ConfigError(where + ": unusable client certificate: " + ec.message());
      ctx.use_private_key(asio::buffer(config.clientKeyPem), asio::ssl::context::pem, ec);
      if (ec)
        throw ConfigError(where + ": unusable client key: " + ec.message());
    }
    return ctx;
  }

  std::string describe(const HttpRequest& request) const {
    return std::string(toString(request.method)) + " " + (url.tls ? "https://" : "http://") +
           url.hostPort() + url.pathPrefix + request.target;
  }

  http::request<http::string_body> build(const HttpRequest& request) const {
    http::request<http::string_body> req{toVerb(request.method), url.pathPrefix + request.target,
                                         11};
    req.set(http::field::host, hostHeader);
    req.set(http::field::user_agent, options.userAgent);
    req.set(http::field::accept, request.accept);
    if (const std::string token = config.bearerToken(); !token.empty())
      req.set(http::field::authorization, "Bearer " + token);
    if (!request.contentType.empty())
      req.set(http::field::content_type, request.contentType);
    req.keep_alive(true);
    req.body() = request.body;
    if (!request.body.empty() || request.method == Method::Post || request.method == Method::Put ||
        request.method == Method::Patch)
      req.prepare_payload();
    return req;
  }

  std::unique_ptr<Connection> takeIdle() {
    const auto now = std::chrono::steady_clock::now();
    while (!idle.empty()) {
      auto connection = std::move(idle.back());
      idle.pop_back();
      if (now - connection->idleSince < options.idleTimeout && connection->looksAlive())
        return connection;
      connection->close();
    }
    return nullptr;
  }

  void putIdle(std::unique_ptr<Connection> connection) {
    if (options.maxIdleConnections == 0) {
      connection->close();
      return;
    }
    connection->lowest().expires_never();
    connection->buffer.shrink_to_fit(); // empty: looksAlive() refuses one that is not
    connection->idleSince = std::chrono::steady_clock::now();
    idle.push_back(std::move(connection));
    while (idle.size() > options.maxIdleConnections) {
      idle.front()->close();
      idle.pop_front();
    }
  }

  asio::awaitable<std::unique_ptr<Connection>> connect(const std::string& what,
                                                       std::chrono::milliseconds timeout) {
    auto connection = std::make_unique<Connection>(executor, tls ? &*tls : nullptr);
    auto& lowest = connection->lowest();
    std::vector<tcp::endpoint> endpoints;
    {
      error_code bad;
      const auto address = asio::ip::make_address(url.host, bad);
      if (!bad) {
        endpoints.emplace_back(address, static_cast<unsigned short>(std::stoi(url.port)));
      } else {
        tcp::resolver resolver(executor);
        auto [rec, results] = co_await resolver.async_resolve(url.host, url.port, use_tuple);
        if (rec == asio::error::operation_aborted)
          throwCancelled(rec);
        if (rec)
          throw TransportError(TransportError::Kind::Connect,
                               what + ": cannot resolve " + url.host + ": " + rec.message());
        for (const auto& entry : results)
          endpoints.push_back(entry.endpoint());
      }
    }
    lowest.expires_after(timeout);
    auto [cec, endpoint] = co_await lowest.async_connect(endpoints, use_tuple);
    (void)endpoint;
    if (cec == beast::error::timeout)
      throw TransportError(TransportError::Kind::Timeout,
                           what + ": connecting to " + url.hostPort() + " timed out");
    if (cec == asio::error::operation_aborted)
      throwCancelled(cec);
    if (cec)
      throw TransportError(TransportError::Kind::Connect,
                           what + ": cannot connect to " + url.hostPort() + ": " + cec.message());
    error_code ignored;
    lowest.socket().set_option(tcp::no_delay(true), ignored);
    if (tls) {
      SSL* ssl = connection->tls().native_handle();
      if (!config.insecureSkipTlsVerify) {
        X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
        const int ok = isIpAddress(verifyName)
                           ? X509_VERIFY_PARAM_set1_ip_asc(param, verifyName.c_str())
                           : X509_VERIFY_PARAM_set1_host(param, verifyName.c_str(), 0);
        if (ok != 1)
          throw TransportError(TransportError::Kind::Tls,
                               what + ": cannot verify against name '" + verifyName + "'");
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      }
      if (!isIpAddress(verifyName)) // SNI carries names only (RFC 6066)
        SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                 const_cast<char*>(verifyName.c_str()));
      auto [hec] =
          co_await connection->tls().async_handshake(asio::ssl::stream_base::client, use_tuple);
      if (hec == beast::error::timeout)
        throw TransportError(TransportError::Kind::Timeout,
                             what + ": TLS handshake with " + url.hostPort() + " timed out");
      if (hec == asio::error::operation_aborted)
        throwCancelled(hec);
      if (hec) {
        std::string why = hec.message();
        if (const long verify = SSL_get_verify_result(ssl); verify != X509_V_OK)
          why = std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify) +
                " (expected name '" + verifyName + "')";
        throw TransportError(TransportError::Kind::Tls,
                             what + ": TLS handshake with " + url.hostPort() + ": " + why);
      }
    }
    ++stats.connects;
    co_return connection;
  }

  [[noreturn]] void fail(const std::string& what, const char* step, const error_code& ec,
                         std::chrono::milliseconds timeout) const {
    if (ec == beast::error::timeout)
      throw TransportError(TransportError::Kind::Timeout, what + ": no response within " +
                                                              std::to_string(timeout.count()) +
                                                              " ms");
    if (ec == asio::error::operation_aborted)
      throwCancelled(ec);
    if (isClosedError(ec))
      throw TransportError(TransportError::Kind::Closed,
                           what + ": connection closed while " + step + ": " + ec.message());
    if (ec.category() == asio::error::get_ssl_category())
      throw TransportError(TransportError::Kind::Tls, what + ": " + step + ": " + ec.message());
    throw TransportError(TransportError::Kind::Protocol, what + ": " + step + ": " + ec.message());
  }

  asio::awaitable<HttpResponse> send(HttpRequest request) {
    const auto timeout = request.timeout.count() > 0 ? request.timeout : options.timeout;
    const bool idempotent = request.idempotent.value_or(request.method == Method::Get ||
                                                        request.method == Method::Put ||
                                                        request.method == Method::Delete);
    const std::string what = describe(request);
    auto req = build(request);
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<Connection> connection = takeIdle();
      const bool reused = connection != nullptr;
      if (reused)
        ++stats.reuses;
      else
        connection = co_await connect(what, timeout);
      connection->lowest().expires_after(timeout);
      ++stats.requests;
      error_code ec = co_await connection->write(req);
      Response parser;
      parser.body_limit(options.maxBodyBytes);
      connection->buffer.reserve(kReadSize);
      if (!ec)
        ec = co_await connection->read(parser);
      if (ec) {
        connection->close();
        // A pooled connection the server closed just as we used it: nothing was answered, so
        // an idempotent request may go once more, on a fresh connection.
        if (reused && attempt == 0 && idempotent && isClosedError(ec) && !parser.got_some()) {
          ++stats.retries;
          continue;
        }
        if (ec == http::error::body_limit)
          throw TransportError(TransportError::Kind::Protocol,
                               what + ": response larger than " +
                                   std::to_string(options.maxBodyBytes) + " bytes");
        fail(what, parser.got_some() ? "reading the response" : "sending the request", ec, timeout);
      }
      const bool keepAlive = parser.get().keep_alive() && !parser.need_eof();
      HttpResponse response = toResponse(parser);
      if (keepAlive)
        putIdle(std::move(connection));
      else
        connection->close();
      co_return response;
    }
  }

  asio::awaitable<HttpStream> openStream(HttpRequest request) {
    const auto timeout = request.timeout.count() > 0 ? request.timeout : options.timeout;
    const std::string what = describe(request);
    auto req = build(request);
    auto connection = co_await connect(what, timeout);
    connection->lowest().expires_after(timeout);
    ++stats.requests;
    auto parser = std::make_unique<Response>();
    parser->body_limit(boost::none);
    connection->buffer.reserve(kReadSize);
    error_code ec = co_await connection->write(req);
    if (!ec)
      ec = co_await connection->readHeader(*parser);
    if (ec) {
      connection->close();
      fail(what, parser->got_some() ? "reading the response" : "sending the request", ec, timeout);
    }
    connection->lowest().expires_never();
    auto impl = std::make_unique<HttpStream::Impl>();
    impl->status = static_cast<int>(parser->get().result_int());
    impl->contentType = std::string(parser->get()[http::field::content_type]);
    impl->retryAfter = std::string(parser->get()[http::field::retry_after]);
    impl->description = what;
    impl->connection = std::move(connection);
    impl->parser = std::move(parser);
    co_return HttpStream(std::move(impl));
  }
};

HttpClient::HttpClient(asio::any_io_executor executor, Config config, HttpOptions options)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(config), std::move(options))) {}

HttpClient::~HttpClient() {
  closeIdleConnections();
}

asio::awaitable<HttpResponse> HttpClient::send(HttpRequest request) {
  auto self = impl_; // a request in flight keeps the pool alive
  co_return co_await self->send(std::move(request));
}

asio::awaitable<HttpStream> HttpClient::openStream(HttpRequest request) {
  auto self = impl_;
  co_return co_await self->openStream(std::move(request));
}

HttpStats HttpClient::stats() const {
  HttpStats s = impl_->stats;
  s.idle = impl_->idle.size();
  return s;
}

const Config& HttpClient::config() const {
  return impl_->config;
}
const HttpOptions& HttpClient::options() const {
  return impl_->options;
}
asio::any_io_executor HttpClient::executor() const {
  return impl_->executor;
}

void HttpClient::closeIdleConnections() {
  for (auto& connection : impl_->idle)
    connection->close();
  impl_->idle.clear();
}

} // namespace csiop::kube
