#include <csiop/kube/server_url.hpp>

#include <charconv>

#include <boost/url/parse.hpp>
#include <boost/url/scheme.hpp>
#include <boost/url/url_view.hpp>

#include <csiop/kube/errors.hpp>

namespace csiop::kube {
namespace {

namespace urls = boost::urls;

bool isHttp(urls::scheme scheme) {
  return scheme == urls::scheme::https || scheme == urls::scheme::http;
}

// "https://..." that is not a valid URL, rather than something else entirely.
bool startsWithHttpScheme(std::string_view url) {
  const auto end = url.find("://");
  return end != std::string_view::npos && isHttp(urls::string_to_scheme(url.substr(0, end)));
}

bool validPort(std::string_view port) {
  unsigned number = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  return ec == std::errc() && end == port.data() + port.size() && port.size() <= 5 && number >= 1 &&
         number <= 65535;
}

} // namespace

ServerUrl ServerUrl::parse(std::string_view url) {
  const auto fail = [&](const std::string& why) {
    return ConfigError("server URL '" + std::string(url) + "': " + why);
  };
  const auto parsed = urls::parse_uri(url);
  if (!parsed) {
    throw fail(startsWithHttpScheme(url) ? "not a valid URL"
                                         : "must start with https:// or http://");
  }
  const urls::url_view& u = *parsed;
  if (!isHttp(u.scheme_id()) || !u.has_authority())
    throw fail("must start with https:// or http://");
  if (u.has_userinfo())
    throw fail("user information is not allowed (use a token or client certificate)");
  if (u.has_query() || u.has_fragment())
    throw fail("a query or fragment is not allowed");
  std::string_view path = u.encoded_path();
  if (!path.empty() && !path.starts_with('/'))
    throw fail("not a valid URL"); // "https://host:12a": a path must follow the authority
  ServerUrl out;
  out.tls = u.scheme_id() == urls::scheme::https;
  out.host = u.encoded_host_address();
  if (out.host.empty())
    throw fail("no host");
  const std::string_view port = u.port();
  if (port.empty()) {
    out.port = out.tls ? "443" : "80";
  } else if (validPort(port)) {
    out.port = std::string(port);
  } else {
    throw fail("bad port '" + std::string(port) + "'");
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

} // namespace csiop::kube
