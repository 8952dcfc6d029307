// Who gives way when a server is full (ConnectionSlots): pure bookkeeping.
#include <gtest/gtest.h>

#include <csiop/http/connection_slots.hpp>

namespace csiop::http {
namespace {

using State = ConnectionSlots::State;

const auto kA = boost::asio::ip::make_address("10.0.0.1");
const auto kB = boost::asio::ip::make_address("10.0.0.2");
const auto kC = boost::asio::ip::make_address("10.0.0.3");

ConnectionSlots::Id admitted(ConnectionSlots& slots, const boost::asio::ip::address& peer,
                             State state) {
  const auto admission = slots.admit(peer);
  EXPECT_TRUE(admission.id);
  EXPECT_FALSE(admission.evicted);
  slots.set(*admission.id, state);
  return *admission.id;
}

TEST(ConnectionSlotsTest, AdmitsUnderTheCapsAndCountsPerPeer) {
  ConnectionSlots slots(4, 2);
  admitted(slots, kA, State::Opening);
  admitted(slots, kB, State::Busy);
  admitted(slots, kA, State::Idle);
  EXPECT_EQ(slots.size(), 3u);
  EXPECT_EQ(slots.held(kA), 2u);
  EXPECT_EQ(slots.held(kB), 1u);
  EXPECT_EQ(slots.held(kC), 0u);
}

TEST(ConnectionSlotsTest, APeerAtItsCapEvictsItsOwnLongestIdleOrIsRefused) {
  ConnectionSlots slots(10, 3);
  const auto idleOld = admitted(slots, kA, State::Idle);
  admitted(slots, kB, State::Idle); // idle longer, but another peer's
  const auto idleNew = admitted(slots, kA, State::Idle);
  admitted(slots, kA, State::Busy);
  // Idle order is when they became idle: make idleOld the newest, then back.
  slots.set(idleOld, State::Busy);
  slots.set(idleOld, State::Idle);
  auto admission = slots.admit(kA);
  ASSERT_TRUE(admission.id);
  EXPECT_EQ(admission.evicted, idleNew);
  EXPECT_FALSE(slots.holds(idleNew));
  EXPECT_EQ(slots.held(kA), 3u);

  slots.set(*admission.id, State::Busy);
  slots.set(idleOld, State::Busy);
  admission = slots.admit(kA);
  EXPECT_FALSE(admission.id) << "nothing of kA's idle";
  EXPECT_FALSE(admission.evicted);
  EXPECT_TRUE(slots.admit(kC).id) << "another peer is admitted";
}

TEST(ConnectionSlotsTest, AFullServerEvictsTheLongestIdleOfAnyPeer) {
  ConnectionSlots slots(3, 3);
  admitted(slots, kA, State::Busy);
  const auto longest = admitted(slots, kB, State::Idle);
  admitted(slots, kA, State::Idle);
  const auto admission = slots.admit(kC);
  ASSERT_TRUE(admission.id);
  EXPECT_EQ(admission.evicted, longest);
  EXPECT_EQ(slots.size(), 3u);
  EXPECT_EQ(slots.held(kB), 0u);
}

TEST(ConnectionSlotsTest, WithNothingIdleTheBiggestPeersOldestOpeningConnectionGivesWay) {
  ConnectionSlots slots(6, 4);
  const auto oldestOfA = admitted(slots, kA, State::Opening);
  admitted(slots, kB, State::Opening);
  admitted(slots, kA, State::Opening);
  admitted(slots, kA, State::Opening);
  admitted(slots, kB, State::Busy);
  admitted(slots, kA, State::Busy);
  // kA holds 4, kB 2, kC none.
  auto admission = slots.admit(kC);
  ASSERT_TRUE(admission.id);
  EXPECT_EQ(admission.evicted, oldestOfA);
  // kA holds 3, kB 2, kC 1: kB is not two more than kC, kA is.
  admission = slots.admit(kC);
  ASSERT_TRUE(admission.id);
  EXPECT_TRUE(admission.evicted);
  EXPECT_EQ(slots.held(kA), 2u);
  // Now kA 2, kB 2, kC 2: even, so a new one is refused.
  admission = slots.admit(kC);
  EXPECT_FALSE(admission.id);
  EXPECT_FALSE(admission.evicted);
  EXPECT_EQ(slots.size(), 6u);
}

TEST(ConnectionSlotsTest, BusyConnectionsAreNeverEvicted) {
  ConnectionSlots slots(2, 2);
  admitted(slots, kA, State::Busy);
  admitted(slots, kA, State::Busy);
  EXPECT_FALSE(slots.admit(kA).id);
  EXPECT_FALSE(slots.admit(kB).id);
  EXPECT_EQ(slots.size(), 2u);
}

TEST(ConnectionSlotsTest, RemoveAndSetIgnoreConnectionsNoLongerHeld) {
  ConnectionSlots slots(1, 1);
  const auto first = admitted(slots, kA, State::Idle);
  const auto admission = slots.admit(kB);
  ASSERT_EQ(admission.evicted, first);
  slots.set(first, State::Busy); // the evicted connection's session, still ending
  slots.remove(first);
  EXPECT_EQ(slots.size(), 1u);
  slots.remove(*admission.id);
  slots.remove(*admission.id);
  EXPECT_EQ(slots.size(), 0u);
  EXPECT_EQ(slots.held(kB), 0u);
}

} // namespace
} // namespace csiop::http
