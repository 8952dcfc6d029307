// The admission webhook's HTTPS server: POST /validate-driverdeployment
// (AdmissionReview v1), GET /healthz and /readyz, on the runtime HTTP server
// with TLS from a certificate directory that is reloaded when it changes.
// Limits (csiop/http/server.hpp tells how each works): a body over
// kMaxReviewBytes gets 413; a request must arrive within 10 s of the
// connection (or of its first byte on a keep-alive one), so a client trickling
// bytes is dropped; a keep-alive connection idle for 30 s is closed; at most
// 512 connections, 64 per client address, a new one evicting the longest-idle
// when the server is full; at most 64 MiB of request bodies held at once,
// 16 MiB per client address (two of the largest reviews), else 503 with
// Retry-After.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include <csiop/http/server.hpp>
#include <csiop/webhook/admission.hpp>
#include <csiop/webhook/admitter.hpp>
#include <csiop/webhook/certificates.hpp>

namespace csiop::webhook {

inline constexpr const char* kValidatePath = "/validate-driverdeployment";

struct WebhookOptions {
  std::string bindAddress = ":9443";
  std::filesystem::path certDir;
  std::chrono::milliseconds certCheckInterval{1000};
  // From the connection (or the previous answer) to the last byte of a request.
  std::chrono::milliseconds readTimeout{10'000};
  std::size_t maxConnections = 512;
  std::function<void(std::string_view)> log{}; // reloads, handshake failures, ...
  // Told about each review: its outcome (ReviewResult::outcome) and how long it took.
  std::function<void(std::string_view outcome, double seconds)> observe{};
};

class WebhookServer {
public:
  // Loads the certificate (throws std::runtime_error naming the problem).
  // `authority`: how the review asks the API server (admitter.hpp).
  // `ready`: whether the cluster view is usable (the caches have synced).
  WebhookServer(boost::asio::any_io_executor executor, WebhookOptions options, ClusterView cluster,
                AuthorityApi authority, std::function<bool()> ready);

  void start(); // throws std::runtime_error if the address cannot be bound
  void stop();
  std::uint16_t port() const { return http_->port(); }
  const CertificateReloader& certificates() const { return certificates_; }

private:
  WebhookOptions options_;
  std::function<bool()> ready_;
  CertificateReloader certificates_;
  Reservations reservations_;
  Admitter admitter_;
  std::unique_ptr<http::HttpServer> http_;
};

} // namespace csiop::webhook
