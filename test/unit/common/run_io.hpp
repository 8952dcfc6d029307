// Running coroutines to completion in a test, on an io_context of the test's own: shared by
// the tests of every library (no library of the project needed).
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

namespace csiop::test {

// The outcome of a coroutine started with spawn(): empty until it finishes.
template <class T> struct Outcome {
  std::optional<T> value;
  std::exception_ptr error;
  bool done = false;
};

template <class T>
boost::asio::awaitable<void> capture(boost::asio::awaitable<T> work,
                                     std::shared_ptr<Outcome<T>> outcome) {
  outcome->value.emplace(co_await std::move(work));
}

inline boost::asio::awaitable<void> capture(boost::asio::awaitable<void> work,
                                            std::shared_ptr<Outcome<bool>> outcome) {
  co_await std::move(work);
  outcome->value = true;
}

// Starts `work` on `io`; the outcome fills in when it finishes.
template <class T> auto spawn(boost::asio::io_context& io, boost::asio::awaitable<T> work) {
  using Value = std::conditional_t<std::is_void_v<T>, bool, T>;
  auto outcome = std::make_shared<Outcome<Value>>();
  boost::asio::co_spawn(io, capture(std::move(work), outcome), [outcome](std::exception_ptr error) {
    outcome->error = error;
    outcome->done = true;
  });
  return outcome;
}

// Runs `io` until `done()` is true, or fails the test after `limit` (a guard
// against hangs, far above what any test needs).
template <class Predicate>
bool runUntil(boost::asio::io_context& io, Predicate done,
              std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    io.restart();
    io.run_one_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Runs `work` to completion on `io` and returns its result (rethrowing).
template <class T>
T runCoroutine(boost::asio::io_context& io, boost::asio::awaitable<T> work,
               std::chrono::seconds limit = std::chrono::seconds(30)) {
  auto outcome = spawn(io, std::move(work));
  if (!runUntil(
          io, [&] { return outcome->done; }, limit)) {
    throw std::runtime_error("coroutine did not finish in time");
  }
  if (outcome->error) {
    std::rethrow_exception(outcome->error);
  }
  if constexpr (!std::is_void_v<T>) {
    return std::move(*outcome->value);
  }
}

} // namespace csiop::test
