// The webhook's serving certificate: tls.crt and tls.key read from a directory
// (the usual operator convention: a mounted Secret, cert-manager's or the
// chart's), checked every `interval` and swapped in when their content changes.
// A new pair applies to new connections; open ones finish on theirs. A pair
// that does not load (e.g. caught between the writes of the two files) is
// reported and the previous one stays until a later check loads.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

namespace csiop::webhook {

// A TLS server context for this certificate chain and key: TLS 1.2 and 1.3
// only, forward-secret AEAD cipher suites for 1.2. Throws std::runtime_error
// naming the problem (unreadable PEM, key not matching the certificate).
std::shared_ptr<boost::asio::ssl::context> serverContext(std::string_view certPem,
                                                         std::string_view keyPem);

class CertificateReloader {
public:
  // Loads the pair now; throws std::runtime_error if it cannot.
  CertificateReloader(boost::asio::any_io_executor executor, std::filesystem::path directory,
                      std::chrono::milliseconds interval = std::chrono::seconds(1),
                      std::function<void(std::string_view)> log = {});
  ~CertificateReloader();
  CertificateReloader(const CertificateReloader&) = delete;
  CertificateReloader& operator=(const CertificateReloader&) = delete;

  // Starts the periodic checks (on the executor).
  void start();
  void stop();
  // Checks once; true if a new pair was loaded.
  bool check();

  std::shared_ptr<boost::asio::ssl::context> current() const { return context_; }
  std::size_t reloads() const { return reloads_; }

private:
  void schedule();

  std::filesystem::path directory_;
  std::chrono::milliseconds interval_;
  std::function<void(std::string_view)> log_;
  boost::asio::steady_timer timer_;
  std::shared_ptr<boost::asio::ssl::context> context_;
  std::string loadedCert_;
  std::string loadedKey_;
  std::size_t reloads_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

} // namespace csiop::webhook
