#include "request_target.hpp"

#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

namespace csiop::kube::detail {
namespace {

std::string encode(std::string_view text) {
  return boost::urls::encode(text, boost::urls::unreserved_chars);
}

} // namespace

Query& Query::add(std::string_view key, std::string_view value) {
  query_ += query_.empty() ? '?' : '&';
  query_ += encode(key);
  query_ += '=';
  query_ += encode(value);
  return *this;
}

std::string groupVersionPath(std::string_view group, std::string_view version) {
  if (group.empty())
    return "/api/" + encode(version);
  return "/apis/" + encode(group) + "/" + encode(version);
}

std::string resourcePath(const ResourceRef& ref, std::string_view ns, std::string_view name,
                         std::string_view subresource) {
  // Appended piece by piece: `"/" + encode(...)` makes GCC 12 at -O3 report a false
  // -Wrestrict (GCC bug 105651).
  std::string path = groupVersionPath(ref.group, ref.version);
  const auto segment = [&path](std::string_view prefix, std::string_view value) {
    path += prefix;
    path += encode(value);
  };
  if (ref.namespaced && !ns.empty())
    segment("/namespaces/", ns);
  segment("/", ref.resource);
  if (!name.empty()) {
    segment("/", name);
    if (!subresource.empty())
      segment("/", subresource);
  }
  return path;
}

} // namespace csiop::kube::detail
