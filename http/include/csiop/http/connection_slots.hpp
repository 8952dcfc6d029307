// The connections an HttpServer holds, and which one makes room when a new
// connection comes to a full server. Bookkeeping only (no sockets): the server
// closes what admit() names.
//
// A connection is Opening from its accept until the first byte of its first
// request arrives (a TLS handshake included; the server's read deadline bounds
// it), Busy while a request is read, handled or answered, and Idle between the
// requests of a keep-alive connection.
//
// A new connection from `peer` (nginx-like, and fair between peers):
// - when the peer already holds `perPeer` connections, it evicts the peer's own
//   longest-idle connection, or is refused if none of them is idle: one client
//   cannot take every slot;
// - when the server holds `total` connections, it evicts the longest-idle
//   connection of any peer; if none is idle, the oldest Opening connection of
//   the peer holding the most, provided that peer holds at least two more than
//   the newcomer's (so a peer with few connections is served while another
//   hoards slots it has not even sent a byte on); else it is refused.
// Busy connections are never evicted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <unordered_map>

#include <boost/asio/ip/address.hpp>

namespace csiop::http {

class ConnectionSlots {
public:
  using Id = std::uint64_t;
  enum class State { Opening, Busy, Idle };

  struct Admission {
    std::optional<Id> id;      // the new connection's, held as Opening; nullopt: refused
    std::optional<Id> evicted; // a connection to close at once; no longer held
  };

  ConnectionSlots(std::size_t total, std::size_t perPeer);

  Admission admit(const boost::asio::ip::address& peer);
  // Both ignore an id not held (e.g. evicted).
  void set(Id id, State state);
  void remove(Id id);

  bool holds(Id id) const { return entries_.contains(id); }
  std::size_t size() const { return entries_.size(); }
  std::size_t held(const boost::asio::ip::address& peer) const;

private:
  struct Entry {
    boost::asio::ip::address peer;
    State state = State::Opening;
    std::list<Id>::iterator queued; // in opening_ or idle_, by state; unused when Busy
  };

  std::optional<Id> longestIdle(const boost::asio::ip::address* peer) const;
  std::optional<Id> openingOfBiggestPeer(std::size_t newcomerHolds) const;
  void unqueue(Entry& entry);

  std::size_t total_;
  std::size_t perPeer_;
  Id next_ = 1;
  std::unordered_map<Id, Entry> entries_;
  std::list<Id> opening_; // oldest first
  std::list<Id> idle_;    // longest idle first
  std::unordered_map<boost::asio::ip::address, std::size_t> perPeerHeld_;
};

} // namespace csiop::http
