// Kubernetes Events about a DriverDeployment (kubectl describe shows them).
// The DriverDeployment is cluster-scoped, so its events live in "default", as
// Kubernetes does for cluster-scoped objects. Failures to record are logged,
// never fatal.
#pragma once

#include <functional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include <csiop/api/types.hpp>
#include <csiop/kube/client.hpp>

namespace csiop::controller {

class EventRecorder {
public:
  // `now` returns an RFC 3339 time (injected for tests).
  EventRecorder(kube::Client& client, std::function<std::string()> now);

  boost::asio::awaitable<void> record(const api::Json& object, bool warning, std::string reason,
                                      std::string message);

private:
  kube::Client& client_;
  std::function<std::string()> now_;
};

// The current time in RFC 3339 (seconds precision, UTC).
std::string nowRfc3339();

} // namespace csiop::controller
