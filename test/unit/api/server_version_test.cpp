#include <gtest/gtest.h>

#include <csiop/api/server_version.hpp>

namespace csiop::api {
namespace {

DriverDeployment withCsiDriver(CSIDriverSpec spec) {
  DriverDeployment dd;
  dd.spec.csiDriver = std::move(spec);
  return dd;
}

std::vector<std::string> fields(const ErrorList& errors) {
  std::vector<std::string> out;
  for (const FieldError& e : errors) {
    out.push_back(e.field);
  }
  return out;
}

TEST(ServerVersion, AFieldIsRefusedBelowTheMinorThatAddedIt) {
  CSIDriverSpec spec;
  spec.preventPodSchedulingIfMissing = false; // set, to false: still a field the server lacks
  spec.serviceAccountTokenInSecrets = true;
  spec.nodeAllocatableUpdatePeriodSeconds = 60;
  spec.seLinuxMount = true;
  const DriverDeployment dd = withCsiDriver(spec);
  using Fields = std::vector<std::string>;
  EXPECT_EQ(fields(checkServerVersion(dd, std::nullopt)), Fields{}) << "no server: nothing";
  EXPECT_EQ(fields(checkServerVersion(dd, 36)), Fields{});
  EXPECT_EQ(fields(checkServerVersion(dd, 37)), Fields{});
  EXPECT_EQ(fields(checkServerVersion(dd, 35)),
            Fields{"spec.csiDriver.preventPodSchedulingIfMissing"});
  EXPECT_EQ(fields(checkServerVersion(dd, 33)),
            (Fields{"spec.csiDriver.serviceAccountTokenInSecrets",
                    "spec.csiDriver.preventPodSchedulingIfMissing"}));
  EXPECT_EQ(fields(checkServerVersion(dd, 24)).size(), 4u);

  const ErrorList errors = checkServerVersion(dd, 35);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].type, ErrorType::Forbidden);
  EXPECT_EQ(errors[0].detail, "needs Kubernetes 1.36 or newer: the API server is 1.35, whose "
                              "CSIDriver does not have the field");
  EXPECT_EQ(fields(checkServerVersion(withCsiDriver({}), 20)), Fields{}) << "nothing set";
  EXPECT_EQ(fields(checkServerVersion(DriverDeployment{}, 20)), Fields{});
}

} // namespace
} // namespace csiop::api
