#include <csiop/driverdeployment/registration_clock.hpp>

#include <gtest/gtest.h>

namespace csiop::driverdeployment {
namespace {

using std::chrono::seconds;

const api::WallTime kT0 = api::WallTime{} + seconds{1'000'000};
const std::string kDriver = "hostpath.csi.k8s.io";

CachedCSINode csiNode(std::vector<std::string> drivers) {
  return {"node-1", std::move(drivers)};
}

TEST(RegistrationClock, AListingFoundAtStartHasNoStamp) {
  RegistrationClock clock;
  const CachedCSINode listed = csiNode({kDriver});
  clock.observe(nullptr, &listed, kT0);
  const NodeRegistration r = clock.of(&listed, kDriver);
  EXPECT_TRUE(r.listed);
  EXPECT_EQ(r.since, api::WallTime{});
  EXPECT_EQ(clock.size(), 0U);
}

TEST(RegistrationClock, ARegistrationSeenHappeningIsStampedAndForgottenWhenDropped) {
  RegistrationClock clock;
  const CachedCSINode none = csiNode({});
  const CachedCSINode other = csiNode({"other.csi.example.com"});
  const CachedCSINode both = csiNode({"other.csi.example.com", kDriver});
  clock.observe(nullptr, &none, kT0);
  clock.observe(&none, &other, kT0 + seconds{1});
  clock.observe(&other, &both, kT0 + seconds{5});
  EXPECT_EQ(clock.of(&both, kDriver).since, kT0 + seconds{5});
  EXPECT_EQ(clock.of(&both, "other.csi.example.com").since, kT0 + seconds{1});
  // An unrelated change (the other driver's update) keeps the stamp.
  clock.observe(&both, &both, kT0 + seconds{9});
  EXPECT_EQ(clock.of(&both, kDriver).since, kT0 + seconds{5});
  // The plugin deregisters, then registers again: a new stamp.
  clock.observe(&both, &other, kT0 + seconds{20});
  EXPECT_FALSE(clock.of(&other, kDriver).listed);
  EXPECT_EQ(clock.size(), 1U);
  clock.observe(&other, &both, kT0 + seconds{30});
  EXPECT_EQ(clock.of(&both, kDriver).since, kT0 + seconds{30});
  // The node goes: nothing kept.
  clock.observe(&both, nullptr, kT0 + seconds{40});
  EXPECT_EQ(clock.size(), 0U);
  EXPECT_FALSE(clock.of(nullptr, kDriver).listed);
}

} // namespace
} // namespace csiop::driverdeployment
