// The kinds spec.objects may hold: the built-in ones, and those an admin adds (--object-kind).
#include <gtest/gtest.h>

#include <csiop/api/codec.hpp>
#include <csiop/api/object_kinds.hpp>
#include <csiop/api/yaml.hpp>

namespace csiop::api {
namespace {

TEST(ObjectKinds, ParsesApiVersionKindAndResource) {
  std::string error;
  const auto k = parseObjectKind("monitoring.coreos.com/v1,ServiceMonitor,servicemonitors", error);
  ASSERT_TRUE(k) << error;
  EXPECT_EQ(k->group(), "monitoring.coreos.com");
  EXPECT_EQ(k->version(), "v1");
  EXPECT_EQ(k->kind, "ServiceMonitor");
  EXPECT_EQ(k->resource, "servicemonitors");
  const auto core = parseObjectKind("v1,Endpoints,endpoints", error);
  ASSERT_TRUE(core) << error;
  EXPECT_EQ(core->group(), "");
  EXPECT_EQ(core->version(), "v1");
}

TEST(ObjectKinds, RejectsMalformedOnes) {
  for (const char* text : {"ServiceMonitor", "v1,ServiceMonitor", "a/b/c,K,r", "v1,kind,r",
                           "v1,Kind,Resources", "v1,Kind,r,extra", ",Kind,r"}) {
    std::string error;
    EXPECT_FALSE(parseObjectKind(text, error)) << text;
    EXPECT_NE(error.find("expected apiVersion,Kind,resource"), std::string::npos) << error;
  }
}

TEST(ObjectKinds, AddedKindsMayNotReuseAKindName) {
  std::string error;
  EXPECT_FALSE(objectKindsWith({"example.com/v1,Deployment,deployments"}, error));
  EXPECT_NE(error.find("the kind Deployment is already one the operator creates"),
            std::string::npos)
      << error;
  EXPECT_FALSE(objectKindsWith({"example.com/v1,StorageClass,storageclasses"}, error));
  const auto kinds = objectKindsWith(
      {"monitoring.coreos.com/v1,ServiceMonitor,servicemonitors", "apps/v1,Deployment,deployments"},
      error);
  ASSERT_TRUE(kinds) << error;
  EXPECT_EQ(kinds->size(), builtinObjectKinds().size() + 1); // the built-in one counts once
}

DriverDeployment withObjects(const std::string& objects) {
  const Decoded d = decode(parseYaml(R"(
apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec:
  driverName: demo.example.com
  driver: {image: d}
  objects: )" + objects)[0]);
  EXPECT_TRUE(d.errors.empty());
  return d.object;
}

TEST(ObjectKinds, CheckNamesTheKindsAnAdminAllowed) {
  const DriverDeployment dd =
      withObjects("[{apiVersion: apps/v1, kind: Deployment, metadata: {name: a}}, {apiVersion: "
                  "monitoring.coreos.com/v1, kind: ServiceMonitor, metadata: {name: b}}]");
  const ErrorList errors = checkObjectKinds(dd, builtinObjectKinds());
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0].field, "spec.objects[1]");
  EXPECT_NE(errors[0].message().find("monitoring.coreos.com/v1 ServiceMonitor is not a kind this "
                                     "operator may create (v1 ConfigMap, v1 Service"),
            std::string::npos)
      << errors[0].message();
  std::string error;
  const auto kinds =
      objectKindsWith({"monitoring.coreos.com/v1,ServiceMonitor,servicemonitors"}, error);
  EXPECT_TRUE(checkObjectKinds(dd, *kinds).empty());
  // Secrets are not among the built-in kinds: a DriverDeployment is no place for one.
  EXPECT_EQ(checkObjectKinds(withObjects("[{apiVersion: v1, kind: Secret, metadata: {name: s}}]"),
                             builtinObjectKinds())
                .size(),
            1U);
}

} // namespace
} // namespace csiop::api
