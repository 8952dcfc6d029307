#include <csiop/webhook/certificates.hpp>

#include <fstream>
#include <iterator>
#include <stdexcept>

#include <openssl/ssl.h>

namespace csiop::webhook {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;

// Mozilla's "intermediate" TLS 1.2 suites: ECDHE key exchange, AEAD ciphers.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path.string());
  }
  return {std::istreambuf_iterator<char>(in), {}};
}

} // namespace

std::shared_ptr<ssl::context> serverContext(std::string_view certPem, std::string_view keyPem) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use);
  SSL_CTX* native = context->native_handle();
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1) {
    throw std::runtime_error("cannot configure TLS");
  }
  SSL_CTX_set_options(native, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_RENEGOTIATION);
  boost::system::error_code ec;
  context->use_certificate_chain(asio::buffer(certPem.data(), certPem.size()), ec);
  if (ec) {
    throw std::runtime_error("tls.crt: not a PEM certificate chain (" + ec.message() + ")");
  }
  context->use_private_key(asio::buffer(keyPem.data(), keyPem.size()), ssl::context::pem, ec);
  if (ec) {
    throw std::runtime_error("tls.key: not a PEM private key matching tls.crt (" + ec.message() +
                             ")");
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    throw std::runtime_error("tls.key does not match the certificate in tls.crt");
  }
  return context;
}

CertificateReloader::CertificateReloader(asio::any_io_executor executor,
                                         std::filesystem::path directory,
                                         std::chrono::milliseconds interval,
                                         std::function<void(std::string_view)> log)
    : directory_(std::move(directory)), interval_(interval), log_(std::move(log)),
      timer_(std::move(executor)) {
  loadedCert_ = readFile(directory_ / "tls.crt");
  loadedKey_ = readFile(directory_ / "tls.key");
  try {
    context_ = serverContext(loadedCert_, loadedKey_);
  } catch (const std::exception& e) {
    throw std::runtime_error(directory_.string() + ": " + e.what());
  }
}

CertificateReloader::~CertificateReloader() {
  *alive_ = false;
}

bool CertificateReloader::check() {
  std::string cert;
  std::string key;
  try {
    cert = readFile(directory_ / "tls.crt");
    key = readFile(directory_ / "tls.key");
  } catch (const std::exception& e) {
    if (log_) {
      log_(std::string("webhook certificate: ") + e.what() + "; keeping the current one");
    }
    return false;
  }
  if (cert == loadedCert_ && key == loadedKey_) {
    return false;
  }
  try {
    context_ = serverContext(cert, key);
  } catch (const std::exception& e) {
    if (log_) {
      log_(std::string("webhook certificate changed but does not load: ") + e.what() +
           "; keeping the current one");
    }
    return false;
  }
  loadedCert_ = std::move(cert);
  loadedKey_ = std::move(key);
  ++reloads_;
  if (log_) {
    log_("webhook certificate reloaded from " + directory_.string());
  }
  return true;
}

void CertificateReloader::start() {
  schedule();
}

void CertificateReloader::stop() {
  timer_.cancel();
}

void CertificateReloader::schedule() {
  timer_.expires_after(interval_);
  timer_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (ec || !*alive) {
      return;
    }
    check();
    schedule();
  });
}

} // namespace csiop::webhook
