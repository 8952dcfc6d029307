// Where the API server is and how to authenticate: from a kubeconfig or in-cluster.
//
//   auto config = loadDefault(flagPath);   // flag, else $KUBECONFIG, else in-cluster, else
//                                          // ~/.kube/config
//
// Supported kubeconfig user credentials: client certificate + key (file or -data), bearer
// token or tokenFile. exec / auth-provider plugins, basic auth and proxy-url are rejected with
// a ConfigError that says so. Relative file paths are resolved against the kubeconfig's
// directory, as kubectl does.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <csiop/kube/errors.hpp>

namespace csiop::kube {

// A bearer token kept in a file that is rotated underneath us (projected service account
// tokens are replaced about every hour). token() re-reads the file when its modification time,
// size or inode changed, and in any case when maxAge passed since the last read. If a re-read
// fails, the last good token is kept. Thread-safe.
class TokenFile {
public:
  // Reads the file now; throws ConfigError naming the file if it is missing or empty.
  explicit TokenFile(std::filesystem::path path,
                     std::chrono::milliseconds maxAge = std::chrono::minutes(1));

  std::string token();
  const std::filesystem::path& path() const noexcept { return path_; }
  std::uint64_t reads() const; // how often the file was read (tests, debugging)

private:
  struct Stamp {
    std::int64_t mtimeNs = 0;
    std::int64_t size = -1;
    std::uint64_t inode = 0;
    bool operator==(const Stamp&) const = default;
  };
  bool readLocked(); // false if unreadable or empty
  static Stamp stampOf(const std::filesystem::path& path);

  std::filesystem::path path_;
  std::chrono::milliseconds maxAge_;
  mutable std::mutex mutex_;
  std::string token_;
  Stamp stamp_;
  std::chrono::steady_clock::time_point readAt_;
  std::uint64_t reads_ = 0;
};

struct Config {
  std::string server = {};        // https://host[:port][/prefix] (http:// for plain HTTP)
  std::string caPem = {};         // trusted CA certificates; empty: the system's trust store
  std::string clientCertPem = {}; // client certificate (chain), PEM
  std::string clientKeyPem = {};  // its private key, PEM
  std::string token = {};         // static bearer token
  std::shared_ptr<TokenFile> tokenFile = {}; // bearer token from a rotating file (if no token)
  std::string tlsServerName = {};     // name to verify the server certificate against (and SNI)
  bool insecureSkipTlsVerify = false; // only when the kubeconfig says so explicitly
  std::string defaultNamespace = "default"; // context namespace / in-cluster namespace file
  std::string origin = {}; // where this came from, for messages: "kubeconfig <path> context <name>"

  // The bearer token to send ("" for none): token, else tokenFile's current content.
  std::string bearerToken() const;
};

// Parses a kubeconfig. context empty: current-context. baseDir resolves relative file paths;
// origin names the source in error messages (e.g. the file name).
Config parseKubeconfig(std::string_view text, const std::filesystem::path& baseDir,
                       const std::string& context = {}, const std::string& origin = "kubeconfig");
Config loadKubeconfig(const std::filesystem::path& path, const std::string& context = {});

struct InClusterOptions {
  std::string host = {}; // empty: $KUBERNETES_SERVICE_HOST
  std::string port = {}; // empty: $KUBERNETES_SERVICE_PORT
  std::filesystem::path dir = "/var/run/secrets/kubernetes.io/serviceaccount"; // token, ca.crt,
                                                                               // namespace
  std::chrono::milliseconds tokenMaxAge = std::chrono::minutes(1);
};
// True if KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are both set.
bool inClusterEnvironment();
// Throws ConfigError naming the missing variable or file. The namespace file is optional.
Config inClusterConfig(const InClusterOptions& options = {});

// explicitPath if not empty, else the first entry of $KUBECONFIG, else in-cluster if
// inClusterEnvironment(), else ~/.kube/config. context applies to kubeconfigs.
Config loadDefault(const std::filesystem::path& explicitPath = {}, const std::string& context = {});

} // namespace csiop::kube
