// The request bodies a server holds at once (BodyBudget): pure bookkeeping.
#include <optional>
#include <utility>

#include <gtest/gtest.h>

#include <csiop/http/body_budget.hpp>

namespace csiop::http {
namespace {

const auto kA = boost::asio::ip::make_address("10.0.0.1");
const auto kB = boost::asio::ip::make_address("10.0.0.2");
const auto kC = boost::asio::ip::make_address("10.0.0.3");

TEST(BodyBudgetTest, ReservesWithinTheTotalAndEachPeersShare) {
  BodyBudget budget(100, 60);
  auto a1 = budget.reserve(kA, 40);
  ASSERT_TRUE(a1);
  EXPECT_FALSE(budget.reserve(kA, 21)) << "over kA's share";
  auto a2 = budget.reserve(kA, 20);
  ASSERT_TRUE(a2);
  auto b = budget.reserve(kB, 40);
  ASSERT_TRUE(b);
  EXPECT_FALSE(budget.reserve(kC, 1)) << "over the total";
  EXPECT_EQ(budget.used(), 100u);
  EXPECT_EQ(budget.used(kA), 60u);
  EXPECT_EQ(budget.used(kB), 40u);
  EXPECT_TRUE(budget.reserve(kC, 0)) << "nothing always fits";
}

TEST(BodyBudgetTest, AReservationGivesItsBytesBackOnce) {
  BodyBudget budget(100, 100);
  {
    auto first = budget.reserve(kA, 70);
    ASSERT_TRUE(first);
    std::optional<BodyBudget::Reservation> moved = std::move(first);
    first.reset();
    EXPECT_EQ(budget.used(), 70u) << "the moved-from one holds nothing";
    auto second = budget.reserve(kB, 30);
    ASSERT_TRUE(second);
    *moved = std::move(*second); // gives kA's 70 back, takes kB's 30
    EXPECT_EQ(budget.used(), 30u);
    EXPECT_EQ(budget.used(kA), 0u);
    EXPECT_EQ(budget.used(kB), 30u);
  }
  EXPECT_EQ(budget.used(), 0u);
  EXPECT_EQ(budget.used(kB), 0u);
  EXPECT_TRUE(budget.reserve(kA, 100));
}

} // namespace
} // namespace csiop::http
