#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>

#include <openssl/evp.h>

#include <csiop/kube/config.hpp>

#include "test_pki.hpp"

namespace csiop::kube {
namespace {

namespace fs = std::filesystem;
using testing::TestPki;

std::string base64(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0'); // and the NUL it writes
  const int length = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                     reinterpret_cast<const unsigned char*>(in.data()),
                                     static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(length));
  return out;
}

const TestPki& pki() {
  static const TestPki instance;
  return instance;
}
const testing::KeyPair& clientPair() {
  static const auto pair = pki().client("admin");
  return pair;
}

class TempDir {
public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() /
            ("csiop-kube-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, std::string_view content) const {
    const fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
    return p;
  }

private:
  fs::path path_;
};

// Sets an environment variable for the scope.
class ScopedEnv {
public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name))
      old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string dataKubeconfig() {
  return "apiVersion: v1\nkind: Config\n"
         "clusters:\n"
         "- name: prod\n  cluster:\n    server: https://10.0.0.1:6443\n"
         "    certificate-authority-data: " +
         base64(pki().caPem()) +
         "\n"
         "- name: dev\n  cluster:\n    server: https://dev.example.com\n"
         "    insecure-skip-tls-verify: true\n"
         "users:\n"
         "- name: admin\n  user:\n    client-certificate-data: " +
         base64(clientPair().certPem) + "\n    client-key-data: " + base64(clientPair().keyPem) +
         "\n"
         "- name: dev-user\n  user:\n    token: dev-token\n"
         "contexts:\n"
         "- name: prod\n  context: {cluster: prod, user: admin}\n"
         "- name: dev\n  context: {cluster: dev, user: dev-user, namespace: team-a}\n"
         "current-context: prod\n";
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

TEST(Kubeconfig, CurrentContextWithInlineData) {
  const Config c = parseKubeconfig(dataKubeconfig(), "/nowhere", "", "test.yaml");
  EXPECT_EQ(c.server, "https://10.0.0.1:6443");
  EXPECT_EQ(c.caPem, pki().caPem());
  EXPECT_EQ(c.clientCertPem, clientPair().certPem);
  EXPECT_EQ(c.clientKeyPem, clientPair().keyPem);
  EXPECT_EQ(c.bearerToken(), "");
  EXPECT_FALSE(c.insecureSkipTlsVerify);
  EXPECT_EQ(c.defaultNamespace, "default");
  EXPECT_EQ(c.origin, "kubeconfig test.yaml context prod");
}

TEST(Kubeconfig, NamedContextWithTokenNamespaceAndInsecure) {
  const Config c = parseKubeconfig(dataKubeconfig(), "/nowhere", "dev");
  EXPECT_EQ(c.server, "https://dev.example.com");
  EXPECT_TRUE(c.insecureSkipTlsVerify);
  EXPECT_TRUE(c.caPem.empty());
  EXPECT_EQ(c.bearerToken(), "dev-token");
  EXPECT_EQ(c.defaultNamespace, "team-a");
}

TEST(Kubeconfig, UnknownContextListsTheKnownOnes) {
  EXPECT_EQ(errorOf([] { parseKubeconfig(dataKubeconfig(), "/", "staging", "k.yaml"); }),
            "kubeconfig k.yaml: context 'staging' not found in 'contexts' (has: prod, dev)");
}

TEST(Kubeconfig, FilesAreResolvedAgainstTheKubeconfigDirectory) {
  TempDir dir;
  dir.write("pki/ca.crt", pki().caPem());
  dir.write("pki/admin.crt", clientPair().certPem);
  const fs::path key = dir.write("elsewhere/admin.key", clientPair().keyPem);
  dir.write("token", "file-token\n");
  const fs::path kubeconfig =
      dir.write("conf/kubeconfig",
                "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n"
                "    certificate-authority: ../pki/ca.crt\n"
                "users:\n- name: u\n  user:\n    client-certificate: ../pki/admin.crt\n"
                "    client-key: " +
                    key.string() +
                    "\n    tokenFile: ../token\n"
                    "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n");
  const Config c = loadKubeconfig(kubeconfig);
  EXPECT_EQ(c.caPem, pki().caPem());
  EXPECT_EQ(c.clientCertPem, clientPair().certPem);
  EXPECT_EQ(c.clientKeyPem, clientPair().keyPem);
  ASSERT_TRUE(c.tokenFile);
  EXPECT_EQ(c.tokenFile->path(), dir.path() / "conf" / ".." / "token");
  EXPECT_EQ(c.bearerToken(), "file-token");
}

TEST(Kubeconfig, DataWinsOverFile) {
  const std::string text = "clusters:\n- name: c\n  cluster:\n    server: https://h\n"
                           "    certificate-authority: /does/not/exist\n"
                           "    certificate-authority-data: " +
                           base64(pki().caPem()) +
                           "\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                           "current-context: x\n";
  EXPECT_EQ(parseKubeconfig(text, "/").caPem, pki().caPem());
}

TEST(Kubeconfig, DataMayBeWrappedAndUnpadded) {
  std::string ca = pki().caPem();
  while (ca.size() % 3 == 0)
    ca += "\n"; // so that its base64 has padding to leave out
  std::string encoded = base64(ca);
  ASSERT_TRUE(encoded.ends_with('='));
  while (encoded.ends_with('='))
    encoded.pop_back();
  std::string wrapped; // as `base64 -w 64` prints it, in a YAML literal block
  for (std::size_t at = 0; at < encoded.size(); at += 64)
    wrapped += "      " + encoded.substr(at, 64) + "\n";
  const std::string text = "clusters:\n- name: c\n  cluster:\n    server: https://h\n"
                           "    certificate-authority-data: |\n" +
                           wrapped +
                           "contexts:\n- name: x\n  context: {cluster: c}\n"
                           "current-context: x\n";
  EXPECT_EQ(parseKubeconfig(text, "/").caPem, ca);
}

struct BadKubeconfig {
  const char* name;
  std::string text;
  std::string error;
};

std::string cluster(const std::string& body) {
  return "clusters:\n- name: c\n  cluster:\n" + body +
         "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
}
std::string withUser(const std::string& body) {
  return cluster("    server: https://h\n") + "users:\n- name: u\n  user:\n" + body;
}

TEST(Kubeconfig, MalformedOrIncompleteGivesClearErrors) {
  const std::vector<BadKubeconfig> cases = {
      {"yaml", "clusters: [", "kubeconfig k: not valid YAML: "},
      {"empty", "", "kubeconfig k: is empty"},
      {"scalar", "hello", "kubeconfig k: is not a YAML mapping"},
      {"no current context", "clusters: []\n",
       "kubeconfig k: current-context is not set (and no context was requested)"},
      {"no contexts", "current-context: x\n", "kubeconfig k: has no 'contexts' (looking for 'x')"},
      {"contexts not a list", "current-context: x\ncontexts: {x: 1}\n",
       "kubeconfig k: 'contexts' must be a list"},
      {"context without body", "current-context: x\ncontexts:\n- name: x\n",
       "kubeconfig k: context 'x': has no 'context' mapping"},
      {"context without cluster", "current-context: x\ncontexts:\n- name: x\n  context: {}\n",
       "kubeconfig k: context 'x': names no cluster (key 'cluster')"},
      {"missing cluster",
       "current-context: x\ncontexts:\n- name: x\n  context: {cluster: gone}\nclusters: []\n",
       "kubeconfig k: cluster 'gone' not found in 'clusters' (empty)"},
      {"no server", cluster("    insecure-skip-tls-verify: true\n"),
       "kubeconfig k: cluster 'c': has no 'server'"},
      {"server not a string", cluster("    server: [1]\n"),
       "kubeconfig k: cluster 'c': 'server' must be a string"},
      {"bad server", cluster("    server: 10.0.0.1:6443\n"),
       "kubeconfig k: cluster 'c': server URL '10.0.0.1:6443': must start with https:// or "
       "http://"},
      {"insecure not a bool",
       cluster("    server: https://h\n    insecure-skip-tls-verify: "
               "'yes'\n"),
       "kubeconfig k: cluster 'c': 'insecure-skip-tls-verify' must be true or false"},
      {"insecure with ca",
       cluster("    server: https://h\n    insecure-skip-tls-verify: true\n"
               "    certificate-authority-data: " +
               base64(pki().caPem()) + "\n"),
       "kubeconfig k: cluster 'c': a certificate authority together with "
       "insecure-skip-tls-verify is not allowed"},
      {"bad base64", cluster("    server: https://h\n    certificate-authority-data: '***'\n"),
       "kubeconfig k: cluster 'c': 'certificate-authority-data' is not valid base64"},
      {"base64 after padding",
       cluster("    server: https://h\n    certificate-authority-data: 'aGVsbG8=aGVs'\n"),
       "kubeconfig k: cluster 'c': 'certificate-authority-data' is not valid base64"},
      {"base64 padding too long",
       cluster("    server: https://h\n    certificate-authority-data: 'aGVsbA==='\n"),
       "kubeconfig k: cluster 'c': 'certificate-authority-data' is not valid base64"},
      {"base64 lone character",
       cluster("    server: https://h\n    certificate-authority-data: 'aGVsbG8ha'\n"),
       "kubeconfig k: cluster 'c': 'certificate-authority-data' is not valid base64"},
      {"base64 url alphabet",
       cluster("    server: https://h\n    certificate-authority-data: 'aGVs-_8h'\n"),
       "kubeconfig k: cluster 'c': 'certificate-authority-data' is not valid base64"},
      {"base64 without padding decodes",
       cluster("    server: https://h\n    certificate-authority-data: aGVsbG8\n"),
       "kubeconfig k: cluster 'c': certificate-authority: not a PEM certificate"},
      {"ca not pem",
       cluster("    server: https://h\n    certificate-authority-data: " + base64("hello") + "\n"),
       "kubeconfig k: cluster 'c': certificate-authority: not a PEM certificate"},
      {"missing ca file", cluster("    server: https://h\n    certificate-authority: ca.crt\n"),
       "kubeconfig k: cluster 'c': 'certificate-authority': cannot read /base/ca.crt: No such "
       "file or directory"},
      {"proxy", cluster("    server: https://h\n    proxy-url: http://proxy:3128\n"),
       "kubeconfig k: cluster 'c': 'proxy-url' is not supported"},
      {"missing user", cluster("    server: https://h\n"),
       "kubeconfig k: has no 'users' (looking for 'u')"},
      {"cert without key",
       withUser("    client-certificate-data: " + base64(clientPair().certPem) + "\n"),
       "kubeconfig k: user 'u': has a client-certificate but no client-key"},
      {"key without cert", withUser("    client-key-data: " + base64(clientPair().keyPem) + "\n"),
       "kubeconfig k: user 'u': has a client-key but no client-certificate"},
      {"key not pem",
       withUser("    client-certificate-data: " + base64(clientPair().certPem) +
                "\n    client-key-data: " + base64("nope") + "\n"),
       "kubeconfig k: user 'u': client-key: not a PEM private key"},
      {"key of another cert",
       withUser("    client-certificate-data: " + base64(clientPair().certPem) +
                "\n    client-key-data: " + base64(pki().client("other").keyPem) + "\n"),
       "kubeconfig k: user 'u': the private key does not belong to the client certificate"},
      {"exec", withUser("    exec: {command: aws}\n"),
       "kubeconfig k: user 'u': exec credential plugins are not supported"},
      {"auth provider", withUser("    auth-provider: {name: gcp}\n"),
       "kubeconfig k: user 'u': auth-provider plugins are not supported"},
      {"basic auth", withUser("    username: a\n    password: b\n"),
       "kubeconfig k: user 'u': basic authentication (username/password) is not supported"},
      {"token not a string", withUser("    token: {a: 1}\n"),
       "kubeconfig k: user 'u': 'token' must be a string"},
      {"missing token file", withUser("    tokenFile: /no/such/token\n"),
       "kubeconfig k: user 'u': tokenFile: cannot read token file /no/such/token: No such file "
       "or directory"},
  };
  for (const auto& c : cases) {
    const std::string error = errorOf([&] { parseKubeconfig(c.text, "/base", "", "k"); });
    EXPECT_EQ(error.substr(0, c.error.size()), c.error) << c.name << "\n" << error;
  }
}

TEST(Kubeconfig, LoadNamesTheFile) {
  EXPECT_EQ(errorOf([] { loadKubeconfig("/no/such/kubeconfig"); }),
            "kubeconfig /no/such/kubeconfig: cannot read: No such file or directory");
  TempDir dir;
  const auto path = dir.write("kc", "current-context: x\n");
  EXPECT_EQ(errorOf([&] { loadKubeconfig(path); }),
            "kubeconfig " + path.string() + ": has no 'contexts' (looking for 'x')");
}

// --- in-cluster ------------------------------------------------------------------------------

TEST(InCluster, ReadsTheServiceAccountFiles) {
  TempDir dir;
  dir.write("token", "sa-token\n");
  dir.write("ca.crt", pki().caPem());
  dir.write("namespace", "csi-system\n");
  const Config c = inClusterConfig({.host = "10.96.0.1", .port = "443", .dir = dir.path()});
  EXPECT_EQ(c.server, "https://10.96.0.1:443");
  EXPECT_EQ(c.caPem, pki().caPem());
  EXPECT_EQ(c.bearerToken(), "sa-token");
  EXPECT_EQ(c.defaultNamespace, "csi-system");
  EXPECT_EQ(inClusterConfig({.host = "fd00::1", .port = "443", .dir = dir.path()}).server,
            "https://[fd00::1]:443");
}

TEST(InCluster, UsesTheEnvironmentAndNamesWhatIsMissing) {
  TempDir dir;
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", nullptr);
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
    EXPECT_FALSE(inClusterEnvironment());
    EXPECT_EQ(errorOf([&] { inClusterConfig({.dir = dir.path()}); }),
              "in-cluster configuration: KUBERNETES_SERVICE_HOST is not set");
  }
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "6443");
  EXPECT_TRUE(inClusterEnvironment());
  EXPECT_EQ(errorOf([&] { inClusterConfig({.dir = dir.path()}); }),
            "in-cluster configuration: cannot read token file " + (dir.path() / "token").string() +
                ": No such file or directory");
  dir.write("token", "t");
  EXPECT_EQ(errorOf([&] { inClusterConfig({.dir = dir.path()}); }),
            "in-cluster configuration: cannot read " + (dir.path() / "ca.crt").string() +
                ": No such file or directory");
  dir.write("ca.crt", pki().caPem());
  const Config c = inClusterConfig({.dir = dir.path()}); // no namespace file: "default"
  EXPECT_EQ(c.server, "https://10.96.0.1:6443");
  EXPECT_EQ(c.defaultNamespace, "default");
  dir.write("token", "");
  EXPECT_EQ(errorOf([&] { inClusterConfig({.dir = dir.path()}); }),
            "in-cluster configuration: token file " + (dir.path() / "token").string() +
                " is empty");
}

