// Runs coroutines at the same time on the calling coroutine's executor and waits for every one
// (Asio's parallel group, waiting for all): the results in order, or the first exception (in
// the order given) once all have finished. For the single-threaded io_context the operator
// runs on.
#pragma once

#include <exception>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace csiop::controller {

template <class T>
boost::asio::awaitable<std::vector<T>> allOf(std::vector<boost::asio::awaitable<T>> tasks) {
  namespace asio = boost::asio;
  if (tasks.empty()) {
    co_return std::vector<T>{};
  }
  const auto executor = co_await asio::this_coro::executor;
  using Op = decltype(asio::co_spawn(executor, std::move(tasks.front()), asio::deferred));
  std::vector<Op> ops;
  ops.reserve(tasks.size());
  for (auto& task : tasks) {
    ops.push_back(asio::co_spawn(executor, std::move(task), asio::deferred));
  }
  auto [order, errors, results] =
      co_await asio::experimental::make_parallel_group(std::move(ops))
          .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
  for (const std::exception_ptr& error : errors) {
    if (error) {
      std::rethrow_exception(error);
    }
  }
  co_return std::move(results);
}

} // namespace csiop::controller
