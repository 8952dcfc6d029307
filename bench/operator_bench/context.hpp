// What the scenarios share: options, the API client, the tracker, the operator process and its
// metrics endpoint; and the waiting helpers they use.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <csiop/kube/client.hpp>
#include <csiop/kube/http.hpp>
#include <csiop/testsupport/process.hpp>

#include "async.hpp"
#include "options.hpp"
#include "tracker.hpp"

namespace csiop::bench {

struct Context {
  const Options& options;
  kube::Client& client;
  Tracker& tracker;
  testsupport::ChildProcess& operatorProcess;
  kube::HttpClient& metrics; // http://127.0.0.1:<metrics port>
  std::string operatorLog;

  std::chrono::milliseconds timeout() const { return std::chrono::seconds(options.timeoutSeconds); }
};

// Progress on stderr, prefixed with the seconds since the program started.
void progress(const std::string& message);

// Polls done() every interval until it returns true (true) or the timeout passes (false).
// Throws if the operator exited meanwhile. Pass a named std::function (GCC 12, see
// client.hpp).
boost::asio::awaitable<bool>
waitUntil(Context& ctx, std::function<bool()> done, std::chrono::milliseconds timeout,
          std::chrono::milliseconds interval = std::chrono::milliseconds(10));
// The same for any operator process (`log` names its log in the message).
boost::asio::awaitable<bool> waitUntil(testsupport::ChildProcess& process, const std::string& log,
                                       std::function<bool()> done,
                                       std::chrono::milliseconds timeout,
                                       std::chrono::milliseconds interval);

double millisSince(Clock::time_point from, Clock::time_point to);

// The words joined by single spaces (a command line, for the report).
std::string joined(const std::vector<std::string>& words);

// A client configuration for http://127.0.0.1:<port> (an operator's metrics or health port).
kube::Config localHttp(int port);

} // namespace csiop::bench
