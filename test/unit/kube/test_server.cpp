// The scriptable HTTP/1.1 server of test_server.hpp: its sessions, compiled once for every test
// that uses it (the Beast sessions, plain and TLS, are most of a test's compile time).
#include "test_server.hpp"

#include <cctype>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace csiop::kube::testing {

namespace beast = boost::beast;
namespace http = beast::http;

struct TestServer::State {
  State(asio::io_context& io, Handler h, std::shared_ptr<asio::ssl::context> t)
      : acceptor(io, {asio::ip::make_address("127.0.0.1"), 0}), handler(std::move(h)),
        tls(std::move(t)) {}
  asio::ip::tcp::acceptor acceptor;
  Handler handler;
  std::shared_ptr<asio::ssl::context> tls;
  int connections = 0;
  int unanswered = 0;
  bool stopped = false;
  std::vector<Request> requests;
  std::vector<std::weak_ptr<asio::ip::tcp::socket>> sockets;
  std::vector<std::weak_ptr<asio::steady_timer>> timers;
};

struct TestServer::Sessions {

  static asio::awaitable<void> sleep(std::shared_ptr<State> state, std::chrono::milliseconds d) {
    auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor, d);
    state->timers.push_back(timer);
    co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
  }

  static asio::awaitable<void> acceptLoop(std::shared_ptr<State> state) {
    for (;;) {
      auto [ec, socket] =
          co_await state->acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec)
        co_return;
      const int id = ++state->connections;
      auto executor = co_await asio::this_coro::executor;
      if (state->tls) {
        auto stream = std::make_shared<beast::ssl_stream<beast::tcp_stream>>(
            beast::tcp_stream(std::move(socket)), *state->tls);
        asio::co_spawn(executor, tlsSession(state, stream, id), asio::detached);
      } else {
        auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
        asio::co_spawn(executor, session(state, stream, id), asio::detached);
      }
    }
  }

  template <class Stream>
  static asio::awaitable<void> tlsSession(std::shared_ptr<State> state,
                                          std::shared_ptr<Stream> stream, int id) {
    auto [ec] = co_await stream->async_handshake(asio::ssl::stream_base::server,
                                                 asio::as_tuple(asio::use_awaitable));
    if (ec)
      co_return;
    co_await session(state, stream, id);
  }

  static asio::ip::tcp::socket& lowestSocket(beast::tcp_stream& s) { return s.socket(); }
  static asio::ip::tcp::socket& lowestSocket(beast::ssl_stream<beast::tcp_stream>& s) {
    return beast::get_lowest_layer(s).socket();
  }

  template <class Stream>
  static asio::awaitable<void> session(std::shared_ptr<State> state, std::shared_ptr<Stream> stream,
                                       int id) {
    // Register the socket (aliasing shared_ptr: the stream owns it) for closeConnections().
    state->sockets.push_back(
        std::shared_ptr<asio::ip::tcp::socket>(stream, &lowestSocket(*stream)));
    beast::flat_buffer buffer;
    for (int n = 1;; ++n) {
      http::request<http::string_body> req;
      auto [rec, bytes] =
          co_await http::async_read(*stream, buffer, req, asio::as_tuple(asio::use_awaitable));
      if (rec || state->stopped)
        co_return;
      Request seen{
          std::string(req.method_string()), std::string(req.target()), {}, req.body(), id, n};
      for (const auto& field : req) {
        std::string name(field.name_string());
        for (auto& c : name)
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        seen.headers[name] = std::string(field.value());
      }
      state->requests.push_back(seen);
      Answering answering(*state);
      const Reply reply = state->handler(seen);
      const FeedEnd feedEnd{reply.feed.get()};
      if (reply.delay.count() > 0)
        co_await sleep(state, reply.delay);
      if (reply.drop || state->stopped) {
        boost::system::error_code ignored;
        lowestSocket(*stream).close(ignored);
        co_return;
      }
      if (!reply.chunks.empty() || reply.holdOpen || reply.feed) {
        http::response<http::empty_body> res{static_cast<http::status>(reply.status), 11};
        res.set(http::field::content_type, reply.contentType);
        for (const auto& [k, v] : reply.headers)
          res.insert(k, v); // a name given twice is sent twice (Warning)
        res.chunked(true);
        http::response_serializer<http::empty_body> sr{res};
        auto [hec, hn] =
            co_await http::async_write_header(*stream, sr, asio::as_tuple(asio::use_awaitable));
        if (hec)
          co_return;
        for (const auto& chunk : reply.chunks) {
          if (reply.chunkDelay.count() > 0)
            co_await sleep(state, reply.chunkDelay);
          auto [cec, cn] = co_await asio::async_write(
              *stream, http::make_chunk(asio::buffer(chunk)), asio::as_tuple(asio::use_awaitable));
          if (cec)
            co_return;
        }
        if (reply.feed) {
          answering.done();
          if (!co_await writeFeed(state, *stream, *reply.feed))
            co_return;
        }
        if (reply.holdOpen) {
          while (!state->stopped && lowestSocket(*stream).is_open())
            co_await sleep(state, 50ms);
          co_return;
        }
        if (reply.cutMidStream) {
          boost::system::error_code ignored;
          lowestSocket(*stream).close(ignored);
          co_return;
        }
        auto [lec, ln] = co_await asio::async_write(*stream, http::make_chunk_last(),
                                                    asio::as_tuple(asio::use_awaitable));
        if (lec)
          co_return;
      } else {
        http::response<http::string_body> res{static_cast<http::status>(reply.status), 11};
        res.set(http::field::content_type, reply.contentType);
        for (const auto& [k, v] : reply.headers)
          res.insert(k, v); // a name given twice is sent twice (Warning)
        res.keep_alive(!reply.connectionClose);
        res.body() = reply.body;
        res.prepare_payload();
        auto [wec, wn] =
            co_await http::async_write(*stream, res, asio::as_tuple(asio::use_awaitable));
        if (wec)
          co_return;
      }
      if (reply.closeAfter || reply.connectionClose) {
        boost::system::error_code ignored;
        lowestSocket(*stream).shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        lowestSocket(*stream).close(ignored);
        co_return;
      }
    }
  }

  // Marks a request answered when its reply is written (or the session gives up on it).
  class Answering {
  public:
    explicit Answering(State& state) : state_(state) { ++state_.unanswered; }
    ~Answering() { done(); }
    Answering(const Answering&) = delete;
    Answering& operator=(const Answering&) = delete;
    void done() {
      if (!done_) {
        done_ = true;
        --state_.unanswered;
      }
    }

  private:
    State& state_;
    bool done_ = false;
  };

  // A feed nobody writes any more (its session ended, however) says so.
  struct FeedEnd {
    ChunkFeed* feed;
    ~FeedEnd() {
      if (feed != nullptr)
        feed->gone_ = true;
    }
  };

  // Writes what is pushed to `feed` as it comes, until it is closed (true: finish the body) or
  // the connection fails or the server stops (false).
  template <class Stream>
  static asio::awaitable<bool> writeFeed(std::shared_ptr<State> state, Stream& stream,
                                         ChunkFeed& feed) {
    auto wake = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor,
                                                     asio::steady_timer::time_point::max());
    state->timers.push_back(wake);
    feed.wake_ = wake;
    for (;;) {
      while (!feed.pending_.empty()) {
        const std::string chunk = std::move(feed.pending_.front());
        feed.pending_.pop_front();
        auto [ec, n] = co_await asio::async_write(stream, http::make_chunk(asio::buffer(chunk)),
                                                  asio::as_tuple(asio::use_awaitable));
        if (ec)
          co_return false;
      }
      if (feed.closed_)
        co_return true;
      if (state->stopped)
        co_return false;
      // Cancelled by push(), close() or stop().
      co_await wake->async_wait(asio::as_tuple(asio::use_awaitable));
      wake->expires_at(asio::steady_timer::time_point::max());
    }
  }
};

