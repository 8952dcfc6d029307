// `csi-operator probe`, run in-process against a real http::HttpServer (plain and TLS, with
// certificates from a test CA) on 127.0.0.1. The server runs on its own thread: the probe
// blocks on an io_context of its own, as it does in the binary.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <openssl/ssl.h>

#include <csiop/http/server.hpp>

#include "../kube/test_pki.hpp"
#include "cli_run.hpp"

namespace csiop {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using kube::testing::KeyPair;
using kube::testing::TestPki;

constexpr const char* kServiceName = "csi-operator-webhook.csi-operator.svc";

using Result = test::CliResult;

Result run(std::vector<std::string> args) {
  return test::runCli(std::move(args));
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The server name a TLS client sent (SNI); recorded on the server's thread.
struct SniLog {
  std::mutex mutex;
  std::vector<std::string> names;

  static int record(SSL* ssl, int*, void* arg) {
    auto* log = static_cast<SniLog*>(arg);
    const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    const std::lock_guard lock(log->mutex);
    log->names.emplace_back(name ? name : "");
    return SSL_TLSEXT_ERR_OK;
  }
  std::vector<std::string> get() {
    const std::lock_guard lock(mutex);
    return names;
  }
};

class ProbeTest : public ::testing::Test {
protected:
  ProbeTest()
      : dir(std::filesystem::temp_directory_path() /
            ("csiop-probe-test-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir);
  }

  ~ProbeTest() override {
    if (thread.joinable()) {
      io.stop();
      thread.join();
    }
    server.reset(); // not running any more: safe from this thread
    std::filesystem::remove_all(dir);
  }

  // Serves /readyz (200 "ok"), /unready (503), /echo (200, the request target) and /long
  // (200, a long multi-line body); over TLS with `tls` when given.
  void startServer(const std::optional<KeyPair>& tls) {
    http::HttpServerOptions options;
    if (tls) {
      auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
      context->use_certificate_chain(asio::buffer(tls->certPem));
      context->use_private_key(asio::buffer(tls->keyPem), ssl::context::pem);
      SSL_CTX* native = context->native_handle();
      SSL_CTX_callback_ctrl(native, SSL_CTRL_SET_TLSEXT_SERVERNAME_CB,
                            reinterpret_cast<void (*)()>(&SniLog::record));
      SSL_CTX_ctrl(native, SSL_CTRL_SET_TLSEXT_SERVERNAME_ARG, 0, &sni);
      options.tls = [context] { return context; };
    }
    server = std::make_unique<http::HttpServer>(io.get_executor(), "127.0.0.1:0", options);
    server->handle("/readyz", [](const http::HttpRequest&) {
      return http::HttpResponse{200, "text/plain", "ok\n"};
    });
    server->handle("/unready", [](const http::HttpRequest&) {
      return http::HttpResponse{503, "text/plain",
                                "[-]informers failed: caches not synced\nreadyz check failed\n"};
    });
    server->handle("/echo", [](const http::HttpRequest& r) {
      return http::HttpResponse{200, "text/plain", r.method + " " + r.target};
    });
    server->handle("/long", [](const http::HttpRequest&) {
      std::string body;
      for (int i = 0; i < 100; ++i) {
        body += "line " + std::to_string(i) + "\n";
      }
      return http::HttpResponse{200, "text/plain", body};
    });
    server->start();
    ASSERT_NE(server->port(), 0);
    thread = std::thread([this] { io.run(); });
  }

  std::string url(const std::string& scheme, const std::string& path) const {
    return scheme + "://127.0.0.1:" + std::to_string(server->port()) + path;
  }

  std::string writeFile(const std::string& name, const std::string& content) const {
    const auto path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  std::filesystem::path dir;
  TestPki pki;
  SniLog sni;
  asio::io_context io;
  std::unique_ptr<http::HttpServer> server;
  std::thread thread;
};

TEST_F(ProbeTest, HttpsVerifiedWithTheCaFilePrintsTheStatusAndBody) {
  startServer(pki.server("IP:127.0.0.1"));
  const auto target = url("https", "/readyz");
  const auto r = run({"probe", target, "--ca-file", writeFile("ca.crt", pki.caPem())});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, target + ": 200 ok\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(sni.get(), std::vector<std::string>{""}) << "no SNI for an IP address";
}

TEST_F(ProbeTest, ACertificateFromAnotherCaFailsVerification) {
  startServer(pki.server("IP:127.0.0.1"));
  const TestPki other("other-ca");
  const auto r =
      run({"probe", url("https", "/readyz"), "--ca-file", writeFile("other.crt", other.caPem())});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "certificate verify failed: unable to get local issuer certificate"))
      << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST_F(ProbeTest, WithoutCaFileTheSystemTrustStoreDecides) {
  startServer(pki.server("IP:127.0.0.1"));
  const auto r = run({"probe", url("https", "/readyz")});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "certificate verify failed")) << r.err;
}

TEST_F(ProbeTest, TlsServerNameVerifiesAServiceCertificateOnALocalAddress) {
  startServer(pki.server(std::string("DNS:") + kServiceName));
  const auto ca = writeFile("ca.crt", pki.caPem());
  const auto target = url("https", "/readyz");

  const auto byAddress = run({"probe", target, "--ca-file", ca});
  EXPECT_EQ(byAddress.code, 1) << "the certificate has no IP SAN";
  EXPECT_TRUE(contains(byAddress.err, "certificate verify failed: IP address mismatch"))
      << byAddress.err;

  const auto byName = run({"probe", target, "--ca-file", ca, "--tls-server-name", kServiceName});
  EXPECT_EQ(byName.code, 0) << byName.err;
  EXPECT_EQ(byName.out, target + ": 200 ok\n");
  EXPECT_EQ(sni.get().back(), kServiceName) << "the name is sent as SNI";

  const auto wrongName =
      run({"probe", target, "--ca-file", ca, "--tls-server-name", "other.csi-operator.svc"});
  EXPECT_EQ(wrongName.code, 1);
  EXPECT_EQ(wrongName.out, "");
  EXPECT_TRUE(contains(wrongName.err, "certificate verify failed: hostname mismatch (expected "
                                      "name 'other.csi-operator.svc')"))
      << wrongName.err;
}

TEST_F(ProbeTest, ANon2xxStatusFailsNamingTheStatusAndBody) {
  startServer(pki.server("IP:127.0.0.1"));
  const auto target = url("https", "/unready");
  const auto r = run({"probe", target, "--ca-file", writeFile("ca.crt", pki.caPem())});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: GET " + target +
                       ": 503 Service Unavailable: [-]informers failed: caches not synced "
                       "readyz check failed\n");
}

