#include <gtest/gtest.h>

#include <csiop/kube/resource.hpp>

#include "request_target.hpp"

namespace csiop::kube {
namespace {

using detail::groupVersionPath;
using detail::Query;
using detail::resourcePath;

TEST(Query, JoinsPairsAndSkipsEmptyValues) {
  Query q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.str(), "");
  q.add("watch", "true").addIfNotEmpty("fieldSelector", "").add("limit", "1");
  EXPECT_EQ(q.str(), "?watch=true&limit=1");
}

TEST(ResourcePath, CoversCoreGroupsScopesAndSubresources) {
  using namespace resources;
  EXPECT_EQ(resourcePath(configmaps, "ns", "cm"), "/api/v1/namespaces/ns/configmaps/cm");
  EXPECT_EQ(resourcePath(configmaps, "ns"), "/api/v1/namespaces/ns/configmaps");
  EXPECT_EQ(resourcePath(configmaps, ""), "/api/v1/configmaps"); // all namespaces
  EXPECT_EQ(resourcePath(namespaces, "ignored", "ns"), "/api/v1/namespaces/ns");
  EXPECT_EQ(resourcePath(deployments, "ns", "d", "scale"),
            "/apis/apps/v1/namespaces/ns/deployments/d/scale");
  EXPECT_EQ(resourcePath(driverdeployments, "", "hostpath", "status"),
            "/apis/csiop.dev/v1alpha1/driverdeployments/hostpath/status");
  EXPECT_EQ(resourcePath(clusterroles, "", "system:csi"),
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Acsi");
  EXPECT_EQ(groupVersionPath("", "v1"), "/api/v1");
  EXPECT_EQ(groupVersionPath("storage.k8s.io", "v1"), "/apis/storage.k8s.io/v1");
}

TEST(ResourceRef, PredefinedRefsMatchTheApi) {
  using namespace resources;
  EXPECT_EQ(configmaps.apiVersion(), "v1");
  EXPECT_EQ(leases.apiVersion(), "coordination.k8s.io/v1");
  EXPECT_FALSE(csidrivers.namespaced);
  EXPECT_FALSE(driverdeployments.namespaced);
  EXPECT_TRUE(rolebindings.namespaced);
  EXPECT_EQ(customresourcedefinitions.apiVersion(), "apiextensions.k8s.io/v1");
  EXPECT_EQ(events.group, "");
}

} // namespace
} // namespace csiop::kube
