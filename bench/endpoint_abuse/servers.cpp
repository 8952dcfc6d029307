#include "servers.hpp"

#include <csignal>
#include <cstdio>
#include <iostream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <csiop/http/server.hpp>
#include <csiop/webhook/server.hpp>

#include "../webhook_bench/server.hpp"

namespace csiop::bench::endpoint {

int serveEndpoints(const std::filesystem::path& certDir) {
  boost::asio::io_context io(1);
  csiop::webhook::WebhookOptions options;
  options.bindAddress = "127.0.0.1:0";
  options.certDir = certDir;
  // A flood makes many lines (failed handshakes): the first and a count.
  std::size_t logged = 0;
  options.log = [&logged](std::string_view line) {
    if (++logged == 1) {
      std::cerr << "webhook server: " << line << "\n";
    }
  };
  // Every author a cluster admin (no API server here): one remembered answer per review.
  csiop::webhook::WebhookServer webhook(io.get_executor(), options,
                                        csiop::bench::webhook::benchCluster(),
                                        csiop::webhook::fixedAuthority(true), [] { return true; });
  // As cli/app's manager makes the health probe server: default options.
  csiop::http::HttpServer health(io.get_executor(), "127.0.0.1:0");
  health.handle("/healthz", [](const csiop::http::HttpRequest&) {
    return csiop::http::HttpResponse{200, "text/plain; charset=utf-8", "ok"};
  });
  webhook.start();
  health.start();
  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) {
      webhook.stop();
      health.stop();
    }
  });
  std::printf("port %u health %u\n", static_cast<unsigned>(webhook.port()),
              static_cast<unsigned>(health.port()));
  std::fflush(stdout);
  io.run();
  if (logged > 1) {
    std::cerr << "webhook server: " << logged - 1 << " more log lines\n";
  }
  return 0;
}

} // namespace csiop::bench::endpoint
