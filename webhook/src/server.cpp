#include <csiop/webhook/server.hpp>

namespace csiop::webhook {

WebhookServer::WebhookServer(boost::asio::any_io_executor executor, WebhookOptions options,
                             ClusterView cluster, AuthorityApi authority,
                             std::function<bool()> ready)
    : options_(std::move(options)), ready_(std::move(ready)),
      certificates_(executor, options_.certDir, options_.certCheckInterval, options_.log),
      reservations_([] { return std::chrono::steady_clock::now(); }),
      admitter_(std::move(cluster), std::move(authority), reservations_,
                [] { return std::chrono::steady_clock::now(); }) {
  http::HttpServerOptions http;
  http.maxBodyBytes = kMaxReviewBytes;
  http.maxHeaderBytes = 16 * 1024;
  http.readTimeout = options_.readTimeout;
  http.maxConnections = options_.maxConnections;
  // Below the API server's webhook client's own (90 s), so the server is the
  // one to close an idle connection (see HttpServerOptions::idleTimeout).
  http.idleTimeout = std::chrono::seconds(30);
  http.onError = options_.log;
  http.tls = [this] { return certificates_.current(); };
  http_ = std::make_unique<http::HttpServer>(std::move(executor), options_.bindAddress,
                                             std::move(http));
  http_->handleAsync(
      kValidatePath,
      [this](http::HttpRequest request) -> boost::asio::awaitable<http::HttpResponse> {
        const auto started = std::chrono::steady_clock::now();
        ReviewResult result = co_await admitter_.review(std::move(request.body));
        if (options_.observe) {
          options_.observe(
              result.outcome,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        }
        co_return http::HttpResponse{static_cast<unsigned>(result.httpStatus),
                                     std::move(result.contentType), std::move(result.body)};
      },
      http::HttpMethods::Post);
  http_->handle("/healthz", [](const http::HttpRequest&) {
    return http::HttpResponse{200, "text/plain; charset=utf-8", "ok"};
  });
  http_->handle("/readyz", [this](const http::HttpRequest&) {
    return ready_() ? http::HttpResponse{200, "text/plain; charset=utf-8", "ok"}
                    : http::HttpResponse{503, "text/plain; charset=utf-8", "caches not synced yet"};
  });
}

void WebhookServer::start() {
  http_->start();
  certificates_.start();
}

void WebhookServer::stop() {
  certificates_.stop();
  http_->stop();
}

} // namespace csiop::webhook
