#include <csiop/runtime/probes.hpp>

#include <exception>

namespace csiop::runtime {

HealthChecks::HealthChecks(std::string endpoint) : endpoint_(std::move(endpoint)) {}

void HealthChecks::add(std::string name, Check check) {
  checks_.emplace_back(std::move(name), std::move(check));
}

HttpResponse HealthChecks::serve(const HttpRequest& request) const {
  bool allPassed = true;
  std::string report;
  for (const auto& [name, check] : checks_) {
    CheckResult result;
    try {
      result = check();
    } catch (const std::exception& e) {
      result = CheckResult::failed(e.what());
    } catch (...) {
      result = CheckResult::failed("unknown error");
    }
    if (result.ok) {
      report += "[+]" + name + " ok\n";
    } else {
      allPassed = false;
      report += "[-]" + name + " failed: " + result.reason + "\n";
    }
  }
  HttpResponse response;
  if (!allPassed) {
    response.status = 503;
    response.body = report + endpoint_ + " check failed\n";
  } else if (request.query == "verbose" || request.query.starts_with("verbose=") ||
             request.query.starts_with("verbose&")) {
    response.body = report + endpoint_ + " check passed\n";
  } else {
    response.body = "ok";
  }
  return response;
}

HttpHandler HealthChecks::handler() const {
  return [this](const HttpRequest& request) { return serve(request); };
}

HttpHandler metricsHandler(const OperatorMetrics& metrics) {
  return [&metrics](const HttpRequest&) {
    HttpResponse response;
    response.contentType = std::string(kPrometheusTextContentType);
    response.body = metrics.exposition();
    return response;
  };
}

} // namespace csiop::runtime
