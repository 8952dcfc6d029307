// URL pieces: the server URL of a Config, request paths of resources, query strings.
#pragma once

#include <string>
#include <string_view>

#include <csiop/kube/resource.hpp>

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

// RFC 3986 percent-encoding of everything but the unreserved characters A-Z a-z 0-9 - . _ ~
std::string percentEncode(std::string_view text);

// "?k=v&k2=v2" (empty when nothing was added); keys and values percent-encoded.
class Query {
public:
  Query& add(std::string_view key, std::string_view value);
  Query& addIfNotEmpty(std::string_view key, std::string_view value) {
    return value.empty() ? *this : add(key, value);
  }
  std::string str() const { return query_; }
  bool empty() const { return query_.empty(); }

private:
  std::string query_;
};

// /api/v1[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]] or /apis/<group>/<version>/...
// A namespaced resource with an empty namespace means "all namespaces" (lists, watches); the
// namespace of a cluster-scoped resource is ignored. Segments are percent-encoded.
std::string resourcePath(const ResourceRef& ref, std::string_view ns, std::string_view name = {},
                         std::string_view subresource = {});

// /api/v1 or /apis/<group>/<version>
std::string groupVersionPath(std::string_view group, std::string_view version);

} // namespace csiop::kube