TEST(TokenFile, RereadsWhenTheFileChanges) {
  TempDir dir;
  const auto path = dir.write("token", "one\n");
  TokenFile file(path, std::chrono::hours(1));
  EXPECT_EQ(file.token(), "one");
  EXPECT_EQ(file.token(), "one");
  EXPECT_EQ(file.reads(), 1u); // unchanged: not read again

  dir.write("token", "two-two"); // new size and mtime
  EXPECT_EQ(file.token(), "two-two");
  EXPECT_EQ(file.reads(), 2u);

  // Same size, only the modification time moves on.
  dir.write("token", "three-3");
  fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds(5));
  EXPECT_EQ(file.token(), "three-3");
  EXPECT_EQ(file.reads(), 3u);
}

TEST(TokenFile, FollowsKubeletsAtomicSymlinkSwap) {
  // Projected volumes: token -> ..data/token, ..data -> ..<timestamp>; a rotation writes a new
  // directory and renames a new ..data link over the old one.
  TempDir dir;
  dir.write("..v1/token", "first");
  fs::create_directory_symlink("..v1", dir.path() / "..data");
  fs::create_symlink("..data/token", dir.path() / "token");
  TokenFile file(dir.path() / "token", std::chrono::hours(1));
  EXPECT_EQ(file.token(), "first");

  dir.write("..v2/token", "secnd"); // same size
  fs::create_directory_symlink("..v2", dir.path() / "..data_tmp");
  fs::rename(dir.path() / "..data_tmp", dir.path() / "..data");
  EXPECT_EQ(file.token(), "secnd"); // another inode
}

