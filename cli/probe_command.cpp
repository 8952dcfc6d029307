// `csi-operator probe URL`: one GET, exit 0 on a 2xx answer. The helm chart's test hook and a
// Docker HEALTHCHECK run it (the operator image holds only this binary). The request goes
// through the operator's own HTTP client (csiop::kube::HttpClient): TLS 1.2+, the server
// verified against --ca-file or the system trust store, by the URL's host or
// --tls-server-name (which is also sent as SNI).
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/http/status.hpp>

#include <csiop/api/formats.hpp>
#include <csiop/kube/errors.hpp>
#include <csiop/kube/http.hpp>
#include <csiop/kube/server_url.hpp>

#include "commands.hpp"
#include "operator_version.hpp"

namespace csiop::cli {
namespace {

namespace asio = boost::asio;

struct ProbeOptions {
  std::string url;
  std::string caFile;
  std::string tlsServerName;
  std::string timeout = "5s";
};

// The URL cut into what kube::Config takes (scheme://host[:port]) and the request target.
struct SplitUrl {
  std::string server;
  std::string target; // path and query; "/" when the URL has no path
};

// Throws std::invalid_argument with the reason (the URL is not repeated).
SplitUrl splitUrl(std::string_view url) {
  for (const char c : url) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f)
      throw std::invalid_argument("spaces and control characters are not allowed");
  }
  const auto scheme = url.find("://");
  const auto authorityEnd =
      scheme == std::string_view::npos ? scheme : url.find_first_of("/?#", scheme + 3);
  SplitUrl out;
  out.server = std::string(url.substr(0, authorityEnd));
  std::string_view rest = authorityEnd == std::string_view::npos ? "" : url.substr(authorityEnd);
  rest = rest.substr(0, rest.find('#')); // a fragment is never sent
  out.target = rest.starts_with('/') ? std::string(rest) : "/" + std::string(rest);
  try {
    (void)kube::ServerUrl::parse(out.server);
  } catch (const kube::ConfigError& e) {
    // "server URL '<server>': <why>": only the reason is of use here.
    const std::string prefix = "server URL '" + out.server + "': ";
    std::string_view why = e.what();
    if (why.starts_with(prefix))
      why.remove_prefix(prefix.size());
    throw std::invalid_argument(std::string(why));
  }
  return out;
}

std::string checkUrl(const std::string& url) {
  try {
    (void)splitUrl(url);
    return {};
  } catch (const std::invalid_argument& e) {
    return "'" + url + "': " + e.what();
  }
}

constexpr std::chrono::milliseconds kMaxTimeout = std::chrono::hours(1);

std::optional<std::chrono::milliseconds> parseTimeout(const std::string& flag) {
  const auto seconds = api::formats::goDuration(flag);
  if (!seconds || !(*seconds * 1000 < static_cast<double>(kMaxTimeout.count()) + 0.5))
    return std::nullopt;
  const std::chrono::milliseconds timeout(std::llround(*seconds * 1000));
  if (timeout.count() < 1)
    return std::nullopt;
  return timeout;
}

// The body on one line: whitespace runs and control characters become one space, at most
// kMaxBody bytes (not cutting a UTF-8 sequence), "..." when cut.
std::string oneLine(std::string_view body) {
  constexpr std::size_t kMaxBody = 200;
  std::string out;
  bool space = false;
  for (const char c : body) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += c;
    if (out.size() > kMaxBody)
      break;
  }
  if (out.size() > kMaxBody) {
    std::size_t cut = kMaxBody;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80)
      --cut;
    out.resize(cut);
    out += "...";
  }
  return out;
}

int runProbe(const ProbeOptions& o, Streams& s) {
  const SplitUrl url = splitUrl(o.url); // checked when the flags were parsed
  const std::chrono::milliseconds timeout = *parseTimeout(o.timeout);
  const std::string timedOut = " (--timeout " + o.timeout + ")";

  kube::Config config;
  config.server = url.server;
  config.tlsServerName = o.tlsServerName;
  if (!o.caFile.empty()) {
    std::ifstream in(o.caFile, std::ios::binary);
    if (!in) {
      s.err << "error: cannot read " << o.caFile << ": " << std::strerror(errno) << "\n";
      return 1;
    }
    config.caPem.assign(std::istreambuf_iterator<char>(in), {});
    // An empty caPem would mean the system trust store: never that by accident.
    if (config.caPem.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
      s.err << "error: --ca-file " << o.caFile << ": no PEM certificate in it\n";
      return 1;
    }
    config.origin = "--ca-file " + o.caFile;
  }
  kube::HttpOptions options;
  options.timeout = timeout;
  options.maxIdleConnections = 0;
  options.maxBodyBytes = std::size_t{1} << 20;
  options.userAgent = std::string("csi-operator-probe/") + operatorVersion();

  asio::io_context io;
  std::optional<kube::HttpClient> client;
  try {
    client.emplace(io.get_executor(), std::move(config), options);
  } catch (const std::exception& e) {
    s.err << "error: " << e.what() << "\n";
    return 1;
  }
  kube::HttpRequest request(kube::Method::Get, url.target);
  request.accept = "*/*";
  request.timeout = timeout;

  bool done = false;
  std::exception_ptr failure;
  kube::HttpResponse response;
  asio::co_spawn(io, client->send(std::move(request)),
                 [&](std::exception_ptr e, kube::HttpResponse r) {
                   done = true;
                   failure = e;
                   response = std::move(r);
                 });
  // The client bounds each step (connect, handshake, response) by the timeout; this bounds
  // them together, name resolution included.
  io.run_for(timeout);
  if (!done) {
    s.err << "error: GET " << o.url << ": timed out" << timedOut << "\n";
    return 1;
  }
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const kube::TransportError& e) {
      s.err << "error: " << e.what()
            << (e.kind() == kube::TransportError::Kind::Timeout ? timedOut : "") << "\n";
    } catch (const std::exception& e) {
      s.err << "error: GET " << o.url << ": " << e.what() << "\n";
    }
    return 1;
  }
  const std::string body = oneLine(response.body);
  if (response.status >= 200 && response.status <= 299) {
    s.out << o.url << ": " << response.status << (body.empty() ? "" : " " + body) << "\n";
    return 0;
  }
  const std::string_view reason =
      boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(response.status));
  s.err << "error: GET " << o.url << ": " << response.status;
  if (!reason.starts_with('<')) // "<unknown-status>"
    s.err << " " << reason;
  s.err << (body.empty() ? "" : ": " + body) << "\n";
  return 1;
}

} // namespace

Command addProbe(CLI::App& app) {
  auto o = std::make_shared<ProbeOptions>();
  auto* cmd = app.add_subcommand(
      "probe", "GET a URL; exit 0 on a 2xx answer, else 1 (helm test, Docker HEALTHCHECK)");
  cmd->add_option("URL", o->url, "http:// or https://host[:port][/path][?query]")
      ->required()
      ->check(checkUrl);
  cmd->add_option("--ca-file", o->caFile,
                  "PEM CA certificates to verify the server with (default: the system's)");
  cmd->add_option("--tls-server-name", o->tlsServerName,
                  "Name to verify the server certificate against and send as SNI "
                  "(default: the URL's host)");
  cmd->add_option("--timeout", o->timeout, "Bound on the whole request (Go duration)")
      ->check([](const std::string& flag) {
        return parseTimeout(flag) ? std::string()
                                  : "must be a Go duration from 1ms to 1h, e.g. 5s or 500ms";
      })
      ->capture_default_str();
  return [o](Streams& s) { return runProbe(*o, s); };
}

} // namespace csiop::cli
