// The server side of endpoint_abuse: the operator's endpoints as it runs them,
// the admission webhook (webhook::WebhookServer, TLS) and the health probes
// (an http::HttpServer with the operator's options) in one io_context on one
// thread, in a process of its own.
#pragma once

#include <filesystem>

namespace csiop::bench::endpoint {

// The server process's main: both servers on 127.0.0.1 (ephemeral ports),
// the webhook serving the certificate in `certDir`; writes "port W health H"
// to stdout once they listen and serves until SIGTERM or SIGINT. Returns the
// exit code.
int serveEndpoints(const std::filesystem::path& certDir);

} // namespace csiop::bench::endpoint
