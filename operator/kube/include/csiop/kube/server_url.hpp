// The server URL of a Config, parsed with Boost.URL.
#pragma once

#include <string>
#include <string_view>

namespace csiop::kube {

// scheme://host[:port][/prefix], as a kubeconfig `server` may be written.
struct ServerUrl {
  bool tls = true;
  std::string host;       // without brackets for IPv6 literals
  std::string port;       // default 443 / 80
  std::string pathPrefix; // "" or "/prefix" (no trailing slash)

  // Throws ConfigError on anything else (no scheme, userinfo, query, bad port).
  static ServerUrl parse(std::string_view url);
  std::string hostPort() const; // "[::1]:6443" / "host:443"
};

} // namespace csiop::kube
