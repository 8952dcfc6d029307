#include <csiop/app/start_up.hpp>

#include <chrono>
#include <malloc.h>
#include <memory>
#include <stdexcept>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <csiop/api/embedded_fields.hpp>
#include <csiop/api/kube_schema.hpp>
#include <csiop/api/yaml.hpp>
#include <csiop/crds.hpp>
#include <csiop/driverdeployment/csi_driver_decision.hpp>
#include <csiop/kube/attempt.hpp>

namespace csiop::app {

namespace asio = boost::asio;
using kube::Json;

namespace {

asio::awaitable<void> sleepFor(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  boost::system::error_code ec;
  co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

} // namespace

asio::awaitable<void> installCrds(kube::Client& client, std::string_view yaml) {
  for (Json crd : api::parseYaml(yaml)) {
    const std::string name = crd["metadata"]["name"];
    co_await client.apply(kube::resources::customresourcedefinitions, std::move(crd));
    for (int i = 0; i < 300; ++i) {
      const Json live = co_await client.get(kube::resources::customresourcedefinitions, "", name);
      bool established = false;
      for (const auto& c :
           live.value("status", Json::object()).value("conditions", Json::array())) {
        established |= c.value("type", "") == "Established" && c.value("status", "") == "True";
      }
      if (established) {
        spdlog::info("CRD {} installed and established", name);
        break;
      }
      co_await sleepFor(std::chrono::milliseconds(100));
    }
  }
}

asio::awaitable<const kube::ResourceRef*> discoverCsiDriverApi(kube::Client& client,
                                                               bool mayInstall) {
  namespace r = kube::resources;
  if (co_await client.serves(r::csidrivers.group, r::csidrivers.version, r::csidrivers.resource)) {
    co_return &r::csidrivers;
  }
  const auto& legacy = r::legacyCsidrivers;
  if (!co_await client.serves(legacy.group, legacy.version, legacy.resource)) {
    if (!mayInstall) {
      throw std::runtime_error(
          "the cluster serves neither storage.k8s.io/v1 nor csi.storage.k8s.io/v1alpha1 "
          "CSIDriver; install crds/legacy/csidrivers.csi.storage.k8s.io.yaml or run without "
          "--no-install-crds");
    }
    spdlog::warn("storage.k8s.io/v1 CSIDriver is not served; installing the legacy "
                 "csidrivers.csi.storage.k8s.io (v1alpha1) CRD");
    co_await installCrds(client, embedded::legacyCsiDriverCrdYaml());
  }
  spdlog::info("using the legacy csi.storage.k8s.io/v1alpha1 CSIDriver API");
  co_return &legacy;
}

asio::awaitable<std::optional<kube::VersionInfo>> serverVersion(kube::Client& client) {
  auto version = co_await kube::attempt(client.version());
  if (!version) {
    spdlog::warn("the API server's version could not be read ({}); assuming a current one",
                 version.message());
    co_return std::nullopt;
  }
  const std::optional<int> minor = driverdeployment::serverMinorVersion(version->minor);
  if (!minor) {
    spdlog::warn("the API server's minor version \"{}\" is not a number; assuming a current one",
                 version->minor);
  } else {
    spdlog::info("API server {} (minor {})", version->gitVersion, *minor);
  }
  co_return std::move(*version);
}

std::optional<int> serverMinor(const std::optional<kube::VersionInfo>& version) {
  return version ? driverdeployment::serverMinorVersion(version->minor) : std::nullopt;
}

asio::awaitable<void> useServedKubeSchema(kube::Client& client,
                                          const std::optional<kube::VersionInfo>& version) {
  const std::string embedded = api::embeddedKubeSchemaVersion(); // not compiled: unused
  if (!version || version->gitVersion == embedded) {
    co_return; // the embedded schema is the server's (or nothing better is known)
  }
  try {
    // The index names each group version's document with its hash (a cacheable URL).
    const api::Json index = co_await client.getPath("/openapi/v3");
    const api::Json& paths = index.at("paths");
    std::vector<api::Json> documents;
    for (const char* groupVersion : api::kKubeSchemaDocuments) {
      const auto path = paths.find(groupVersion);
      if (path == paths.end()) {
        throw std::runtime_error(std::string("the server lists no OpenAPI document for ") +
                                 groupVersion);
      }
      api::Json document =
          co_await client.getPath(path->at("serverRelativeURL").get<std::string>());
      // Only the schemas (what the subset reads), not the paths: less memory held while the
      // next document is read.
      api::Json schemas = std::move(document.at("components").at("schemas"));
      document = api::Json();
      documents.push_back(api::Json{{"components", {{"schemas", std::move(schemas)}}}});
    }
    api::Json subset =
        api::kubeSchemaSubset(documents, api::embeddedDefinitionRoots(), version->gitVersion);
    documents.clear();
    const std::size_t definitions = subset.at("definitions").size();
    api::useKubeSchema(
        std::make_shared<const api::KubeSchema>(api::KubeSchema::fromSubset(subset)));
    subset = api::Json();
    ::malloc_trim(0); // the documents' memory (megabytes) back to the system at once
    spdlog::info("embedded Kubernetes objects are checked against the API server's {} schema "
                 "({} definitions) instead of the built-in {}",
                 version->gitVersion, definitions, embedded);
  } catch (const std::exception& e) {
    spdlog::warn("the API server's {} schema could not be read ({}); embedded Kubernetes objects "
                 "are checked against the built-in {} schema",
                 version->gitVersion, e.what(), embedded);
  }
}

} // namespace csiop::app
