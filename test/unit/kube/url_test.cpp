#include <gtest/gtest.h>

#include <csiop/kube/errors.hpp>
#include <csiop/kube/resource.hpp>
#include <csiop/kube/url.hpp>

namespace csiop::kube {
namespace {

TEST(ServerUrl, ParsesSchemeHostPortAndPrefix) {
  auto u = ServerUrl::parse("https://10.0.0.1:6443");
  EXPECT_TRUE(u.tls);
  EXPECT_EQ(u.host, "10.0.0.1");
  EXPECT_EQ(u.port, "6443");
  EXPECT_EQ(u.pathPrefix, "");

  u = ServerUrl::parse("https://kube.example.com");
  EXPECT_EQ(u.port, "443");
  u = ServerUrl::parse("http://localhost/");
  EXPECT_FALSE(u.tls);
  EXPECT_EQ(u.port, "80");
  EXPECT_EQ(u.pathPrefix, "");

  u = ServerUrl::parse("https://rancher.example.com/k8s/clusters/c-1/");
  EXPECT_EQ(u.host, "rancher.example.com");
  EXPECT_EQ(u.pathPrefix, "/k8s/clusters/c-1");

  u = ServerUrl::parse("https://[fd00::1]:6443");
  EXPECT_EQ(u.host, "fd00::1");
  EXPECT_EQ(u.port, "6443");
  EXPECT_EQ(u.hostPort(), "[fd00::1]:6443");
  EXPECT_EQ(ServerUrl::parse("https://[::1]").hostPort(), "[::1]:443");
}

TEST(ServerUrl, RejectsWhatItCannotUse) {
  for (const char* bad : {"10.0.0.1:6443", "ftp://x", "https://", "https://:6443",
                          "https://user:pw@host", "https://host:0", "https://host:99999",
                          "https://host:12a", "https://host/x?y=1", "https://[::1"}) {
    EXPECT_THROW(ServerUrl::parse(bad), ConfigError) << bad;
  }
  try {
    ServerUrl::parse("kube:6443");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "server URL 'kube:6443': must start with https:// or http://");
  }
}

TEST(PercentEncode, KeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(percentEncode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(percentEncode("app in (a,b),tier!=x"), "app%20in%20%28a%2Cb%29%2Ctier%21%3Dx");
  EXPECT_EQ(percentEncode("a/b?c&d=e#f+g%"), "a%2Fb%3Fc%26d%3De%23f%2Bg%25");
  EXPECT_EQ(percentEncode("\xc3\xa9"), "%C3%A9"); // UTF-8 bytes
}

TEST(Query, JoinsEncodedPairs) {
  Query q;
  EXPECT_EQ(q.str(), "");
  q.add("labelSelector", "app.kubernetes.io/name=csi,env notin (dev)")
      .addIfNotEmpty("fieldSelector", "")
      .add("limit", "1");
  EXPECT_EQ(q.str(),
            "?labelSelector=app.kubernetes.io%2Fname%3Dcsi%2Cenv%20notin%20%28dev%29&limit=1");
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
