// A timer wait for coroutines on the benchmark's io_context.
#pragma once

#include <chrono>

#include <boost/asio/awaitable.hpp>

namespace csiop::bench {

boost::asio::awaitable<void> pause(std::chrono::milliseconds d);

} // namespace csiop::bench
