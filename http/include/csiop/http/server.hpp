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
//   without the body. A handler that throws gives a 500. A handler answers at
//   once, or is a coroutine (handleAsync) that may await, e.g. a call to the
//   API server, while the thread serves the other connections.
// - TLS when options.tls is set: it is asked for the context of every new
//   connection, so a reloaded certificate serves new connections while those
//   already open finish on the one they began with. The handshake counts
//   against the read deadline of the first request.
// - Robust against slow or hostile clients, each server on its own: the probe
//   and metrics servers keep their connection slots and body budget while the
//   webhook's port is flooded (figures: bench/endpoint_abuse).
//   - Header and body size limits (431, 413); 400 for unparsable requests.
//   - A deadline for reading each request, so a client trickling bytes is
//     dropped; an idle timeout between keep-alive requests; a write timeout,
//     which starts once the handler has answered.
//   - Connections capped in all and per peer address. A new connection to a
//     full server evicts the longest-idle keep-alive connection rather than
//     being refused, and no peer can hold every slot (connection_slots.hpp
//     tells who gives way). A connection that has not sent its first request
//     is held, not idle: the read deadline bounds it, so the TLS handshakes a
//     flood costs the thread are bounded by the per-peer cap and that deadline.
//   - A budget for the request bodies held at once, in all and per peer
//     (body_budget.hpp). Once a request's header is read, its body's size
//     (Content-Length, or maxBodyBytes when chunked) is reserved before the
//     body is read, and given back once the handler has answered; when it
//     cannot be, the answer is 503 with "Retry-After: 1" and the connection
//     closes. The per-peer share keeps one client from exhausting the budget,
//     so another's normal request is served while it holds its bodies.
// - stop() is graceful: the listening socket closes at once, idle keep-alive
//   connections close, and a request being read, handled (an asynchronous
//   handler too) or answered completes (with "Connection: close"). The
//   io_context's run() returns once they are gone.
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
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>

namespace csiop::http {

struct HttpRequest {
  std::string method{}; // "GET", "HEAD" or "POST" (others never reach a handler)
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
// The request is passed by value: the coroutine outlives the caller's frame.
using AsyncHttpHandler = std::function<boost::asio::awaitable<HttpResponse>(HttpRequest)>;

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
  // Waiting for the next request on a keep-alive connection. Short, so that
  // idle clients give their slots back soon, and below the idle timeout of
  // the API server's webhook client (90 s), so the server is the one that
  // closes: the race of a request sent on a connection as it closes is then
  // Go's transport's to handle, and it does. It watches its idle connections
  // and drops one as soon as the server's FIN arrives, and retries a request
  // that failed on a reused connection before anything was written; what is
  // left is a request written within a round trip of the close, which fails
  // as any network error would (the webhook's failurePolicy decides).
  std::chrono::milliseconds idleTimeout{30'000};
  std::chrono::milliseconds writeTimeout{10'000};
  // Connections held at once, in all and per peer address (connection_slots.hpp).
  // The API server opens a few dozen at most.
  std::size_t maxConnections = 512;
  std::size_t maxConnectionsPerPeer = 64;
  // Bytes of request bodies held at once, in all and per peer address
  // (body_budget.hpp). Keep them above maxBodyBytes, the total well above the
  // per-peer share.
  std::size_t bodyBudgetBytes = 64 * 1024 * 1024;
  std::size_t bodyBudgetPerPeerBytes = 16 * 1024 * 1024;
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
  // An asynchronous handler already running goes on to its end (the server's
  // state it needs stays alive) and its answer is dropped; it must not touch,
  // after its next suspension, what died with the server.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Routes `path` (exact match) to `handler`; replaces an earlier one.
  void handle(std::string path, HttpHandler handler, HttpMethods methods = HttpMethods::GetHead);
  // The same for a coroutine, run on the server's executor: 404, 405, HEAD
  // and 500 (when it throws) as for handle(). While it runs, its connection
  // is busy (never evicted) and holds the body's reservation; the write
  // deadline starts when it returns.
  void handleAsync(std::string path, AsyncHttpHandler handler,
                   HttpMethods methods = HttpMethods::GetHead);

  // Binds, listens and starts accepting. Does nothing when disabled. Throws
  // std::runtime_error when the address cannot be bound (e.g. in use).
  void start();
  // Graceful stop; see above. Idempotent.
  void stop();

  bool enabled() const;
  // The bound port (the real one for port 0) once started, else 0.
  std::uint16_t port() const;
  // Open connections (an evicted one until its coroutine has ended).
  std::size_t connections() const;
  // Bytes of request bodies reserved now.
  std::size_t bodyBytesReserved() const;

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace csiop::http
