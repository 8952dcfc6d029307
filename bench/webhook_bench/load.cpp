#include "load.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <csiop/webhook/server.hpp>

namespace csiop::bench::webhook {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

class Load {
public:
  Load(asio::io_context& io, const LoadOptions& options, LoadResult& result)
      : io_(io), options_(options), result_(result), tls_(asio::ssl::context::tls_client),
        watchdog_(io) {
    tls_.set_verify_mode(asio::ssl::verify_peer);
    tls_.add_certificate_authority(asio::buffer(options.caPem));
    loadStart_ = Clock::now();
    measureStart_ = loadStart_ + options.warmup;
    end_ = measureStart_ + options.duration;
    result_.seconds = std::chrono::duration<double>(options.duration).count();
  }

  void start() {
    active_ = options_.connections;
    for (int i = 0; i < options_.connections; ++i) {
      asio::co_spawn(io_, connection(i), [this](std::exception_ptr e) {
        if (--active_ == 0) {
          watchdog_.cancel();
        }
        if (e) {
          ++result_.failedConnections;
          try {
            std::rethrow_exception(e);
          } catch (const std::exception& error) {
            problem(std::string("connection failed: ") + error.what());
          }
        }
      });
    }
    asio::co_spawn(io_, phases(), [](std::exception_ptr e) {
      if (e) {
        std::rethrow_exception(e);
      }
    });
    // A server that stops answering must not hang the benchmark.
    watchdog_.expires_at(end_ + std::chrono::seconds(10));
    watchdog_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) {
        result_.failedConnections += static_cast<std::uint64_t>(active_);
        problem(std::to_string(active_) + " connections still waiting for an answer 10 s after "
                                          "the end");
        io_.stop();
      }
    });
  }

private:
  static std::uint32_t nanos(Clock::duration d) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    return static_cast<std::uint32_t>(
        std::clamp<long long>(ns, 0, std::numeric_limits<std::uint32_t>::max()));
  }

  void problem(const std::string& what) {
    if (result_.firstProblem.empty()) {
      result_.firstProblem = what;
    }
  }

  asio::awaitable<void> sleepUntil(Clock::time_point when) {
    asio::steady_timer timer(co_await asio::this_coro::executor, when);
    co_await timer.async_wait(asio::use_awaitable);
  }

  asio::awaitable<void> phases() {
    co_await sleepUntil(measureStart_);
    options_.onPhase("start");
    const auto middle = measureStart_ + options_.duration / 2;
    bool middleDone = false;
    for (auto tick = measureStart_ + std::chrono::seconds(1); tick < end_;
         tick += std::chrono::seconds(1)) {
      if (!middleDone && middle <= tick) {
        co_await sleepUntil(middle);
        options_.onPhase("middle");
        middleDone = true;
      }
      co_await sleepUntil(tick);
      options_.onPhase("tick");
    }
    if (!middleDone) {
      co_await sleepUntil(middle);
      options_.onPhase("middle");
    }
    // Just before the end, while the load is still on.
    co_await sleepUntil(end_ - std::chrono::milliseconds(20));
    options_.onPhase("end");
  }

  asio::awaitable<void> connection(int index) {
    const auto executor = co_await asio::this_coro::executor;
    asio::ssl::stream<beast::tcp_stream> stream(executor, tls_);
    const tcp::endpoint endpoint(asio::ip::make_address_v4("127.0.0.1"), options_.port);
    co_await beast::get_lowest_layer(stream).async_connect(endpoint, asio::use_awaitable);
    beast::get_lowest_layer(stream).socket().set_option(tcp::no_delay(true));
    stream.set_verify_callback(asio::ssl::host_name_verification("127.0.0.1"));
    co_await stream.async_handshake(asio::ssl::stream_base::client, asio::use_awaitable);
    if (result_.tls.empty()) {
      result_.tls = std::string(SSL_get_version(stream.native_handle())) + " " +
                    SSL_get_cipher_name(stream.native_handle());
    }

    http::request<http::string_body> request{http::verb::post, csiop::webhook::kValidatePath, 11};
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::content_type, "application/json");
    request.set(http::field::accept, "application/json, */*");
    request.keep_alive(true);
    beast::flat_buffer buffer;

    // Open loop: this connection's share of the rate, its first review
    // staggered so that the connections do not send in lockstep.
    const bool paced = options_.rate > 0;
    const auto interval = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(paced ? options_.connections / options_.rate : 0));
    auto due = loadStart_ + interval * index / options_.connections;

    for (std::uint64_t n = 0;; ++n) {
      if (paced) {
        if (due > Clock::now()) {
          co_await sleepUntil(due);
        }
      } else {
        due = Clock::now();
      }
      if (due >= end_) {
        break;
      }
      const ReviewKind& kind = options_.mix[n % options_.mix.size()];
      char uid[40];
      std::snprintf(uid, sizeof uid, "%08x-7ab1-4c4e-9d0c-%012llx", static_cast<unsigned>(index),
                    static_cast<unsigned long long>(n));
      request.body() = kind.prefix;
      request.body() += uid;
      request.body() += kind.suffix;
      request.prepare_payload();

      http::response<http::string_body> response;
      const auto sent = Clock::now();
      co_await http::async_write(stream, request, asio::use_awaitable);
      co_await http::async_read(stream, buffer, response, asio::use_awaitable);
      const auto done = Clock::now();

      const std::string& body = response.body();
      const std::string uidField = std::string("\"uid\":\"") + uid + "\"";
      const bool answered =
          response.result_int() == 200 && body.find(uidField) != std::string::npos &&
          body.find(kind.allowed ? "\"allowed\":true" : "\"allowed\":false") != std::string::npos;
      if (!answered) {
        ++result_.unexpected;
        problem("review \"" + kind.name + "\" got HTTP " + std::to_string(response.result_int()) +
                ": " + body.substr(0, 300));
      }
      if (due >= measureStart_ && done <= end_) {
        ++result_.reviews;
        ++result_.kinds[kind.name];
        result_.latenciesNs.push_back(nanos(done - due));
        if (paced) {
          result_.sendLagNs.push_back(nanos(sent - due));
        }
      }
      due += interval;
      if (!response.keep_alive()) {
        problem("the server closed a keep-alive connection");
        break;
      }
    }
    beast::get_lowest_layer(stream).close();
  }

  asio::io_context& io_;
  const LoadOptions& options_;
  LoadResult& result_;
  asio::ssl::context tls_;
  asio::steady_timer watchdog_;
  int active_ = 0;
  Clock::time_point loadStart_;
  Clock::time_point measureStart_;
  Clock::time_point end_;
};

} // namespace

LoadResult runLoad(const LoadOptions& options) {
  LoadResult result;
  result.latenciesNs.reserve(1 << 20);
  asio::io_context io(1);
  Load load(io, options, result);
  load.start();
  io.run();
  std::sort(result.latenciesNs.begin(), result.latenciesNs.end());
  std::sort(result.sendLagNs.begin(), result.sendLagNs.end());
  return result;
}

} // namespace csiop::bench::webhook
