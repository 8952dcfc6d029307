// A scriptable HTTP/1.1 server on 127.0.0.1 (plain or TLS) for the client's unit tests, and a
// helper that runs a coroutine on an io_context until it finishes.
#pragma once

namespace boost::asio::ssl {
class context;
}

#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "../common/run_io.hpp"

namespace csiop::kube::testing {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct Request {
  std::string method = {};
  std::string target = {};
  std::map<std::string, std::string> headers = {}; // lower-case names
  std::string body = {};
  int connection = 0;   // which connection (1-based, in accept order)
  int onConnection = 0; // which request on that connection (1-based)
};

// The rest of a chunked body, written as the test produces it (a watch that pushes its events):
// the reply's chunks first, then each push(), until close().
class ChunkFeed {
public:
  void push(std::string chunk) {
    pending_.push_back(std::move(chunk));
    wake();
  }
  void close() {
    closed_ = true;
    wake();
  }
  // Closed, or its connection is gone: what is pushed now is never written.
  bool ended() const { return closed_ || gone_; }

private:
  friend class TestServer;
  void wake() {
    if (auto timer = wake_.lock())
      timer->cancel();
  }

  std::deque<std::string> pending_;
  bool closed_ = false;
  bool gone_ = false;
  std::weak_ptr<asio::steady_timer> wake_; // the session's, while it writes the feed
};

struct Reply {
  int status = 200;
  std::string body = {};
  std::string contentType = "application/json";
  std::vector<std::pair<std::string, std::string>> headers = {};
  std::chrono::milliseconds delay{0}; // before answering
  bool drop = false;                  // close the connection without answering
  bool closeAfter = false;            // close after answering (the reply still says keep-alive)
  bool connectionClose = false;       // "Connection: close"
  // Chunked body: these chunks, with chunkDelay between them. holdOpen: never finish it.
  std::vector<std::string> chunks = {};
  std::chrono::milliseconds chunkDelay{0};
  bool holdOpen = false;
  bool cutMidStream = false; // close the connection after the chunks, without the last chunk
  std::shared_ptr<ChunkFeed> feed = {}; // after the chunks: what is pushed to it, until closed
};

class TestServer {
public:
  using Handler = std::function<Reply(const Request&)>;

  // tls: serve HTTPS with this context (certificate already loaded).
  explicit TestServer(asio::io_context& io, Handler handler,
                      std::shared_ptr<asio::ssl::context> tls = nullptr);
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  unsigned short port() const;
  std::string url() const;
  int connections() const;
  const std::vector<Request>& requests() const;
  // Requests read and not answered yet (a fed reply counts as answered once its chunks are
  // written: from then on it is a stream the test feeds).
  int unanswered() const;
  void setHandler(Handler handler);
  // Closes every connection (idle or not) now.
  void closeConnections();
  void stop();

private:
  // The sessions and their state live in test_server.cpp: compiled once, not in every test.
  struct State;
  struct Sessions;
  std::shared_ptr<State> state_;
};

// Runs `task` on io until it completes (other work, like a TestServer, keeps running around
// it); rethrows its exception. Fails after `limit`.
template <class T>
T runTask(asio::io_context& io, asio::awaitable<T> task, std::chrono::seconds limit = 20s) {
  return csiop::test::runCoroutine(io, std::move(task), limit);
}

} // namespace csiop::kube::testing
