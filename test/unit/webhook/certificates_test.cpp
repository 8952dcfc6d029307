// The serving certificate: loaded, checked, and reloaded when the files change.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <csiop/webhook/certificates.hpp>

#include "cert_dir.hpp"

namespace csiop::webhook {
namespace {

using testing::CertDir;

TEST(Certificates, AMismatchedOrMalformedPairIsRefusedWithTheReason) {
  CertDir dir;
  const auto a = dir.pki.server("IP:127.0.0.1");
  const auto b = dir.pki.server("IP:127.0.0.1");
  EXPECT_NO_THROW(serverContext(a.certPem, a.keyPem));
  try {
    serverContext(a.certPem, b.keyPem);
    ADD_FAILURE() << "a key of another certificate was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tls.key"), std::string::npos) << e.what();
  }
  try {
    serverContext("not a certificate", a.keyPem);
    ADD_FAILURE() << "garbage was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tls.crt: not a PEM certificate chain"), std::string::npos)
        << e.what();
  }
}

TEST(Certificates, AMissingDirectoryFailsAtStartNamingTheFile) {
  boost::asio::io_context io;
  try {
    CertificateReloader reloader(io.get_executor(), "/nonexistent/certs");
    ADD_FAILURE() << "started without a certificate";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/certs/tls.crt"), std::string::npos)
        << e.what();
  }
}

TEST(Certificates, ChangedFilesAreReloadedAndUnchangedOnesAreNot) {
  boost::asio::io_context io;
  CertDir dir;
  std::vector<std::string> log;
  CertificateReloader reloader(io.get_executor(), dir.path(), std::chrono::seconds(1),
                               [&](std::string_view m) { log.emplace_back(m); });
  const auto first = reloader.current();
  EXPECT_FALSE(reloader.check());
  EXPECT_EQ(reloader.current(), first);
  dir.write(dir.pki.server("IP:127.0.0.1"));
  EXPECT_TRUE(reloader.check());
  EXPECT_NE(reloader.current(), first);
  EXPECT_EQ(reloader.reloads(), 1u);
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.back().find("reloaded"), std::string::npos);
}

TEST(Certificates, AHalfWrittenPairKeepsThePreviousOneUntilItIsWhole) {
  boost::asio::io_context io;
  CertDir dir;
  CertificateReloader reloader(io.get_executor(), dir.path());
  const auto before = reloader.current();
  const auto next = dir.pki.server("IP:127.0.0.1");
  dir.writeFile("tls.crt", next.certPem); // the key is still the old one
  EXPECT_FALSE(reloader.check());
  EXPECT_EQ(reloader.current(), before);
  dir.writeFile("tls.key", next.keyPem);
  EXPECT_TRUE(reloader.check());
  EXPECT_NE(reloader.current(), before);
}

TEST(Certificates, TheTimerChecksPeriodically) {
  boost::asio::io_context io;
  CertDir dir;
  CertificateReloader reloader(io.get_executor(), dir.path(), std::chrono::milliseconds(10));
  reloader.start();
  dir.write(dir.pki.server("IP:127.0.0.1"));
  for (int i = 0; i < 500 && reloader.reloads() == 0; ++i) {
    io.run_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(reloader.reloads(), 1u);
  reloader.stop();
}

} // namespace
} // namespace csiop::webhook
