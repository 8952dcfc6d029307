#include <csiop/kube/url.hpp>

#include <algorithm>
#include <cctype>

#include <csiop/kube/errors.hpp>

namespace csiop::kube {
namespace {

bool unreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

} // namespace

std::string percentEncode(std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (unreserved(c)) {
      out += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += hex[byte >> 4];
      out += hex[byte & 0x0F];
    }
  }
  return out;
}

Query& Query::add(std::string_view key, std::string_view value) {
  query_ += query_.empty() ? '?' : '&';
  query_ += percentEncode(key);
  query_ += '=';
  query_ += percentEncode(value);
  return *this;
}

ServerUrl ServerUrl::parse(std::string_view url) {
  const auto fail = [&](const std::string& why) {
    return ConfigError("server URL '" + std::string(url) + "': " + why);
  };
  ServerUrl out;
  std::string_view rest = url;
  if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    out.tls = false;
    rest.remove_prefix(7);
  } else {
    throw fail("must start with https:// or http://");
  }
  const auto pathAt = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, pathAt);
  std::string_view path = pathAt == std::string_view::npos ? "" : rest.substr(pathAt);
  if (path.find_first_of("?#") != std::string_view::npos)
    throw fail("a query or fragment is not allowed");
  if (authority.find('@') != std::string_view::npos)
    throw fail("user information is not allowed (use a token or client certificate)");
  std::string_view port;
  if (authority.starts_with("[")) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos)
      throw fail("unterminated IPv6 address");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        throw fail("unexpected characters after the IPv6 address");
      port = after.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos)
      port = authority.substr(colon + 1);
  }
  if (out.host.empty())
    throw fail("no host");
  if (port.empty()) {
    out.port = out.tls ? "443" : "80";
  } else {
    const bool digits =
        std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || port.size() > 5 || std::stoi(std::string(port)) > 65535 ||
        std::stoi(std::string(port)) == 0)
      throw fail("bad port '" + std::string(port) + "'");
    out.port = std::string(port);
  }
  while (path.ends_with('/'))
    path.remove_suffix(1);
  out.pathPrefix = std::string(path);
  return out;
}

std::string ServerUrl::hostPort() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + port;
}

std::string groupVersionPath(std::string_view group, std::string_view version) {
  if (group.empty())
    return "/api/" + percentEncode(version);
  return "/apis/" + percentEncode(group) + "/" + percentEncode(version);
}

std::string resourcePath(const ResourceRef& ref, std::string_view ns, std::string_view name,
                         std::string_view subresource) {
  // Appended piece by piece: `"/" + percentEncode(...)` makes GCC 12 at -O3 report a false
  // -Wrestrict (GCC bug 105651).
  std::string path = groupVersionPath(ref.group, ref.version);
  const auto segment = [&path](std::string_view prefix, std::string_view value) {
    path += prefix;
    path += percentEncode(value);
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

} // namespace csiop::kube
