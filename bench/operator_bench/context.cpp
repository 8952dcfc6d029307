#include "context.hpp"

#include <cstdio>
#include <iostream>
#include <stdexcept>

namespace csiop::bench {

namespace asio = boost::asio;

namespace {
const Clock::time_point programStart = Clock::now();
} // namespace

void progress(const std::string& message) {
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "[%7.1fs] ",
                std::chrono::duration<double>(Clock::now() - programStart).count());
  std::cerr << stamp << message << std::endl;
}

asio::awaitable<bool> waitUntil(Context& ctx, std::function<bool()> done,
                                std::chrono::milliseconds timeout,
                                std::chrono::milliseconds interval) {
  return waitUntil(ctx.operatorProcess, ctx.operatorLog, std::move(done), timeout, interval);
}

asio::awaitable<bool> waitUntil(testsupport::ChildProcess& process, const std::string& log,
                                std::function<bool()> done, std::chrono::milliseconds timeout,
                                std::chrono::milliseconds interval) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (done()) {
      co_return true;
    }
    if (!process.running()) {
      throw std::runtime_error("the operator exited (code " +
                               std::to_string(process.exitCode().value_or(-1)) + "); see " + log);
    }
    if (Clock::now() >= deadline) {
      co_return false;
    }
    co_await pause(interval);
  }
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

kube::Config localHttp(int port) {
  kube::Config c;
  c.server = "http://127.0.0.1:" + std::to_string(port);
  return c;
}

double millisSince(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

} // namespace csiop::bench
