// conditionStates: the conditions csiop_driverdeployment_status_condition serves.
#include <gtest/gtest.h>

#include <csiop/driverdeployment/condition_states.hpp>

namespace csiop::driverdeployment {
namespace {

using api::Json;

TEST(ConditionStates, EachConditionOfEachDriverDeploymentWithItsStatus) {
  const Json ready = {{"metadata", {{"name", "a"}}},
                      {"status",
                       {{"conditions",
                         {{{"type", "Ready"}, {"status", "True"}},
                          {{"type", "RolloutFailed"}, {"status", "False"}},
                          {{"type", "Degraded"}, {"status", "maybe"}},
                          {{"status", "True"}}}}}}};
  const Json fresh = {{"metadata", {{"name", "b"}}}};
  const Json odd = {{"metadata", {{"name", "c"}}}, {"status", {{"conditions", "none"}}}};
  const ConditionStates states = conditionStates({&ready, &fresh, &odd});
  const ConditionStates expected = {
      {"a", {{"Ready", "True"}, {"RolloutFailed", "False"}, {"Degraded", "Unknown"}}}};
  EXPECT_EQ(states, expected);
}

} // namespace
} // namespace csiop::driverdeployment
