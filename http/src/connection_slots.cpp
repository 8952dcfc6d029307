#include <csiop/http/connection_slots.hpp>

namespace csiop::http {

ConnectionSlots::ConnectionSlots(std::size_t total, std::size_t perPeer)
    : total_(total), perPeer_(perPeer) {}

ConnectionSlots::Admission ConnectionSlots::admit(const boost::asio::ip::address& peer) {
  const std::size_t peerHolds = held(peer);
  Admission admission;
  if (peerHolds >= perPeer_) {
    admission.evicted = longestIdle(&peer);
  } else if (entries_.size() >= total_) {
    admission.evicted = longestIdle(nullptr);
    if (!admission.evicted) {
      admission.evicted = openingOfBiggestPeer(peerHolds);
    }
  }
  const bool full = peerHolds >= perPeer_ || entries_.size() >= total_;
  if (full && !admission.evicted) {
    return admission;
  }
  if (admission.evicted) {
    remove(*admission.evicted);
  }
  const Id id = next_++;
  opening_.push_back(id);
  entries_.emplace(id, Entry{peer, State::Opening, std::prev(opening_.end())});
  ++perPeerHeld_[peer];
  admission.id = id;
  return admission;
}

void ConnectionSlots::set(Id id, State state) {
  const auto found = entries_.find(id);
  if (found == entries_.end() || found->second.state == state) {
    return;
  }
  Entry& entry = found->second;
  unqueue(entry);
  entry.state = state;
  if (state == State::Opening) {
    opening_.push_back(id);
    entry.queued = std::prev(opening_.end());
  } else if (state == State::Idle) {
    idle_.push_back(id);
    entry.queued = std::prev(idle_.end());
  }
}

void ConnectionSlots::remove(Id id) {
  const auto found = entries_.find(id);
  if (found == entries_.end()) {
    return;
  }
  unqueue(found->second);
  const auto peer = perPeerHeld_.find(found->second.peer);
  if (--peer->second == 0) {
    perPeerHeld_.erase(peer);
  }
  entries_.erase(found);
}

std::size_t ConnectionSlots::held(const boost::asio::ip::address& peer) const {
  const auto found = perPeerHeld_.find(peer);
  return found == perPeerHeld_.end() ? 0 : found->second;
}

std::optional<ConnectionSlots::Id>
ConnectionSlots::longestIdle(const boost::asio::ip::address* peer) const {
  for (const Id id : idle_) {
    if (peer == nullptr || entries_.at(id).peer == *peer) {
      return id;
    }
  }
  return std::nullopt;
}

std::optional<ConnectionSlots::Id>
ConnectionSlots::openingOfBiggestPeer(std::size_t newcomerHolds) const {
  std::optional<Id> victim;
  std::size_t victimPeerHolds = newcomerHolds + 1; // must hold more than this
  for (const Id id : opening_) {
    const std::size_t holds = held(entries_.at(id).peer);
    if (holds > victimPeerHolds) {
      victim = id;
      victimPeerHolds = holds;
    }
  }
  return victim;
}

void ConnectionSlots::unqueue(Entry& entry) {
  if (entry.state == State::Opening) {
    opening_.erase(entry.queued);
  } else if (entry.state == State::Idle) {
    idle_.erase(entry.queued);
  }
}

} // namespace csiop::http
