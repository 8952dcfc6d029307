// A temporary certificate directory (tls.crt, tls.key) signed by a test CA.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../kube/test_pki.hpp"

namespace csiop::webhook::testing {

class CertDir {
public:
  CertDir() {
    char pattern[] = "/tmp/csiop-webhook-certs-XXXXXX";
    path_ = ::mkdtemp(pattern);
    write(pki.server("IP:127.0.0.1,DNS:localhost"));
  }
  ~CertDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  CertDir(const CertDir&) = delete;
  CertDir& operator=(const CertDir&) = delete;

  void write(const kube::testing::KeyPair& pair) {
    writeFile("tls.crt", pair.certPem);
    writeFile("tls.key", pair.keyPem);
  }
  void writeFile(const std::string& name, const std::string& content) {
    std::ofstream(path_ / name, std::ios::binary | std::ios::trunc) << content;
  }
  const std::filesystem::path& path() const { return path_; }

  kube::testing::TestPki pki;

private:
  std::filesystem::path path_;
};

} // namespace csiop::webhook::testing