TEST(TokenFile, RereadsAfterMaxAgeEvenIfNothingSeemsChanged) {
  TempDir dir;
  const auto path = dir.write("token", "aaa");
  TokenFile file(path, std::chrono::milliseconds(0));
  EXPECT_EQ(file.token(), "aaa");
  EXPECT_EQ(file.token(), "aaa");
  EXPECT_GE(file.reads(), 3u); // constructor + every call
}

TEST(TokenFile, KeepsTheLastGoodTokenIfTheFileVanishes) {
  TempDir dir;
  const auto path = dir.write("token", "good");
  TokenFile file(path, std::chrono::milliseconds(0));
  fs::remove(path);
  EXPECT_EQ(file.token(), "good");
  dir.write("token", "");
  EXPECT_EQ(file.token(), "good");
  dir.write("token", "better");
  EXPECT_EQ(file.token(), "better");
}

// --- loadDefault -----------------------------------------------------------------------------

TEST(LoadDefault, ExplicitThenKubeconfigEnvThenInClusterThenHome) {
  TempDir dir;
  const auto explicitPath = dir.write("explicit", dataKubeconfig());
  const auto envPath = dir.write("env", withUser("    token: from-env\n"));
  const auto homePath = dir.write("home/.kube/config", withUser("    token: from-home\n"));
  ScopedEnv home("HOME", (dir.path() / "home").c_str());
  ScopedEnv host("KUBERNETES_SERVICE_HOST", nullptr);
  ScopedEnv port("KUBERNETES_SERVICE_PORT", nullptr);
  {
    const std::string list = "/missing/one::" + envPath.string() + ":" + explicitPath.string();
    ScopedEnv kubeconfig("KUBECONFIG", list.c_str());
    EXPECT_EQ(loadDefault(explicitPath).server, "https://10.0.0.1:6443");
    EXPECT_EQ(loadDefault(explicitPath, "dev").server, "https://dev.example.com");
    EXPECT_EQ(loadDefault().bearerToken(), "from-env"); // first existing entry
  }
  {
    ScopedEnv kubeconfig("KUBECONFIG", "/missing/a:/missing/b");
    EXPECT_EQ(errorOf([] { loadDefault(); }),
              "$KUBECONFIG names no existing file (/missing/a, /missing/b)");
  }
  ScopedEnv kubeconfig("KUBECONFIG", nullptr);
  EXPECT_EQ(loadDefault().bearerToken(), "from-home");
  {
    // In a pod (the environment says so) in-cluster wins over ~/.kube/config; here the
    // service account files are missing, and the error says which.
    ScopedEnv inHost("KUBERNETES_SERVICE_HOST", "10.96.0.1");
    ScopedEnv inPort("KUBERNETES_SERVICE_PORT", "443");
    EXPECT_EQ(errorOf([] { loadDefault(); }).substr(0, 60),
              std::string("in-cluster configuration: cannot read token file "
                          "/var/run/secrets/kubernetes.io/serviceaccount/token")
                  .substr(0, 60));
  }
  fs::remove(homePath);
  EXPECT_EQ(errorOf([] { loadDefault(); }),
            "no Kubernetes configuration: no kubeconfig was given, $KUBECONFIG is not set, "
            "KUBERNETES_SERVICE_HOST/PORT are not set (not in a cluster) and " +
                homePath.string() + " does not exist");
}

} // namespace
} // namespace csiop::kube
