// The client side of endpoint_abuse, on one io_context of its own: an
// attacker's connections held open (idle keep-alive, silent, or holding a
// large body) and the normal clients (the API server's reviews, the kubelet's
// probes), each on a new connection and timed.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

namespace csiop::bench::endpoint {

struct Endpoint {
  std::uint16_t port = 0;
  bool tls = false;
};

struct Probe {
  bool answered = false; // in time, with the expected answer
  double ms = 0;         // from connect to the whole answer
  std::string problem;   // when not answered
};

// The attacker's kinds of connection.
enum class Hold {
  KeepAlive, // one GET /healthz answered, then idle
  Silent,    // connected, not a byte sent (not even a TLS ClientHello)
};

class Clients {
public:
  explicit Clients(const std::string& caPem);
  ~Clients();

  // Opens `count` connections to `endpoint` from the loopback addresses
  // `from`, in turn, at most 64 being opened at once, and keeps them.
  // Returns how many were opened (a keep-alive one: its request answered).
  std::size_t flood(const Endpoint& endpoint, Hold hold, std::size_t count,
                    const std::vector<std::string>& from);
  // Opens `count` TLS connections, each sending a POST of the webhook's path
  // announcing a body of `contentLength` bytes and `sent` bytes of it, and
  // keeps them (the rest never comes).
  void holdBodies(const Endpoint& endpoint, std::size_t count, const std::vector<std::string>& from,
                  std::size_t contentLength, std::size_t sent);
  // The attacker's connections to `endpoint` that the server has not closed
  // (nor half-closed).
  std::size_t held(const Endpoint& endpoint) const;
  // Closes them all.
  void release();

  // A review on a new connection from `from`: answered with HTTP 200 and
  // "allowed":true within `timeout`.
  Probe review(const Endpoint& endpoint, const std::string& body, const std::string& from,
               std::chrono::milliseconds timeout);
  // GET /healthz on a new connection from `from`: answered 200 within `timeout`.
  Probe healthz(const Endpoint& endpoint, const std::string& from,
                std::chrono::milliseconds timeout);

private:
  struct Connection;

  boost::asio::io_context io_;
  boost::asio::ssl::context tls_;
  std::vector<std::shared_ptr<Connection>> held_;
};

} // namespace csiop::bench::endpoint