TestServer::TestServer(asio::io_context& io, Handler handler,
                       std::shared_ptr<asio::ssl::context> tls)
    : state_(std::make_shared<State>(io, std::move(handler), std::move(tls))) {
  asio::co_spawn(io, Sessions::acceptLoop(state_), asio::detached);
}

TestServer::~TestServer() {
  stop();
}

unsigned short TestServer::port() const {
  return state_->acceptor.local_endpoint().port();
}

std::string TestServer::url() const {
  return std::string(state_->tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port());
}

int TestServer::connections() const {
  return state_->connections;
}

const std::vector<Request>& TestServer::requests() const {
  return state_->requests;
}

int TestServer::unanswered() const {
  return state_->unanswered;
}

void TestServer::setHandler(Handler handler) {
  state_->handler = std::move(handler);
}

void TestServer::closeConnections() {
  for (auto& socket : state_->sockets)
    if (auto s = socket.lock()) {
      boost::system::error_code ignored;
      s->shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
      s->close(ignored);
    }
}

void TestServer::stop() {
  boost::system::error_code ignored;
  state_->acceptor.close(ignored);
  state_->stopped = true;
  closeConnections();
  for (auto& timer : state_->timers)
    if (auto t = timer.lock())
      t->cancel();
}

} // namespace csiop::kube::testing
