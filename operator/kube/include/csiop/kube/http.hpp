// HTTP/1.1 to the API server (Boost.Beast over Asio, OpenSSL): TLS 1.2+ with the server
// verified against the CA and its name (IP SAN or DNS name, SNI for names), client certificate,
// bearer token; or plain HTTP for tests and local proxies.
//
// Every operation is an asio::awaitable on the executor given to the constructor (an
// io_context's executor or a strand). Nothing is locked: use one HttpClient from one thread or
// one strand, as the operator's single-threaded io_context does.
//
// Connections are kept alive and pooled (at most maxIdleConnections idle ones, LIFO). Before
// reuse an idle connection is checked (closed by the server? idle for too long?); if a request
// on a reused connection still fails before any response byte arrives, an idempotent request
// is sent once more on a fresh connection.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <csiop/kube/config.hpp>

namespace csiop::kube {

enum class Method { Get, Post, Put, Patch, Delete };
std::string_view toString(Method method);

struct HttpRequest {
  HttpRequest() = default; // not an aggregate: GCC 12 (see "Options" in client.hpp)
  HttpRequest(Method m, std::string t) : method(m), target(std::move(t)) {}
  Method method = Method::Get;
  std::string target = {}; // path and query (the server URL's path prefix is added)
  std::string body = {};
  std::string contentType = {}; // sent when not empty
  std::string accept = "application/json";
  std::chrono::milliseconds timeout{0}; // whole request; 0: HttpOptions::timeout
  // Safe to send twice? Default: GET, PUT and DELETE are; POST and PATCH are not.
  std::optional<bool> idempotent = {};
};

struct HttpResponse {
  int status = 0;
  std::string body = {};
  std::string contentType = {};
  std::string retryAfter = {};            // raw Retry-After header
  std::vector<std::string> warnings = {}; // each Warning header's text (warning_header.hpp)
};

struct HttpOptions {
  std::chrono::milliseconds timeout = std::chrono::seconds(30); // default per-request deadline
  std::size_t maxIdleConnections = 4;
  std::chrono::milliseconds idleTimeout = std::chrono::seconds(60); // idle longer: not reused
  std::string userAgent = "csi-operator";
  std::size_t maxBodyBytes = std::size_t{512} << 20; // larger responses: TransportError
};

struct HttpStats {
  std::uint64_t requests = 0; // requests written (retries included)
  std::uint64_t connects = 0; // connections opened (TCP connect + TLS handshake)
  std::uint64_t reuses = 0;   // requests sent on a pooled connection
  std::uint64_t retries = 0;  // requests re-sent after a reused connection turned out dead
  std::size_t idle = 0;       // connections in the pool now
};

// A response whose body is read as it arrives (watches). Move-only. Destroying it closes the
// connection; it must not be destroyed while a read() is pending (cancel() first and let the
// read complete).
class HttpStream {
public:
  struct Impl;
  explicit HttpStream(std::unique_ptr<Impl> impl);
  HttpStream(HttpStream&&) noexcept;
  HttpStream& operator=(HttpStream&&) noexcept;
  ~HttpStream();

  int status() const;
  const std::string& contentType() const;
  const std::string& retryAfter() const;

  // The body bytes that arrived since the last call (chunk boundaries are not kept);
  // std::nullopt at the end of the body. No byte for idleTimeout (if > 0):
  // TransportError(Timeout). After cancel(): system_error(operation_aborted).
  boost::asio::awaitable<std::optional<std::string>> read(std::chrono::milliseconds idleTimeout);
  // The rest of the body, at most maxBytes (error responses).
  boost::asio::awaitable<std::string> readAll(std::size_t maxBytes = std::size_t{1} << 20);
  // Aborts a pending read and closes the connection. Idempotent.
  void cancel();

private:
  std::unique_ptr<Impl> impl_;
};

class HttpClient {
public:
  // Throws ConfigError if the server URL, CA, client certificate or key is unusable.
  HttpClient(boost::asio::any_io_executor executor, Config config, HttpOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Any status code is a response; throws TransportError when there is none.
  boost::asio::awaitable<HttpResponse> send(HttpRequest request);
  // Sends the request and returns once the response headers are in. The connection belongs to
  // the stream (never pooled). request.timeout bounds connect + headers only.
  boost::asio::awaitable<HttpStream> openStream(HttpRequest request);

  HttpStats stats() const;
  const Config& config() const;
  const HttpOptions& options() const;
  boost::asio::any_io_executor executor() const;
  void closeIdleConnections();

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace csiop::kube