TEST_F(ProbeTest, NotFoundIsAFailureToo) {
  startServer(std::nullopt);
  const auto target = url("http", "/nothing");
  const auto r = run({"probe", target});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(r.err.starts_with("error: GET " + target + ": 404 Not Found")) << r.err;
}

TEST_F(ProbeTest, PlainHttpSendsThePathAndQuery) {
  startServer(std::nullopt);
  const auto readyz = run({"probe", url("http", "/readyz")});
  EXPECT_EQ(readyz.code, 0) << readyz.err;
  EXPECT_EQ(readyz.out, url("http", "/readyz") + ": 200 ok\n");

  const auto echo = run({"probe", url("http", "/echo?verbose=1&x=%20#fragment")});
  EXPECT_EQ(echo.code, 0) << echo.err;
  EXPECT_EQ(echo.out,
            url("http", "/echo?verbose=1&x=%20#fragment") + ": 200 GET /echo?verbose=1&x=%20\n");
}

TEST_F(ProbeTest, ALongBodyIsPrintedOnOneLineAndCut) {
  startServer(std::nullopt);
  const auto r = run({"probe", url("http", "/long")});
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string prefix = url("http", "/long") + ": 200 line 0 line 1 line 2 ";
  EXPECT_TRUE(r.out.starts_with(prefix)) << r.out;
  EXPECT_TRUE(r.out.ends_with("...\n")) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1);
  EXPECT_LE(r.out.size(), url("http", "/long").size() + 2 + 4 + 200 + 4);
}

