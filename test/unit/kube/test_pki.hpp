// Test certificates generated at run time (OpenSSL 3): a CA and leaf certificates it signs.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace csiop::kube::testing {

struct KeyPair {
  std::string certPem;
  std::string keyPem;
};

class TestPki {
public:
  explicit TestPki(const std::string& caName = "csiop-test-ca") {
    caKey_ = newKey();
    ca_ = newCert(caName, caKey_.get(), nullptr, caKey_.get(),
                  {{NID_basic_constraints, "critical,CA:TRUE"},
                   {NID_key_usage, "critical,keyCertSign,cRLSign"}});
  }

  std::string caPem() const { return certPem(ca_.get()); }

  // A server certificate for these subjectAltNames ("IP:127.0.0.1,DNS:localhost").
  KeyPair server(const std::string& sans) const {
    return leaf("server", {{NID_subject_alt_name, sans},
                           {NID_ext_key_usage, "serverAuth"},
                           {NID_basic_constraints, "critical,CA:FALSE"}});
  }
  KeyPair client(const std::string& cn) const {
    return leaf(cn,
                {{NID_ext_key_usage, "clientAuth"}, {NID_basic_constraints, "critical,CA:FALSE"}});
  }

private:
  struct KeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
  };
  struct CertFree {
    void operator()(X509* x) const { X509_free(x); }
  };
  using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
  using Cert = std::unique_ptr<X509, CertFree>;

  static Key newKey() {
    Key key{EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")};
    if (!key)
      throw std::runtime_error("EC key generation failed");
    return key;
  }

  Cert newCert(const std::string& cn, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuerKey,
               const std::vector<std::pair<int, std::string>>& extensions) const {
    Cert cert{X509_new()};
    X509_set_version(cert.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), ++serial_);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
    X509_set_pubkey(cert.get(), key);
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, issuer ? issuer : cert.get(), cert.get(), nullptr, nullptr, 0);
    for (const auto& [nid, value] : extensions) {
      X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
      if (!ext)
        throw std::runtime_error("bad extension " + value);
      X509_add_ext(cert.get(), ext, -1);
      X509_EXTENSION_free(ext);
    }
    if (X509_sign(cert.get(), issuerKey, EVP_sha256()) == 0)
      throw std::runtime_error("signing failed");
    return cert;
  }

  KeyPair leaf(const std::string& cn,
               const std::vector<std::pair<int, std::string>>& extensions) const {
    Key key = newKey();
    Cert cert = newCert(cn, key.get(), ca_.get(), caKey_.get(), extensions);
    return {certPem(cert.get()), keyPem(key.get())};
  }

  static std::string drain(BIO* bio) {
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    std::string out(data, static_cast<std::size_t>(size));
    BIO_free(bio);
    return out;
  }
  static std::string certPem(X509* cert) {
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, cert);
    return drain(bio);
  }
  static std::string keyPem(EVP_PKEY* key) {
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
    return drain(bio);
  }

  Key caKey_;
  Cert ca_;
  mutable long serial_ = 0;
};

} // namespace csiop::kube::testing
