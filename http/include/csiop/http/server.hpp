// HTTP/1.1 server (Boost.Beast) for the probe, metrics and webhook endpoints,
// plain or over TLS.
//
// - Binds to an operator-style address flag: ":8081" (every interface; IPv6
//   dual-stack when available, else IPv4), "127.0.0.1:8080", "[::1]:8080",
//   "localhost:8080"; "0" or "" disables the server (as controller-runtime's
//   --metrics-bind-address / --health-probe-bind-address). Port 0 binds an
//   ephemeral port; port() tells which.
// - Serves registered handlers by exact path (query string ignored for
//   matching): 404 for an unknown path, 405 (with Allow) for a method the
//   handler does not take (GET and HEAD, or POST). HEAD gets GET's headers
//   without the body. A handler that throws gives a 500.
// - TLS when options.tls is set: it is asked for the context of every new
//   connection, so a reloaded certificate serves new connections while those
//   already open finish on the one they began with. The handshake counts
//   against the read deadline of the first request.
// - Robust against slow or hostile clients: header and body size limits (431,
//   413), a deadline for reading each request (a client trickling bytes is
//   dropped), an idle timeout between keep-alive requests, a write timeout, a
//   cap on concurrent connections (extra ones are closed at once), 400 for
//   unparsable requests.
// - stop() is graceful: the listening socket closes at once, idle keep-alive
//   connections close, and a request being read or answered completes (with
//   "Connection: close"). The io_context's run() returns once they are gone.
//
// Thread-safety: none. Construct, configure and stop it on the io_context's
// (single) thread; handlers run there too, so they must not block.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>

namespace csiop::http {

struct HttpRequest {
  std::string method{}; // "GET" or "HEAD" (others never reach a handler)
  std::string target{}; // as sent, e.g. "/readyz?verbose"
  std::string path{};   // target up to '?'
  std::string query{};  // after '?', empty if none
  std::string contentType{};
  std::string body{}; // POST only
};

enum class HttpMethods { GetHead, Post };

struct HttpResponse {
  unsigned status = 200; // 100..999
  std::string contentType = "text/plain; charset=utf-8";
  std::string body{};
  std::vector<std::pair<std::string, std::string>> headers{}; // extra ones
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct BindAddress {
  std::optional<boost::asio::ip::address> host; // nullopt: every interface
  std::uint16_t port = 0;                       // 0: ephemeral
  std::string toString() const;
};

// nullopt for "" and "0" (disabled). Throws std::invalid_argument naming the
// problem for anything else that is not [host]:port with a numeric port.
std::optional<BindAddress> parseBindAddress(std::string_view flag);

struct HttpServerOptions {
  std::size_t maxHeaderBytes = 8 * 1024;
  std::size_t maxBodyBytes = 8 * 1024;
  // From the first byte of a request (or from accept, for the first request
  // of a connection) to its last byte.
  std::chrono::milliseconds readTimeout{10'000};
  // Waiting for the next request on a keep-alive connection.
  std::chrono::milliseconds idleTimeout{60'000};
  std::chrono::milliseconds writeTimeout{10'000};
  std::size_t maxConnections = 512;
  // Told about handler exceptions, accept errors and failed TLS handshakes (optional).
  std::function<void(std::string_view)> onError{};
  // Serve HTTPS with the context this returns for each new connection (optional).
  std::function<std::shared_ptr<boost::asio::ssl::context>()> tls{};
};

class HttpServer {
public:
  // Throws std::invalid_argument for an invalid address flag.
  HttpServer(boost::asio::any_io_executor executor, std::string_view bindAddress,
             HttpServerOptions options = {});
  // stop(); a request still being read afterwards gets a 503 and never
  // reaches a handler, so what the handlers capture may die with the server.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Routes `path` (exact match) to `handler`; replaces an earlier one.
  void handle(std::string path, HttpHandler handler, HttpMethods methods = HttpMethods::GetHead);

  // Binds, listens and starts accepting. Does nothing when disabled. Throws
  // std::runtime_error when the address cannot be bound (e.g. in use).
  void start();
  // Graceful stop; see above. Idempotent.
  void stop();

  bool enabled() const;
  // The bound port (the real one for port 0) once started, else 0.
  std::uint16_t port() const;
  // Open connections.
  std::size_t connections() const;

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace csiop::http
