// The operator's Kubernetes client: typed verbs over JSON objects.
//
//   boost::asio::io_context io;
//   Client client(io.get_executor(), loadDefault());
//   co_spawn(io, [&]() -> awaitable<void> {
//     Json cm = co_await client.get(resources::configmaps, "ns", "name");
//     co_await client.apply(resources::configmaps, desired);   // server-side apply
//   }, detached);
//
// Every verb is an awaitable that throws ApiError (non-2xx answers) or TransportError (no
// answer). Arguments are taken by value: the coroutine keeps its own copies, so temporaries
// are safe. Write verbs read the namespace and name from the object's metadata.
//
// Options are aggregates of views and scalars, for designated initializers right in the call:
//   auto page = co_await client.list(resources::pods, "ns", {.labelSelector = selector});
// Their strings are std::string_view: what they view must outlive the co_await (temporaries
// created in the co_await expression do). They are trivially copyable on purpose: GCC 12
// destroys an aggregate temporary created inside a co_await expression twice, which corrupts
// the heap when the aggregate owns memory (std::string members; also a defaulted `= {}`
// argument). Keep any aggregate you pass into a co_await free of owning members, or name it
// first. Json braced lists inside co_await do not compile with GCC 12 ("array used as
// initializer"); build the object first.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <csiop/kube/config.hpp>
#include <csiop/kube/errors.hpp>
#include <csiop/kube/http.hpp>
#include <csiop/kube/resource.hpp>
#include <csiop/kube/watch.hpp>