TEST_F(ProbeTest, AClosedPortIsConnectionRefused) {
  unsigned short port = 0;
  {
    asio::io_context scratch;
    tcp::acceptor acceptor(scratch, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = acceptor.local_endpoint().port();
  }
  const auto target = "https://127.0.0.1:" + std::to_string(port) + "/readyz";
  const auto r = run({"probe", target});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "cannot connect to 127.0.0.1:" + std::to_string(port) +
                                  ": Connection refused"))
      << r.err;
}

TEST_F(ProbeTest, TheTimeoutBoundsTheWholeRequest) {
  // Listening, never accepting: the TCP connection opens (the kernel's backlog) and the request
  // is sent, but nothing ever answers.
  asio::io_context scratch;
  tcp::acceptor acceptor(scratch, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const auto port = std::to_string(acceptor.local_endpoint().port());
  for (const std::string scheme : {"http", "https"}) {
    const auto start = std::chrono::steady_clock::now();
    const auto r =
        run({"probe", scheme + "://127.0.0.1:" + port + "/readyz", "--timeout", "300ms"});
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(r.code, 1) << scheme;
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(contains(r.err, "127.0.0.1:" + port)) << r.err;
    EXPECT_TRUE(r.err.ends_with("(--timeout 300ms)\n")) << r.err;
    EXPECT_GE(took, std::chrono::milliseconds(250)) << scheme;
    EXPECT_LT(took, std::chrono::seconds(3)) << scheme;
  }
}

TEST_F(ProbeTest, CaFileProblemsExitWith1) {
  const auto missing = run({"probe", "https://127.0.0.1:1/readyz", "--ca-file", "/nonexistent/ca"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.err, "error: cannot read /nonexistent/ca: No such file or directory\n");

  const auto empty = writeFile("empty.crt", "");
  const auto noCert = run({"probe", "https://127.0.0.1:1/readyz", "--ca-file", empty});
  EXPECT_EQ(noCert.code, 1);
  EXPECT_EQ(noCert.err, "error: --ca-file " + empty + ": no PEM certificate in it\n")
      << "an empty CA file must not fall back to the system trust store";

  const auto garbage =
      writeFile("bad.crt", "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
  const auto bad = run({"probe", "https://127.0.0.1:1/readyz", "--ca-file", garbage});
  EXPECT_EQ(bad.code, 1);
  EXPECT_TRUE(
      bad.err.starts_with("error: --ca-file " + garbage + ": unusable certificate authority"))
      << bad.err;
}

TEST(Probe, UsageErrorsExitWith2) {
  const auto noUrl = run({"probe"});
  EXPECT_EQ(noUrl.code, 2);
  EXPECT_TRUE(noUrl.err.starts_with("error: URL is required\n")) << noUrl.err;

  const auto scheme = run({"probe", "ftp://example.com/"});
  EXPECT_EQ(scheme.code, 2);
  EXPECT_TRUE(scheme.err.starts_with(
      "error: URL: 'ftp://example.com/': must start with https:// or http://\n"))
      << scheme.err;

  const auto port = run({"probe", "http://127.0.0.1:70000/readyz"});
  EXPECT_EQ(port.code, 2);
  EXPECT_TRUE(contains(port.err, "bad port '70000'")) << port.err;

  const auto space = run({"probe", "http://127.0.0.1/a b"});
  EXPECT_EQ(space.code, 2);
  EXPECT_TRUE(contains(space.err, "spaces and control characters are not allowed")) << space.err;

  for (const std::string bad : {"5", "0", "1ns", "2h", "soon", ""}) {
    const auto timeout = run({"probe", "http://127.0.0.1/readyz", "--timeout", bad});
    EXPECT_EQ(timeout.code, 2) << bad;
    EXPECT_TRUE(timeout.err.starts_with(
        "error: --timeout: must be a Go duration from 1ms to 1h, e.g. 5s or 500ms\n"))
        << bad << ": " << timeout.err;
  }
}

TEST(Probe, HelpListsTheFlags) {
  const auto help = run({"probe", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(contains(help.out, "--ca-file")) << help.out;
  EXPECT_TRUE(contains(help.out, "--tls-server-name")) << help.out;
  EXPECT_TRUE(contains(help.out, "--timeout TEXT=5s")) << help.out;
  EXPECT_TRUE(contains(run({"--help"}).out, "probe")) << "listed among the subcommands";
}

} // namespace
} // namespace csiop
