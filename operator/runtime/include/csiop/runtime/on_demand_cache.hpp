// A cache that runs only while a decision needs it: the first demand starts it (list, then
// watch), and once nothing has demanded it for `idle` it stops and drops what it holds. What it
// would watch costs nothing in between: the API server sends none of it.
//
// The operator's cache of the pods with volumes is one (caches.hpp): every pod anyone runs would
// otherwise be heard, parsed and dropped, while only a deletion, a node plugin rollout waiting
// for volumes, a failing mount or a webhook's DELETE review reads those pods.
//
// Single-threaded: every member on the cache's executor.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <csiop/runtime/clock.hpp>
#include <csiop/runtime/informer.hpp>

namespace csiop::runtime {

class OnDemandCache {
public:
  // Runs a started cache's run() (the manager supervises it: an unexpected end is fatal).
  using Spawn = std::function<void(boost::asio::awaitable<void>)>;

  // `what` names it in the log ("the pods with volumes").
  OnDemandCache(const boost::asio::any_io_executor& executor, RunnableCache& cache, Clock& clock,
                Clock::Duration idle, std::string what);
  OnDemandCache(const OnDemandCache&) = delete;
  OnDemandCache& operator=(const OnDemandCache&) = delete;

  // How a start runs the cache; by default co_spawn detached (tests).
  void setSpawn(Spawn spawn) { spawn_ = std::move(spawn); }

  // Keeps the cache running for `idle` from now, starting it if it is stopped. Returns at once.
  void want();
  // While held, the cache runs (started at once if stopped) and no idle time stops it; released,
  // it stops `idle` after the last want() or release.
  void hold(bool held);
  bool held() const { return held_; }
  // want(), then waits until the cache has synced, at most `timeout`: whether it has.
  boost::asio::awaitable<bool> demand(Clock::Duration timeout);
  // For good (the process drains): no demand starts it again.
  void stop();

  const std::string& what() const { return what_; }
  bool running() const { return running_; }
  bool synced() const { return running_ && !stopping_ && cache_.synced(); }
  // Times it was started (a metric of how often decisions needed it).
  std::size_t starts() const { return starts_; }

private:
  void start();
  void armIdle();
  boost::asio::awaitable<void> runOnce();

  boost::asio::any_io_executor executor_;
  RunnableCache& cache_;
  Clock& clock_;
  Clock::Duration idle_;
  std::string what_;
  std::unique_ptr<Timer> idleTimer_;
  Spawn spawn_;
  Clock::TimePoint lastWant_{};
  bool running_ = false;  // run() is under way
  bool stopping_ = false; // an idle stop was asked; run() has not returned yet
  bool restart_ = false;  // wanted again while stopping: start once run() returns
  bool closed_ = false;   // stop(): never again
  bool held_ = false;     // hold(true): no idle stop
  std::size_t starts_ = 0;
};

} // namespace csiop::runtime
