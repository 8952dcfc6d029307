// Test certificates generated at run time: the unit tests' CA (test/unit/kube/test_pki.hpp), and
// a serving certificate in a throwaway directory as WebhookServer reads it.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "../../test/unit/kube/test_pki.hpp"

namespace csiop::bench::webhook {

using kube::testing::KeyPair;
using kube::testing::TestPki;

// tls.crt and tls.key of `serving` in a new directory under /tmp, removed with it.
class CertDir {
public:
  explicit CertDir(const KeyPair& serving) {
    char name[] = "/tmp/webhook-bench-XXXXXX";
    if (::mkdtemp(name) == nullptr) {
      throw std::runtime_error("mkdtemp failed");
    }
    path_ = name;
    std::ofstream(path_ / "tls.crt") << serving.certPem;
    std::ofstream(path_ / "tls.key") << serving.keyPem;
  }
  ~CertDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  CertDir(const CertDir&) = delete;
  CertDir& operator=(const CertDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

} // namespace csiop::bench::webhook
