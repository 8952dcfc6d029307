#include <csiop/http/body_budget.hpp>

#include <algorithm>
#include <utility>

namespace csiop::http {

BodyBudget::Reservation::Reservation(Reservation&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), peer_(other.peer_), bytes_(other.bytes_) {}

BodyBudget::Reservation& BodyBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    release();
    budget_ = std::exchange(other.budget_, nullptr);
    peer_ = other.peer_;
    bytes_ = other.bytes_;
  }
  return *this;
}

BodyBudget::Reservation::~Reservation() {
  release();
}

void BodyBudget::Reservation::release() {
  if (budget_ != nullptr) {
    std::exchange(budget_, nullptr)->release(peer_, bytes_);
  }
}

BodyBudget::BodyBudget(std::size_t total, std::size_t perPeer) : total_(total), perPeer_(perPeer) {}

std::optional<BodyBudget::Reservation> BodyBudget::reserve(const boost::asio::ip::address& peer,
                                                           std::size_t bytes) {
  if (bytes == 0) {
    return Reservation(nullptr, peer, 0);
  }
  const std::size_t peerUsed = used(peer);
  if (bytes > total_ - used_ || bytes > perPeer_ - std::min(peerUsed, perPeer_)) {
    return std::nullopt;
  }
  used_ += bytes;
  perPeerUsed_[peer] = peerUsed + bytes;
  return Reservation(this, peer, bytes);
}

std::size_t BodyBudget::used(const boost::asio::ip::address& peer) const {
  const auto found = perPeerUsed_.find(peer);
  return found == perPeerUsed_.end() ? 0 : found->second;
}

void BodyBudget::release(const boost::asio::ip::address& peer, std::size_t bytes) {
  used_ -= bytes;
  const auto found = perPeerUsed_.find(peer);
  if ((found->second -= bytes) == 0) {
    perPeerUsed_.erase(found);
  }
}

} // namespace csiop::http
