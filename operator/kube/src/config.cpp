#include <csiop/kube/config.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <openssl/evp.h>

#include <csiop/api/yaml.hpp>
#include <csiop/kube/server_url.hpp>

#include "pem.hpp"

namespace csiop::kube {
namespace {

namespace fs = std::filesystem;

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// A *-data field: base64 (RFC 4648, standard alphabet), whitespace ignored, padding optional;
// std::nullopt for anything else. EVP_DecodeBlock wants whole groups of four and reads a '='
// anywhere as zero bits, counted in its result: the padding is checked, completed and taken
// off here.
std::optional<std::string> decodeBase64(std::string_view text) {
  std::string in;
  in.reserve(text.size() + 2);
  for (const char c : text)
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
      in += c;
  std::size_t padding = 0;
  if (const auto at = in.find('='); at != std::string::npos) {
    padding = in.size() - at;
    if (padding > 2 || in.find_first_not_of('=', at) != std::string::npos || in.size() % 4 != 0)
      return std::nullopt; // data after the padding, or padding that does not end a group
  } else if (in.size() % 4 == 1) {
    return std::nullopt; // a lone sextet
  } else {
    padding = (4 - in.size() % 4) % 4;
    in.append(padding, '=');
  }
  if (in.size() > INT_MAX)
    return std::nullopt;
  std::string out(in.size() / 4 * 3, '\0');
  const int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                     reinterpret_cast<const unsigned char*>(in.data()),
                                     static_cast<int>(in.size()));
  if (length < 0)
    return std::nullopt; // a character outside the alphabet
  out.resize(static_cast<std::size_t>(length) - padding);
  return out;
}

// The file's content, or the reason it cannot be read.
bool readFile(const fs::path& path, std::string& content, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    error = "read error";
    return false;
  }
  content = ss.str();
  return true;
}

