// Runs coroutines at the same time on the calling coroutine's executor and
// waits for every one: the results in order, or the first exception once all
// have finished. For the single-threaded io_context the operator runs on.
#pragma once

#include <cstddef>
#include <exception>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace csiop::controller {

template <class T>
boost::asio::awaitable<std::vector<T>> allOf(std::vector<boost::asio::awaitable<T>> tasks) {
  namespace asio = boost::asio;
  const auto executor = co_await asio::this_coro::executor;
  std::vector<T> results(tasks.size());
  std::size_t pending = tasks.size();
  std::exception_ptr error;
  // A latch: cancelled by the last task to finish. Tasks only run while this
  // coroutine is suspended below, so none can finish before the wait begins.
  asio::steady_timer allDone(executor, asio::steady_timer::time_point::max());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    asio::co_spawn(executor, std::move(tasks[i]), [&, i](std::exception_ptr e, T value) {
      if (e) {
        error = error ? error : e;
      } else {
        results[i] = std::move(value);
      }
      if (--pending == 0) {
        allDone.cancel();
      }
    });
  }
  if (pending > 0) {
    boost::system::error_code ignored;
    co_await allDone.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  if (error) {
    std::rethrow_exception(error);
  }
  co_return results;
}

} // namespace csiop::controller
