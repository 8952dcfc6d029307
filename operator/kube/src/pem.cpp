#include "pem.hpp"

#include <memory>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

namespace csiop::kube::detail {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

Bio bio(std::string_view pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::string lastError() {
  const unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0)
    return "no PEM data found";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

} // namespace

std::string checkCertificates(std::string_view pem) {
  ERR_clear_error();
  auto b = bio(pem);
  int count = 0;
  while (Cert c{PEM_read_bio_X509(b.get(), nullptr, nullptr, nullptr)})
    ++count;
  const unsigned long e = ERR_peek_last_error();
  // The loop ends with "no start line" after the last certificate; anything else is an error.
  if (count > 0 && ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE) {
    ERR_clear_error();
    return {};
  }
  if (count == 0)
    return "not a PEM certificate (" + lastError() + ")";
  return "certificate " + std::to_string(count + 1) + " is not valid PEM (" + lastError() + ")";
}

std::string checkPrivateKey(std::string_view pem) {
  ERR_clear_error();
  auto b = bio(pem);
  Key k{PEM_read_bio_PrivateKey(b.get(), nullptr, nullptr, nullptr)};
  if (!k)
    return "not a PEM private key (" + lastError() + ")";
  ERR_clear_error();
  return {};
}

std::string checkKeyMatchesCertificate(std::string_view certPem, std::string_view keyPem) {
  ERR_clear_error();
  auto cb = bio(certPem);
  auto kb = bio(keyPem);
  Cert c{PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr)};
  Key k{PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr)};
  if (!c || !k)
    return "cannot parse the certificate or key (" + lastError() + ")";
  if (X509_check_private_key(c.get(), k.get()) != 1) {
    ERR_clear_error();
    return "the private key does not belong to the client certificate";
  }
  return {};
}

} // namespace csiop::kube::detail
