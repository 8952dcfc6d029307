#include <gtest/gtest.h>

#include <csiop/kube/errors.hpp>
#include <csiop/kube/server_url.hpp>

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
  EXPECT_EQ(ServerUrl::parse("https://h:").port, "443") << "an empty port is the default";
}

TEST(ServerUrl, RejectsWhatItCannotUse) {
  for (const char* bad :
       {"10.0.0.1:6443", "ftp://x", "https:x", "https://", "https://:6443", "https://user:pw@host",
        "https://host:0", "https://host:99999", "https://host:12a", "https://host/x?y=1",
        "https://host#f", "https://[::1", "https://ho st"}) {
    EXPECT_THROW(ServerUrl::parse(bad), ConfigError) << bad;
  }
}

std::string errorOf(std::string_view url) {
  try {
    ServerUrl::parse(url);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

TEST(ServerUrl, SaysWhatIsWrong) {
  EXPECT_EQ(errorOf("kube:6443"), "server URL 'kube:6443': must start with https:// or http://");
  EXPECT_EQ(errorOf("10.0.0.1:6443"),
            "server URL '10.0.0.1:6443': must start with https:// or http://");
  EXPECT_EQ(errorOf("https://[::1"), "server URL 'https://[::1': not a valid URL");
  EXPECT_EQ(errorOf("https://:6443"), "server URL 'https://:6443': no host");
  EXPECT_EQ(errorOf("https://host:70000"), "server URL 'https://host:70000': bad port '70000'");
  EXPECT_EQ(errorOf("https://u@host"), "server URL 'https://u@host': user information is not "
                                       "allowed (use a token or client certificate)");
  EXPECT_EQ(errorOf("https://host/?a=b"),
            "server URL 'https://host/?a=b': a query or fragment is not allowed");
}

} // namespace
} // namespace csiop::kube