std::string getenvString(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Reads one kubeconfig with messages that name the file, the entry and the key.
class KubeconfigReader {
public:
  KubeconfigReader(const Json& root, fs::path baseDir, std::string origin)
      : root_(root), baseDir_(std::move(baseDir)), origin_(std::move(origin)) {}

  Config read(const std::string& requestedContext) {
    if (!root_.is_object())
      throw error("", "is not a YAML mapping");
    std::string contextName = requestedContext;
    if (contextName.empty()) {
      contextName = optString(root_, "current-context", "");
      if (contextName.empty())
        throw error("", "current-context is not set (and no context was requested)");
    }
    const Json& context = named("contexts", "context", contextName);
    const std::string ctxWhere = "context '" + contextName + "'";
    const std::string clusterName = optString(context, "cluster", ctxWhere);
    if (clusterName.empty())
      throw error(ctxWhere, "names no cluster (key 'cluster')");
    const std::string userName = optString(context, "user", ctxWhere);

    Config config;
    config.origin = "kubeconfig " + origin_ + " context " + contextName;
    if (auto ns = optString(context, "namespace", ctxWhere); !ns.empty())
      config.defaultNamespace = ns;
    readCluster(named("clusters", "cluster", clusterName), "cluster '" + clusterName + "'", config);
    if (!userName.empty())
      readUser(named("users", "user", userName), "user '" + userName + "'", config);
    return config;
  }

private:
  ConfigError error(const std::string& where, const std::string& what) const {
    return ConfigError("kubeconfig " + origin_ + ": " + (where.empty() ? "" : where + ": ") + what);
  }

  std::string optString(const Json& object, const char* key, const std::string& where) const {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null())
      return {};
    if (!it->is_string())
      throw error(where, std::string("'") + key + "' must be a string");
    return it->get<std::string>();
  }

  bool optBool(const Json& object, const char* key, const std::string& where) const {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null())
      return false;
    if (!it->is_boolean())
      throw error(where, std::string("'") + key + "' must be true or false");
    return it->get<bool>();
  }

  // The `inner` mapping of the entry called `name` in the list `list`
  // (clusters: [{name: x, cluster: {...}}]).
  const Json& named(const char* list, const char* inner, const std::string& name) const {
    const auto it = root_.find(list);
    if (it == root_.end() || it->is_null())
      throw error("", std::string("has no '") + list + "' (looking for '" + name + "')");
    if (!it->is_array())
      throw error("", std::string("'") + list + "' must be a list");
    std::string known;
    for (const Json& entry : *it) {
      if (!entry.is_object())
        throw error(list, "every entry must be a mapping");
      const std::string entryName = optString(entry, "name", list);
      if (entryName == name) {
        const auto body = entry.find(inner);
        if (body == entry.end() || !body->is_object())
          throw error(std::string(inner) + " '" + name + "'",
                      std::string("has no '") + inner + "' mapping");
        return *body;
      }
      known += (known.empty() ? "" : ", ") + entryName;
    }
    throw error("", std::string(inner) + " '" + name + "' not found in '" + list + "'" +
                        (known.empty() ? std::string(" (empty)") : " (has: " + known + ")"));
  }

  fs::path resolve(const std::string& file) const {
    fs::path p(file);
    return p.is_relative() ? baseDir_ / p : p;
  }

  // `key-data` (base64) wins over `key` (a file, relative to the kubeconfig). "" if neither.
  std::string dataOrFile(const Json& object, const std::string& key, const std::string& where) {
    const std::string dataKey = key + "-data";
    if (auto data = optString(object, dataKey.c_str(), where); !data.empty()) {
      auto decoded = decodeBase64(data);
      if (!decoded)
        throw error(where, "'" + dataKey + "' is not valid base64");
      return *decoded;
    }
    if (auto file = optString(object, key.c_str(), where); !file.empty()) {
      const fs::path path = resolve(file);
      std::string content;
      std::string why;
      if (!readFile(path, content, why))
        throw error(where, "'" + key + "': cannot read " + path.string() + ": " + why);
      return content;
    }
    return {};
  }

  void readCluster(const Json& cluster, const std::string& where, Config& config) {
    config.server = optString(cluster, "server", where);
    if (config.server.empty())
      throw error(where, "has no 'server'");
    try {
      (void)ServerUrl::parse(config.server);
    } catch (const ConfigError& e) {
      throw error(where, e.what());
    }
    if (!optString(cluster, "proxy-url", where).empty())
      throw error(where, "'proxy-url' is not supported");
    config.tlsServerName = optString(cluster, "tls-server-name", where);
    config.insecureSkipTlsVerify = optBool(cluster, "insecure-skip-tls-verify", where);
    config.caPem = dataOrFile(cluster, "certificate-authority", where);
    if (!config.caPem.empty()) {
      if (config.insecureSkipTlsVerify)
        throw error(where, "a certificate authority together with insecure-skip-tls-verify "
                           "is not allowed");
      if (auto why = detail::checkCertificates(config.caPem); !why.empty())
        throw error(where, "certificate-authority: " + why);
    }
  }

  void readUser(const Json& user, const std::string& where, Config& config) {
    if (user.contains("exec") && !user["exec"].is_null())
      throw error(where, "exec credential plugins are not supported");
    if (user.contains("auth-provider") && !user["auth-provider"].is_null())
      throw error(where, "auth-provider plugins are not supported");
    if (!optString(user, "username", where).empty() || !optString(user, "password", where).empty())
      throw error(where, "basic authentication (username/password) is not supported");
    config.clientCertPem = dataOrFile(user, "client-certificate", where);
    config.clientKeyPem = dataOrFile(user, "client-key", where);
    if (config.clientCertPem.empty() != config.clientKeyPem.empty())
      throw error(where, config.clientCertPem.empty()
                             ? "has a client-key but no client-certificate"
                             : "has a client-certificate but no client-key");
    if (!config.clientCertPem.empty()) {
      if (auto why = detail::checkCertificates(config.clientCertPem); !why.empty())
        throw error(where, "client-certificate: " + why);
      if (auto why = detail::checkPrivateKey(config.clientKeyPem); !why.empty())
        throw error(where, "client-key: " + why);
      if (auto why = detail::checkKeyMatchesCertificate(config.clientCertPem, config.clientKeyPem);
          !why.empty())
        throw error(where, why);
    }
    config.token = optString(user, "token", where);
    if (auto file = optString(user, "tokenFile", where); !file.empty() && config.token.empty()) {
      try {
        config.tokenFile = std::make_shared<TokenFile>(resolve(file));
      } catch (const ConfigError& e) {
        throw error(where, std::string("tokenFile: ") + e.what());
      }
    }
  }

  const Json& root_;
  fs::path baseDir_;
  std::string origin_;
};

} // namespace

// --- TokenFile ---------------------------------------------------------------------------------

TokenFile::Stamp TokenFile::stampOf(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return {};
  return {static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
          static_cast<std::int64_t>(st.st_size), static_cast<std::uint64_t>(st.st_ino)};
}

TokenFile::TokenFile(std::filesystem::path path, std::chrono::milliseconds maxAge)
    : path_(std::move(path)), maxAge_(maxAge) {
  std::lock_guard lock(mutex_);
  if (!readLocked()) {
    std::string content;
    std::string why;
    if (!readFile(path_, content, why))
      throw ConfigError("cannot read token file " + path_.string() + ": " + why);
    throw ConfigError("token file " + path_.string() + " is empty");
  }
}

bool TokenFile::readLocked() {
  const Stamp stamp = stampOf(path_);
  readAt_ = std::chrono::steady_clock::now();
  stamp_ = stamp; // also on failure: do not retry on every call, only on change or maxAge
  std::string content;
  std::string why;
  if (!readFile(path_, content, why))
    return false;
  content = trim(std::move(content));
  if (content.empty())
    return false;
  token_ = std::move(content);
  ++reads_;
  return true;
}

std::string TokenFile::token() {
  std::lock_guard lock(mutex_);
  const bool stale = std::chrono::steady_clock::now() - readAt_ >= maxAge_;
  if (stale || stampOf(path_) != stamp_)
    readLocked();
  return token_;
}