namespace csiop::kube {

// Called after every API request (also failed ones): the verb ("get", "list", "create",
// "apply", "patch", "update", "delete", "watch", "discovery", "version"), the resource
// (plural, "" for non-resource requests), the HTTP code (0: no response, TransportError) and
// how long it took (for a watch: until the response headers).
using RequestObserver = std::function<void(std::string_view verb, std::string_view resource,
                                           int httpCode, std::chrono::nanoseconds duration)>;

// Told of each warning the API server answers a request with (warning_header.hpp): the verb,
// the resource (plural), the object's namespace and name as the request named them ("" where
// it named none) and the warning's text. Not for watches, whose warnings come once per stream.
using WarningObserver =
    std::function<void(std::string_view verb, std::string_view resource, std::string_view ns,
                       std::string_view name, std::string_view text)>;

struct ClientOptions {
  std::string fieldManager = "csi-operator";
  HttpOptions http = {};
  RequestObserver observer = {};
  WarningObserver warnings = {};
};

// Where a write's caller wants that request's warnings too (appended; the observer hears them
// either way). A pointer, so that the options stay trivially copyable (see above).
using Warnings = std::vector<std::string>;

struct GetOptions {
  std::string_view resourceVersion = {}; // "" : most recent; "0": any (may be served from cache)
  std::string_view subresource = {};     // e.g. "status", "scale"
};

struct LogOptions {
  std::string_view container = {}; // "" : the pod's only container
  std::int64_t tailLines = 0;      // the last lines only; 0: all
  std::int64_t limitBytes = 0;     // at most this much; 0: no limit
  bool previous = false;           // the last terminated instance of the container
  // The whole request (the API server asks the node's kubelet, which may not answer at all).
  std::chrono::milliseconds timeout = std::chrono::seconds(5);
};

struct ListOptions {
  std::string_view labelSelector = {}; // e.g. "app=x,tier in (a,b)"
  std::string_view fieldSelector = {}; // e.g. "metadata.name=x"
  std::string_view resourceVersion = {};
  std::string_view resourceVersionMatch = {}; // "", "NotOlderThan", "Exact"
  std::int64_t limit = 0;                     // page size; 0: everything (list), 500 (listAll)
  std::string_view continueToken = {};        // from the previous page
  const FieldMask* fields = nullptr;          // what to build of each item (nullptr: all)
};

struct ListResult {
  std::vector<Json> items = {};
  std::string resourceVersion = {}; // of the list
  std::string continueToken = {};   // "" on the last page
  std::optional<std::int64_t> remainingItemCount = {};
};

struct CreateOptions {
  bool dryRun = false;
  std::string_view fieldManager = {};    // "" : the client's
  std::string_view fieldValidation = {}; // "", "Ignore", "Warn", "Strict"
  Warnings* warnings = nullptr;          // this request's warnings are appended here too
};

struct ApplyOptions {
  bool dryRun = false;
  bool force = true; // take over fields other managers own
  std::string_view fieldManager = {};
  std::string_view fieldValidation = {};
  std::string_view subresource = {}; // e.g. "status"
  Warnings* warnings = nullptr;      // this request's warnings are appended here too
};

enum class PatchType {
  Merge,          // application/merge-patch+json (RFC 7386)
  JsonPatch,      // application/json-patch+json (RFC 6902)
  StrategicMerge, // application/strategic-merge-patch+json (built-in types only)
};

struct PatchOptions {
  bool dryRun = false;
  std::string_view fieldManager = {};
  std::string_view fieldValidation = {};
  std::string_view subresource = {};
  Warnings* warnings = nullptr; // this request's warnings are appended here too
};

struct UpdateOptions {
  bool dryRun = false;
  std::string_view fieldManager = {};
  std::string_view fieldValidation = {};
  std::string_view subresource = {}; // e.g. "status"
  Warnings* warnings = nullptr;      // this request's warnings are appended here too
};

enum class Propagation { Default, Background, Foreground, Orphan };

struct DeleteOptions {
  bool dryRun = false;
  Propagation propagationPolicy = Propagation::Default;
  std::string_view preconditionUid = {};             // delete only this incarnation
  std::string_view preconditionResourceVersion = {}; // delete only this version
  std::optional<std::int64_t> gracePeriodSeconds = {};
};

// The GCC 12 rule above, enforced.
static_assert(
    std::is_trivially_copyable_v<GetOptions> && std::is_trivially_copyable_v<ListOptions> &&
    std::is_trivially_copyable_v<CreateOptions> && std::is_trivially_copyable_v<ApplyOptions> &&
    std::is_trivially_copyable_v<PatchOptions> && std::is_trivially_copyable_v<UpdateOptions> &&
    std::is_trivially_copyable_v<DeleteOptions> && std::is_trivially_copyable_v<WatchOptions>);

// One resource of a discovery document (GET /api/v1, /apis/<group>/<version>).
struct ApiResource {
  std::string name = {}; // "configmaps", "deployments/status"
  std::string kind = {};
  bool namespaced = false;
  std::vector<std::string> verbs = {};
};

struct ApiResourceList {
  std::string groupVersion = {};
  std::vector<ApiResource> resources = {};
  const ApiResource* find(std::string_view name) const;
};

struct VersionInfo {
  std::string major = {};
  std::string minor = {};
  std::string gitVersion = {}; // "v1.36.4"
  std::string gitCommit = {};
  std::string platform = {};
  Json raw = {};
};

// The object a request is about, for its warnings: namespace, name, and the caller's list.
struct RequestTarget {
  std::string_view ns = {};
  std::string_view name = {};
  Warnings* warnings = nullptr;
};

class Client {
public:
  // Throws ConfigError if the configuration is unusable (server URL, PEM data).
  Client(boost::asio::any_io_executor executor, Config config, ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // ns: "" for cluster-scoped resources (ignored for them).
  boost::asio::awaitable<Json> get(ResourceRef ref, std::string ns, std::string name,
                                   GetOptions options = {});
  // As get, but std::nullopt where the object does not exist (404) instead of an ApiError.
  boost::asio::awaitable<std::optional<Json>> getOpt(ResourceRef ref, std::string ns,
                                                     std::string name, GetOptions options = {});
  // One page. ns "" lists a namespaced resource across all namespaces.
  boost::asio::awaitable<ListResult> list(ResourceRef ref, std::string ns,
                                          ListOptions options = {});
  // Every page (options.limit per page, 500 if 0), following continue tokens. If a continue
  // token expires (410) the list starts over once without paging, as client-go's pager does.
  // `keep`, if given, sees each item as its page arrives and may change it; items it returns
  // false for are dropped, so a caller that keeps little of a large list never holds more than
  // one page of whole objects.
  using ItemFilter = std::function<bool(Json& item)>;
  boost::asio::awaitable<ListResult> listAll(ResourceRef ref, std::string ns,
                                             ListOptions options = {}, ItemFilter keep = {});
  boost::asio::awaitable<Json> create(ResourceRef ref, Json object, CreateOptions options = {});
  // Server-side apply: PATCH application/apply-patch+yaml, fieldManager, force. apiVersion and
  // kind are filled in from ref when the object lacks them.
  boost::asio::awaitable<Json> apply(ResourceRef ref, Json object, ApplyOptions options = {});
  boost::asio::awaitable<Json> patch(ResourceRef ref, std::string ns, std::string name,
                                     PatchType type, Json patch, PatchOptions options = {});
  // PUT; metadata.resourceVersion in the object makes it conditional (409 if stale).
  boost::asio::awaitable<Json> update(ResourceRef ref, Json object, UpdateOptions options = {});
  // DELETE; returns what the server returns (the object while finalizers run, or a Status).
  boost::asio::awaitable<Json> remove(ResourceRef ref, std::string ns, std::string name,
                                      DeleteOptions options = {});
  // As remove, but false where the object is already gone (404) instead of an ApiError; true
  // when this request deleted it (or began its deletion).
  boost::asio::awaitable<bool> removeIfExists(ResourceRef ref, std::string ns, std::string name,
                                              DeleteOptions options = {});
  boost::asio::awaitable<Watch> watch(ResourceRef ref, std::string ns, WatchOptions options = {});
  // GET pods/<pod>/log: the container's log as text (the API server asks the pod's kubelet).
  boost::asio::awaitable<std::string> podLog(std::string ns, std::string pod,
                                             LogOptions options = {});

  // The resources a group version serves; std::nullopt if the group version is not served.
  boost::asio::awaitable<std::optional<ApiResourceList>> discovery(std::string group,
                                                                   std::string version);
  boost::asio::awaitable<bool> serves(std::string group, std::string version, std::string resource);
  boost::asio::awaitable<VersionInfo> version();
  // A GET of a path outside the resources (e.g. "/openapi/v3/api/v1?hash=..."): its JSON.
  boost::asio::awaitable<Json> getPath(std::string target);

  const Config& config() const;
  const std::string& fieldManager() const { return options_.fieldManager; }
  HttpClient& http() { return *http_; }
  boost::asio::any_io_executor executor() const;

private:
  // The response's JSON; `fields`: only what that mask names (field_mask.hpp).
  boost::asio::awaitable<Json> call(std::string_view verb, std::string_view resource,
                                    HttpRequest request, const FieldMask* fields = nullptr,
                                    RequestTarget target = {});
  void warn(std::string_view verb, std::string_view resource, const RequestTarget& target,
            const std::vector<std::string>& warnings) const;
  std::string_view manager(std::string_view requested) const;
  void observe(std::string_view verb, std::string_view resource, int code,
               std::chrono::steady_clock::time_point start) const;

  ClientOptions options_;
  std::unique_ptr<HttpClient> http_;
};

} // namespace csiop::kube
