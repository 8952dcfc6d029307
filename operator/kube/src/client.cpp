#include <csiop/kube/client.hpp>

#include <csiop/kube/attempt.hpp>

#include <stdexcept>

#include "request_target.hpp"

namespace csiop::kube {
namespace {

using boost::asio::awaitable;
using detail::groupVersionPath;
using detail::Query;
using detail::resourcePath;

std::string metadataString(const Json& object, const char* key) {
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object())
    return {};
  const auto it = metadata->find(key);
  return it != metadata->end() && it->is_string() ? it->get<std::string>() : std::string();
}

void requireNamespace(const ResourceRef& ref, const std::string& ns, std::string_view verb) {
  if (ref.namespaced && ns.empty())
    throw std::invalid_argument(std::string(verb) + " " + ref.resource +
                                ": a namespace is required for a namespaced resource");
}

void requireName(const ResourceRef& ref, const std::string& name, std::string_view verb) {
  if (name.empty())
    throw std::invalid_argument(std::string(verb) + " " + ref.resource + ": a name is required");
}

// apiVersion and kind first, as kubectl writes them, when the object lacks them.
void fillTypeMeta(const ResourceRef& ref, Json& object) {
  if (!object.is_object())
    throw std::invalid_argument(ref.resource + ": the object must be a JSON object");
  if (!object.contains("apiVersion") || !object.contains("kind")) {
    Json filled = Json::object();
    filled["apiVersion"] = object.value("apiVersion", ref.apiVersion());
    filled["kind"] = object.value("kind", ref.kind);
    for (auto it = object.begin(); it != object.end(); ++it)
      if (it.key() != "apiVersion" && it.key() != "kind")
        filled[it.key()] = std::move(it.value());
    object = std::move(filled);
  }
}

// The query every write (create, apply, patch, update) sends: dry run, field manager, field
// validation.
template <class Options> Query writeQuery(const Options& options, std::string_view fieldManager) {
  Query query;
  if (options.dryRun)
    query.add("dryRun", "All");
  query.addIfNotEmpty("fieldManager", fieldManager);
  query.addIfNotEmpty("fieldValidation", options.fieldValidation);
  return query;
}

HttpRequest writeRequest(Method method, std::string target, std::string_view contentType,
                         std::string body) {
  HttpRequest request(method, std::move(target));
  request.contentType = std::string(contentType);
  request.body = std::move(body);
  return request;
}

std::string_view patchContentType(PatchType type) {
  switch (type) {
  case PatchType::Merge:
    return "application/merge-patch+json";
  case PatchType::JsonPatch:
    return "application/json-patch+json";
  case PatchType::StrategicMerge:
    return "application/strategic-merge-patch+json";
  }
  return "application/merge-patch+json";
}

std::string_view propagationName(Propagation p) {
  switch (p) {
  case Propagation::Background:
    return "Background";
  case Propagation::Foreground:
    return "Foreground";
  case Propagation::Orphan:
    return "Orphan";
  case Propagation::Default:
    break;
  }
  return {};
}

std::string str(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Json statusJson(const Status& status) {
  Json out = {
      {"kind", "Status"},           {"apiVersion", "v1"},
      {"metadata", Json::object()}, {"status", status.status.empty() ? "Failure" : status.status},
      {"message", status.message},  {"reason", status.reason},
      {"code", status.code}};
  return out;
}

// One request, answered 2xx or thrown (TransportError, or ApiError with the server's Status);
// `observed(code)` is told the HTTP code (0: no answer) either way. The response of call() and
// of the requests that are not JSON (a pod's log).
template <class Observed>
awaitable<HttpResponse> exchange(HttpClient& http, HttpRequest request, const Observed& observed) {
  const std::string what = std::string(toString(request.method)) + " " + request.target;
  HttpResponse response;
  try {
    response = co_await http.send(std::move(request));
  } catch (...) {
    observed(0);
    throw;
  }
  observed(response.status);
  if (response.status < 200 || response.status > 299)
    throw ApiError(response.status, statusFromResponse(response.status, response.body), what,
                   parseRetryAfter(response.retryAfter));
  co_return response;
}

} // namespace

std::string_view Client::manager(std::string_view requested) const {
  return requested.empty() ? std::string_view(options_.fieldManager) : requested;
}

const ApiResource* ApiResourceList::find(std::string_view name) const {
  for (const auto& r : resources)
    if (r.name == name)
      return &r;
  return nullptr;
}

Client::Client(boost::asio::any_io_executor executor, Config config, ClientOptions options)
    : options_(std::move(options)),
      http_(std::make_unique<HttpClient>(std::move(executor), std::move(config), options_.http)) {}

Client::~Client() = default;

const Config& Client::config() const {
  return http_->config();
}
boost::asio::any_io_executor Client::executor() const {
  return http_->executor();
}

void Client::observe(std::string_view verb, std::string_view resource, int code,
                     std::chrono::steady_clock::time_point start) const {
  if (!options_.observer)
    return;
  try {
    options_.observer(verb, resource, code, std::chrono::steady_clock::now() - start);
  } catch (...) {
    // metrics must never fail a request
  }
}

void Client::warn(std::string_view verb, std::string_view resource, const RequestTarget& target,
                  const std::vector<std::string>& warnings) const {
  for (const std::string& text : warnings) {
    if (target.warnings != nullptr) {
      target.warnings->push_back(text);
    }
    if (options_.warnings) {
      try {
        options_.warnings(verb, resource, target.ns, target.name, text);
      } catch (...) {
        // a log or a metric must never fail a request
      }
    }
  }
}

awaitable<Json> Client::call(std::string_view verb, std::string_view resource, HttpRequest request,
                             const FieldMask* fields, RequestTarget target) {
  const std::string what = std::string(toString(request.method)) + " " + request.target;
  const auto start = std::chrono::steady_clock::now();
  const auto observed = [&](int code) { observe(verb, resource, code, start); };
  HttpResponse response = co_await exchange(*http_, std::move(request), observed);
  warn(verb, resource, target, response.warnings);
  Json json = parseOrDiscard(response.body, fields);
  if (json.is_discarded())
    throw TransportError(
        TransportError::Kind::Protocol,
        what + ": the response is not JSON (" + std::to_string(response.body.size()) + " bytes, " +
            (response.contentType.empty() ? "no content type" : response.contentType) + ")");
  co_return json;
}

awaitable<Json> Client::get(ResourceRef ref, std::string ns, std::string name, GetOptions options) {
  requireNamespace(ref, ns, "get");
  requireName(ref, name, "get");
  HttpRequest request;
  request.target = resourcePath(ref, ns, name, options.subresource) +
                   Query().addIfNotEmpty("resourceVersion", options.resourceVersion).str();
  const RequestTarget target{ns, name, nullptr};
  co_return co_await call("get", ref.resource, std::move(request), nullptr, target);
}

awaitable<std::optional<Json>> Client::getOpt(ResourceRef ref, std::string ns, std::string name,
                                              GetOptions options) {
  auto found = co_await attempt(get(ref, std::move(ns), std::move(name), options));
  if (found.notFound()) {
    co_return std::nullopt;
  }
  if (!found) {
    found.rethrow();
  }
  co_return std::move(*found);
}

awaitable<std::string> Client::podLog(std::string ns, std::string pod, LogOptions options) {
  requireNamespace(resources::pods, ns, "read the log of");
  requireName(resources::pods, pod, "read the log of");
  Query query;
  query.addIfNotEmpty("container", options.container);
  if (options.tailLines > 0) {
    query.add("tailLines", std::to_string(options.tailLines));
  }
  if (options.limitBytes > 0) {
    query.add("limitBytes", std::to_string(options.limitBytes));
  }
  if (options.previous) {
    query.add("previous", "true");
  }
  HttpRequest request;
  request.target = resourcePath(resources::pods, ns, pod, "log") + query.str();
  request.timeout = options.timeout;
  const auto start = std::chrono::steady_clock::now();
  const auto observed = [&](int code) { observe("get", "pods/log", code, start); };
  HttpResponse response = co_await exchange(*http_, std::move(request), observed);
  co_return std::move(response.body);
}

awaitable<ListResult> Client::list(ResourceRef ref, std::string ns, ListOptions options) {
  Query query;
  query.addIfNotEmpty("labelSelector", options.labelSelector)
      .addIfNotEmpty("fieldSelector", options.fieldSelector)
      .addIfNotEmpty("resourceVersion", options.resourceVersion)
      .addIfNotEmpty("resourceVersionMatch", options.resourceVersionMatch)
      .addIfNotEmpty("continue", options.continueToken);
  if (options.limit > 0)
    query.add("limit", std::to_string(options.limit));
  HttpRequest request;
  request.target = resourcePath(ref, ns) + query.str();
  std::optional<FieldMask> fields;
  if (options.fields != nullptr)
    fields = FieldMask::within("items", *options.fields, {"apiVersion", "kind", "metadata"});
  const FieldMask* itemFields = fields ? &*fields : nullptr;
  const RequestTarget target{ns, {}, nullptr};
  Json json = co_await call("list", ref.resource, std::move(request), itemFields, target);

  ListResult result;
  const auto metadata = json.find("metadata");
  if (metadata != json.end() && metadata->is_object()) {
    result.resourceVersion = str(*metadata, "resourceVersion");
    result.continueToken = str(*metadata, "continue");
    const auto remaining = metadata->find("remainingItemCount");
    if (remaining != metadata->end() && remaining->is_number_integer())
      result.remainingItemCount = remaining->get<std::int64_t>();
  }
  const auto items = json.find("items");
  if (items != json.end() && items->is_array()) {
    result.items.reserve(items->size());
    for (auto& item : *items) {
      if (item.is_object())
        fillTypeMeta(ref, item); // list items come without apiVersion and kind
      result.items.push_back(std::move(item));
    }
  }
  co_return result;
}

awaitable<ListResult> Client::listAll(ResourceRef ref, std::string ns, ListOptions options,
                                      ItemFilter keep) {
  if (options.limit <= 0)
    options.limit = 500;
  ListResult all;
  std::string continueToken; // options.continueToken views this
  bool restarted = false;
  for (;;) {
    ListResult page;
    bool expired = false;
    try {
      page = co_await list(ref, ns, options);
    } catch (const ApiError& e) {
      // An expired continue token: start over with one unpaginated list (client-go's pager).
      if (!e.isGone() || options.continueToken.empty() || restarted)
        throw;
      expired = true;
    }
    if (expired) {
      restarted = true;
      all = {};
      options.continueToken = {};
      options.limit = 0;
      continue;
    }
    for (auto& item : page.items) {
      if (!keep || keep(item))
        all.items.push_back(std::move(item));
    }
    page.items = {}; // the whole objects go before the next page comes
    all.resourceVersion = page.resourceVersion;
    if (page.continueToken.empty())
      break;
    // Later pages are pinned by the continue token; a resourceVersion is not allowed with it.
    continueToken = std::move(page.continueToken);
    options.continueToken = continueToken;
    options.resourceVersion = {};
    options.resourceVersionMatch = {};
  }
  co_return all;
}

awaitable<Json> Client::create(ResourceRef ref, Json object, CreateOptions options) {
  fillTypeMeta(ref, object);
  const std::string ns = metadataString(object, "namespace");
  const std::string name = metadataString(object, "name");
  requireNamespace(ref, ns, "create");
  const Query query = writeQuery(options, manager(options.fieldManager));
  HttpRequest request = writeRequest(Method::Post, resourcePath(ref, ns) + query.str(),
                                     "application/json", object.dump());
  const RequestTarget target{ns, name, options.warnings};
  co_return co_await call("create", ref.resource, std::move(request), nullptr, target);
}

awaitable<Json> Client::apply(ResourceRef ref, Json object, ApplyOptions options) {
  fillTypeMeta(ref, object);
  const std::string ns = metadataString(object, "namespace");
  const std::string name = metadataString(object, "name");
  requireNamespace(ref, ns, "apply");
  requireName(ref, name, "apply");
  Query query = writeQuery(options, manager(options.fieldManager));
  if (options.force)
    query.add("force", "true");
  HttpRequest request =
      writeRequest(Method::Patch, resourcePath(ref, ns, name, options.subresource) + query.str(),
                   "application/apply-patch+yaml", object.dump()); // JSON is YAML
  request.idempotent = true; // the same apply twice has the same result
  const RequestTarget target{ns, name, options.warnings};
  co_return co_await call("apply", ref.resource, std::move(request), nullptr, target);
}

awaitable<Json> Client::patch(ResourceRef ref, std::string ns, std::string name, PatchType type,
                              Json patch, PatchOptions options) {
  requireNamespace(ref, ns, "patch");
  requireName(ref, name, "patch");
  const Query query = writeQuery(options, manager(options.fieldManager));
  HttpRequest request =
      writeRequest(Method::Patch, resourcePath(ref, ns, name, options.subresource) + query.str(),
                   patchContentType(type), patch.dump());
  request.idempotent = type == PatchType::Merge;
  const RequestTarget target{ns, name, options.warnings};
  co_return co_await call("patch", ref.resource, std::move(request), nullptr, target);
}

awaitable<Json> Client::update(ResourceRef ref, Json object, UpdateOptions options) {
  fillTypeMeta(ref, object);
  const std::string ns = metadataString(object, "namespace");
  const std::string name = metadataString(object, "name");
  requireNamespace(ref, ns, "update");
  requireName(ref, name, "update");
  const Query query = writeQuery(options, manager(options.fieldManager));
  HttpRequest request =
      writeRequest(Method::Put, resourcePath(ref, ns, name, options.subresource) + query.str(),
                   "application/json", object.dump());
  const RequestTarget target{ns, name, options.warnings};
  co_return co_await call("update", ref.resource, std::move(request), nullptr, target);
}

awaitable<Json> Client::remove(ResourceRef ref, std::string ns, std::string name,
                               DeleteOptions options) {
  requireNamespace(ref, ns, "delete");
  requireName(ref, name, "delete");
  Json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (const auto policy = propagationName(options.propagationPolicy); !policy.empty())
    body["propagationPolicy"] = policy;
  if (!options.preconditionUid.empty())
    body["preconditions"]["uid"] = std::string(options.preconditionUid);
  if (!options.preconditionResourceVersion.empty())
    body["preconditions"]["resourceVersion"] = std::string(options.preconditionResourceVersion);
  if (options.gracePeriodSeconds)
    body["gracePeriodSeconds"] = *options.gracePeriodSeconds;
  if (options.dryRun)
    body["dryRun"] = Json::array({"All"});
  HttpRequest request;
  request.method = Method::Delete;
  request.target = resourcePath(ref, ns, name);
  request.contentType = "application/json";
  request.body = body.dump();
  const RequestTarget target{ns, name, nullptr};
  co_return co_await call("delete", ref.resource, std::move(request), nullptr, target);
}

awaitable<bool> Client::removeIfExists(ResourceRef ref, std::string ns, std::string name,
                                       DeleteOptions options) {
  const auto removed = co_await attempt(remove(ref, std::move(ns), std::move(name), options));
  if (removed.notFound()) {
    co_return false;
  }
  if (!removed) {
    removed.rethrow();
  }
  co_return true;
}

awaitable<Watch> Client::watch(ResourceRef ref, std::string ns, WatchOptions options) {
  Query query;
  query.add("watch", "true")
      .addIfNotEmpty("resourceVersion", options.resourceVersion)
      .addIfNotEmpty("labelSelector", options.labelSelector)
      .addIfNotEmpty("fieldSelector", options.fieldSelector);
  if (options.allowWatchBookmarks)
    query.add("allowWatchBookmarks", "true");
  if (options.timeoutSeconds)
    query.add("timeoutSeconds", std::to_string(*options.timeoutSeconds));
  if (options.sendInitialEvents)
    query.add("sendInitialEvents", "true").add("resourceVersionMatch", "NotOlderThan");
  HttpRequest request;
  request.target = resourcePath(ref, ns) + query.str();
  const std::string what = "WATCH " + request.target;
  const auto start = std::chrono::steady_clock::now();
  std::optional<HttpStream> stream;
  try {
    stream.emplace(co_await http_->openStream(std::move(request)));
  } catch (...) {
    observe("watch", ref.resource, 0, start);
    throw;
  }
  const int code = stream->status();
  observe("watch", ref.resource, code, start);
  if (code == 200)
    co_return Watch(std::move(*stream), std::string(options.resourceVersion), options.idleTimeout,
                    what, options.fields);
  const std::string body = co_await stream->readAll();
  Status status = statusFromResponse(code, body);
  if (code == 410) { // refused outright: report it the way an ERROR event would
    WatchEvent expired;
    expired.type = WatchEventType::Error;
    expired.object = statusJson(status);
    co_return Watch(std::move(expired), std::string(options.resourceVersion), what);
  }
  throw ApiError(code, std::move(status), what, parseRetryAfter(stream->retryAfter()));
}

awaitable<std::optional<ApiResourceList>> Client::discovery(std::string group,
                                                            std::string version) {
  HttpRequest request;
  request.target = groupVersionPath(group, version);
  Json json;
  bool notServed = false;
  try {
    json = co_await call("discovery", "", std::move(request));
  } catch (const ApiError& e) {
    if (!e.isNotFound())
      throw;
    notServed = true;
  }
  if (notServed)
    co_return std::nullopt;
  ApiResourceList list;
  list.groupVersion = str(json, "groupVersion");
  const auto resources = json.find("resources");
  if (resources != json.end() && resources->is_array()) {
    for (const Json& r : *resources) {
      if (!r.is_object())
        continue;
      ApiResource resource;
      resource.name = str(r, "name");
      resource.kind = str(r, "kind");
      const auto namespaced = r.find("namespaced");
      resource.namespaced =
          namespaced != r.end() && namespaced->is_boolean() && namespaced->get<bool>();
      const auto verbs = r.find("verbs");
      if (verbs != r.end() && verbs->is_array())
        for (const Json& v : *verbs)
          if (v.is_string())
            resource.verbs.push_back(v.get<std::string>());
      list.resources.push_back(std::move(resource));
    }
  }
  co_return list;
}

awaitable<bool> Client::serves(std::string group, std::string version, std::string resource) {
  const auto list = co_await discovery(std::move(group), std::move(version));
  co_return list && list->find(resource) != nullptr;
}

awaitable<Json> Client::getPath(std::string target) {
  HttpRequest request;
  request.target = std::move(target);
  co_return co_await call("get", "", std::move(request));
}

awaitable<VersionInfo> Client::version() {
  HttpRequest request;
  request.target = "/version";
  Json json = co_await call("version", "", std::move(request));
  VersionInfo info;
  info.major = str(json, "major");
  info.minor = str(json, "minor");
  info.gitVersion = str(json, "gitVersion");
  info.gitCommit = str(json, "gitCommit");
  info.platform = str(json, "platform");
  info.raw = std::move(json);
  co_return info;
}

} // namespace csiop::kube