std::uint64_t TokenFile::reads() const {
  std::lock_guard lock(mutex_);
  return reads_;
}

std::string Config::bearerToken() const {
  if (!token.empty())
    return token;
  return tokenFile ? tokenFile->token() : std::string();
}

// --- kubeconfig ------------------------------------------------------------------------------

Config parseKubeconfig(std::string_view text, const std::filesystem::path& baseDir,
                       const std::string& context, const std::string& origin) {
  std::vector<Json> docs;
  try {
    docs = api::parseYaml(text);
  } catch (const std::exception& e) {
    throw ConfigError("kubeconfig " + origin + ": not valid YAML: " + e.what());
  }
  if (docs.empty())
    throw ConfigError("kubeconfig " + origin + ": is empty");
  if (docs.size() > 1)
    throw ConfigError("kubeconfig " + origin + ": holds " + std::to_string(docs.size()) +
                      " YAML documents, expected one");
  return KubeconfigReader(docs.front(), baseDir, origin).read(context);
}

Config loadKubeconfig(const std::filesystem::path& path, const std::string& context) {
  std::string text;
  std::string why;
  if (!readFile(path, text, why))
    throw ConfigError("kubeconfig " + path.string() + ": cannot read: " + why);
  const fs::path absolute = fs::absolute(path);
  return parseKubeconfig(text, absolute.parent_path(), context, path.string());
}

// --- in-cluster ------------------------------------------------------------------------------

bool inClusterEnvironment() {
  return !getenvString("KUBERNETES_SERVICE_HOST").empty() &&
         !getenvString("KUBERNETES_SERVICE_PORT").empty();
}

Config inClusterConfig(const InClusterOptions& options) {
  const std::string host =
      options.host.empty() ? getenvString("KUBERNETES_SERVICE_HOST") : options.host;
  const std::string port =
      options.port.empty() ? getenvString("KUBERNETES_SERVICE_PORT") : options.port;
  if (host.empty())
    throw ConfigError("in-cluster configuration: KUBERNETES_SERVICE_HOST is not set");
  if (port.empty())
    throw ConfigError("in-cluster configuration: KUBERNETES_SERVICE_PORT is not set");
  Config config;
  config.origin = "in-cluster service account (" + options.dir.string() + ")";
  const bool v6 = host.find(':') != std::string::npos;
  config.server = "https://" + (v6 ? "[" + host + "]" : host) + ":" + port;
  try {
    (void)ServerUrl::parse(config.server);
  } catch (const ConfigError& e) {
    throw ConfigError("in-cluster configuration: " + std::string(e.what()));
  }
  try {
    config.tokenFile = std::make_shared<TokenFile>(options.dir / "token", options.tokenMaxAge);
  } catch (const ConfigError& e) {
    throw ConfigError("in-cluster configuration: " + std::string(e.what()));
  }
  const fs::path ca = options.dir / "ca.crt";
  std::string why;
  if (!readFile(ca, config.caPem, why))
    throw ConfigError("in-cluster configuration: cannot read " + ca.string() + ": " + why);
  if (auto bad = detail::checkCertificates(config.caPem); !bad.empty())
    throw ConfigError("in-cluster configuration: " + ca.string() + ": " + bad);
  std::string ns;
  if (readFile(options.dir / "namespace", ns, why) && !trim(ns).empty())
    config.defaultNamespace = trim(ns);
  return config;
}

Config loadDefault(const std::filesystem::path& explicitPath, const std::string& context) {
  if (!explicitPath.empty())
    return loadKubeconfig(explicitPath, context);
  if (const std::string env = getenvString("KUBECONFIG"); !env.empty()) {
    // kubectl merges the list; we take the first file that exists.
    std::string tried;
    std::size_t start = 0;
    while (start <= env.size()) {
      const auto colon = env.find(':', start);
      const std::string entry =
          env.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!entry.empty()) {
        if (fs::exists(entry))
          return loadKubeconfig(entry, context);
        tried += (tried.empty() ? "" : ", ") + entry;
      }
      if (colon == std::string::npos)
        break;
      start = colon + 1;
    }
    if (!tried.empty())
      throw ConfigError("$KUBECONFIG names no existing file (" + tried + ")");
  }
  if (inClusterEnvironment())
    return inClusterConfig();
  const std::string home = getenvString("HOME");
  const fs::path fallback = home.empty() ? fs::path() : fs::path(home) / ".kube" / "config";
  if (!fallback.empty() && fs::exists(fallback))
    return loadKubeconfig(fallback, context);
  throw ConfigError(
      "no Kubernetes configuration: no kubeconfig was given, $KUBECONFIG is not "
      "set, KUBERNETES_SERVICE_HOST/PORT are not set (not in a cluster) and " +
      (fallback.empty() ? std::string("$HOME is not set") : fallback.string() + " does not exist"));
}

} // namespace csiop::kube
