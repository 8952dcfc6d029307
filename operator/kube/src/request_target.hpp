// Request targets of the API server: resource paths and query strings. Path segments, query
// keys and values are percent-encoded (Boost.URL) but for the RFC 3986 unreserved characters
// A-Z a-z 0-9 - . _ ~, so that a label selector such as "app in (a,b)" reaches the server as
// written.
#pragma once

#include <string>
#include <string_view>

#include <csiop/kube/resource.hpp>

namespace csiop::kube::detail {

// "?k=v&k2=v2" (empty when nothing was added).
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
// namespace of a cluster-scoped resource is ignored.
std::string resourcePath(const ResourceRef& ref, std::string_view ns, std::string_view name = {},
                         std::string_view subresource = {});

// /api/v1 or /apis/<group>/<version>
std::string groupVersionPath(std::string_view group, std::string_view version);

} // namespace csiop::kube::detail
