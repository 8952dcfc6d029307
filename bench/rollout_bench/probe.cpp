#include "probe.hpp"

#include <sstream>
#include <stdexcept>
#include <thread>

#include "driver.hpp"

namespace csiop::bench {

using e2e::Json;
using e2e::kubectl;
using e2e::kubectlJson;

std::string rolloutField(const std::string& field) {
  return kubectl({"get", "dd", kDd, "-o", "jsonpath={.status.rollout.node." + field + "}"}).out;
}

int registeredNodes() {
  const std::string n =
      kubectl({"get", "dd", kDd, "-o", "jsonpath={.status.nodes.registered}"}).out;
  return n.empty() ? 0 : std::stoi(n);
}

std::string realNodePlugin() {
  const Json pods =
      kubectlJson({"get", "pods", "-n", kNamespace, "-l", "app.kubernetes.io/component=node-plugin",
                   "--field-selector", "spec.nodeName=127.0.0.1"});
  for (const Json& pod : pods["items"]) {
    if (pod["metadata"].contains("deletionTimestamp"))
      continue;
    std::string ready = "false";
    for (const Json& c : pod["status"].value("conditions", Json::array())) {
      if (c.value("type", "") == "Ready" && c.value("status", "") == "True")
        ready = "true";
    }
    return pod["metadata"].value("uid", "") + " " +
           pod["metadata"]["labels"].value("controller-revision-hash", "") + " " + ready;
  }
  return "";
}

bool realNodeRegistered() {
  const std::string drivers =
      kubectl({"get", "csinode", "127.0.0.1", "-o", "jsonpath={.spec.drivers[*].name}"}).out;
  std::istringstream in(drivers);
  for (std::string d; in >> d;) {
    if (d == kDriver)
      return true;
  }
  return false;
}

double until(const std::string& what, Clock::time_point start, std::chrono::seconds timeout,
             const std::function<bool()>& done) {
  while (true) {
    if (done())
      return std::chrono::duration<double>(Clock::now() - start).count();
    if (Clock::now() - start > timeout)
      throw std::runtime_error("timed out waiting for " + what);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

Usage usageOf(e2e::OperatorProcess& op) {
  return {op.cpuSeconds(), op.metricSum("csiop_api_requests_total"), op.mutatingRequests()};
}

} // namespace csiop::bench
