// Handlers for the HttpServer: /healthz and /readyz from named checks, and
// /metrics from the OperatorMetrics.
//
// Thread-safety: none; the handlers run on the server's io_context thread and
// call the checks there, so checks must be quick and must not block.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <csiop/http/server.hpp>
#include <csiop/runtime/operator_metrics.hpp>

namespace csiop::runtime {

using http::HttpHandler;
using http::HttpRequest;
using http::HttpResponse;

struct CheckResult {
  bool ok = true;
  std::string reason{}; // why not, when !ok

  static CheckResult passed() { return {}; }
  static CheckResult failed(std::string why) { return {false, std::move(why)}; }
};

using Check = std::function<CheckResult()>;

// A set of named checks served as one endpoint, in the style of the
// Kubernetes components: 200 "ok" when every check passes (also when there
// are none: liveness is then "the event loop answers"), else 503 with one
// line per check ("[+]name ok" / "[-]name failed: reason") and a last line
// "<endpoint> check failed". "?verbose" lists the checks on success too. A
// check that throws fails with the exception's message.
class HealthChecks {
public:
  // `endpoint`: "healthz" or "readyz", used in the text.
  explicit HealthChecks(std::string endpoint);

  void add(std::string name, Check check);
  HttpResponse serve(const HttpRequest& request) const;
  // A handler bound to this object, which must outlive the server.
  HttpHandler handler() const;

private:
  std::string endpoint_;
  std::vector<std::pair<std::string, Check>> checks_;
};

// Serves metrics.exposition() with the 0.0.4 text Content-Type. The metrics
// must outlive the server.
HttpHandler metricsHandler(const OperatorMetrics& metrics);

} // namespace csiop::runtime
