// The bytes of request bodies an HttpServer holds at once: in all, and per
// peer address, so that connections each holding a large body (e.g. trickled
// slowly) cannot take the process's memory, and one client cannot take the
// whole budget. The server reserves a body's size before reading it and
// answers 503 when the reservation is refused.
#pragma once

#include <cstddef>
#include <optional>
#include <unordered_map>

#include <boost/asio/ip/address.hpp>

namespace csiop::http {

class BodyBudget {
public:
  // Gives its bytes back when destroyed; must not outlive its budget.
  class Reservation {
  public:
    Reservation(Reservation&& other) noexcept;
    Reservation& operator=(Reservation&& other) noexcept;
    ~Reservation();
    std::size_t bytes() const { return bytes_; }

  private:
    friend class BodyBudget;
    Reservation(BodyBudget* budget, boost::asio::ip::address peer, std::size_t bytes)
        : budget_(budget), peer_(peer), bytes_(bytes) {}
    void release();

    BodyBudget* budget_;
    boost::asio::ip::address peer_;
    std::size_t bytes_;
  };

  BodyBudget(std::size_t total, std::size_t perPeer);

  // nullopt when the total or the peer's share cannot cover `bytes` more
  // (0 bytes always fits).
  std::optional<Reservation> reserve(const boost::asio::ip::address& peer, std::size_t bytes);

  std::size_t used() const { return used_; }
  std::size_t used(const boost::asio::ip::address& peer) const;

private:
  void release(const boost::asio::ip::address& peer, std::size_t bytes);

  std::size_t total_;
  std::size_t perPeer_;
  std::size_t used_ = 0;
  std::unordered_map<boost::asio::ip::address, std::size_t> perPeerUsed_;
};

} // namespace csiop::http
