// An in-memory API server for the reconciler's tests, on the scripted HTTP server of
// test/unit/kube/test_server.hpp: lists, watches, gets, creates, server-side applies, updates
// (the status subresource included, with the resourceVersion precondition) and deletes of the
// resources the operator uses. Every write is a new resourceVersion and a watch event.
//
// A watch stays open: it answers with the events since its resourceVersion, then the server
// pushes each event as a write makes it, in order, each batch followed by a bookmark at the
// server's resourceVersion(). A cache has caught up when its reflector's
// lastSyncResourceVersion() is that: the tests wait on that, never on time.
// hold() keeps the events of one resource back, as a watch that lags behind its writes.
// Field ownership is modelled as far as the operator reads it: a create records its field
// manager (operation Update), a server-side apply its own (operation Apply), in
// metadata.managedFields, without the fields themselves. JSON patches (RFC 6902, "test"
// included: a failed test is 422) and merge patches are applied to the stored object; one that
// leaves a deleted object without finalizers removes it, as the API server does. Not modelled:
// strategic merge patches (415), generateName but for Events (which are not stored), the
// deletion of an object with finalizers (erase() deletes at once; put() sets a
// deletionTimestamp as the API server would).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <csiop/api/types.hpp>
#include <csiop/kube/resource.hpp>

#include "../kube/test_server.hpp"

namespace csiop::driverdeployment::testing {

using api::Json;
using kube::testing::Reply;
using kube::testing::Request;

class FakeApi {
public:
  explicit FakeApi(boost::asio::io_context& io)
      : server_(io, [this](const Request& r) {
          Reply reply = handle(r);
          if (delay_) {
            reply.delay += delay_(r);
          }
          return reply;
        }) {}

  std::string url() const { return server_.url(); }
  const std::vector<Request>& requests() const { return server_.requests(); }

  // Creates or replaces `object` as another client would (a controller, kubectl): stored as
  // given (generation and status included), with a new resourceVersion and a watch event.
  const Json& put(const kube::ResourceRef& ref, Json object) {
    object["apiVersion"] = ref.apiVersion();
    object["kind"] = ref.kind;
    Json& meta = object["metadata"];
    if (!meta.contains("uid")) {
      meta["uid"] = newUid();
    }
    const std::string key = keyOf(ref, meta.value("namespace", ""), meta["name"]);
    const bool existed = objects_.contains(key);
    return store(ref, key, std::move(object), existed ? "MODIFIED" : "ADDED");
  }

  // Deletes an object as another client would; false if there is none.
  bool erase(const kube::ResourceRef& ref, const std::string& ns, const std::string& name) {
    const auto it = objects_.find(keyOf(ref, ns, name));
    if (it == objects_.end()) {
      return false;
    }
    Json gone = std::move(it->second.object);
    objects_.erase(it);
    gone["metadata"]["resourceVersion"] = std::to_string(++resourceVersion_);
    log_.push_back({resourceVersion_, resourceKey(ref), "DELETED", gone});
    deliver();
    return true;
  }

  const Json* find(const kube::ResourceRef& ref, const std::string& ns,
                   const std::string& name) const {
    const auto it = objects_.find(keyOf(ref, ns, name));
    return it == objects_.end() ? nullptr : &it->second.object;
  }

  // The stored object of that kind and name, whatever its namespace.
  const Json* findNamed(const kube::ResourceRef& ref, const std::string& name) const {
    for (const auto& [key, s] : objects_) {
      if (resourceKey(s.ref) == resourceKey(ref) && s.object["metadata"]["name"] == name) {
        return &s.object;
      }
    }
    return nullptr;
  }

  // Every stored object of that kind, in any namespace.
  std::vector<Json> all(const kube::ResourceRef& ref) const {
    std::vector<Json> out;
    for (const auto& [key, s] : objects_) {
      if (resourceKey(s.ref) == resourceKey(ref)) {
        out.push_back(s.object);
      }
    }
    return out;
  }

  // The watches of `ref` deliver nothing until release(): the caches lag behind the server.
  void hold(const kube::ResourceRef& ref) { held_.insert(resourceKey(ref)); }
  void release(const kube::ResourceRef& ref) {
    held_.erase(resourceKey(ref));
    deliver();
  }
  bool held(const kube::ResourceRef& ref) const { return held_.contains(resourceKey(ref)); }

  // The resourceVersion of the last write: what every watch that is not held has sent last.
  std::string resourceVersion() const { return std::to_string(resourceVersion_); }
  // Requests not answered yet (an open watch is answered).
  int unanswered() const { return server_.unanswered(); }

  // Called for each DELETE before it is carried out; returns how long the answer is delayed.
  using DeleteHook = std::function<std::chrono::milliseconds(const Request&)>;
  void onDelete(DeleteHook hook) { onDelete_ = std::move(hook); }

  // Called for each request once it is carried out; returns how long its answer is delayed
  // (a slow answer, to tell a client's round trips apart).
  using DelayHook = std::function<std::chrono::milliseconds(const Request&)>;
  void delay(DelayHook hook) { delay_ = std::move(hook); }

  // Called for each request first: a reply it returns is the answer instead (a 429, a 500), and
  // the request is not carried out.
  using Intercept = std::function<std::optional<Reply>(const Request&)>;
  void intercept(Intercept hook) { intercept_ = std::move(hook); }

  // How many requests had this method and a target containing `part`.
  int count(const std::string& method, const std::string& part) const {
    int n = 0;
    for (const auto& r : requests()) {
      n += r.method == method && r.target.find(part) != std::string::npos ? 1 : 0;
    }
    return n;
  }

private:
  struct Stored {
    kube::ResourceRef ref;
    Json object;
  };
  struct Event {
    std::int64_t resourceVersion;
    std::string resource; // resourceKey()
    std::string type;
    Json object;
  };
  // An open watch: what it selects, and how far it has been sent.
  struct Watcher {
    const kube::ResourceRef* ref = nullptr;
    std::string selector;
    std::string fieldSelector;
    std::int64_t sent = 0; // resourceVersion
    std::shared_ptr<kube::testing::ChunkFeed> feed;
  };
  struct Target {
    const kube::ResourceRef* ref = nullptr;
    std::string ns, name, subresource;
    std::map<std::string, std::string> query;
  };

  static std::string resourceKey(const kube::ResourceRef& ref) {
    return ref.group + "/" + ref.resource;
  }
  static std::string keyOf(const kube::ResourceRef& ref, const std::string& ns,
                           const std::string& name) {
    return resourceKey(ref) + "/" + ns + "/" + name;
  }

  static std::string decoded(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '%' && i + 2 < s.size()) {
        out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        out += s[i];
      }
    }
    return out;
  }

  static std::vector<std::string> split(const std::string& s, char by) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
      const std::size_t end = s.find(by, start);
      out.push_back(s.substr(start, end - start));
      if (end == std::string::npos) {
        return out;
      }
      start = end + 1;
    }
  }

  static const std::vector<const kube::ResourceRef*>& known() {
    namespace r = kube::resources;
    static const std::vector<const kube::ResourceRef*> all = {&r::namespaces,
                                                              &r::serviceaccounts,
                                                              &r::configmaps,
                                                              &r::secrets,
                                                              &r::events,
                                                              &r::nodes,
                                                              &r::pods,
                                                              &r::persistentvolumes,
                                                              &r::persistentvolumeclaims,
                                                              &r::services,
                                                              &r::poddisruptionbudgets,
                                                              &r::daemonsets,
                                                              &r::deployments,
                                                              &r::statefulsets,
                                                              &r::controllerrevisions,
                                                              &r::replicasets,
                                                              &r::clusterroles,
                                                              &r::clusterrolebindings,
                                                              &r::roles,
                                                              &r::rolebindings,
                                                              &r::csidrivers,
                                                              &r::csinodes,
                                                              &r::storageclasses,
                                                              &r::volumeattachments,
                                                              &r::priorityclasses,
                                                              &r::driverdeployments};
    return all;
  }

  static std::optional<Target> parse(const std::string& raw) {
    const std::size_t q = raw.find('?');
    const std::vector<std::string> parts =
        split(raw.substr(1, q == std::string::npos ? q : q - 1), '/');
    std::string group, version;
    std::size_t at = 0;
    if (parts.size() >= 2 && parts[0] == "api") {
      version = parts[1];
      at = 2;
    } else if (parts.size() >= 3 && parts[0] == "apis") {
      group = parts[1];
      version = parts[2];
      at = 3;
    } else {
      return std::nullopt;
    }
    std::vector<std::string> rest(parts.begin() + static_cast<std::ptrdiff_t>(at), parts.end());
    Target t;
    if (rest.size() >= 3 && rest[0] == "namespaces") {
      t.ns = decoded(rest[1]);
      rest.erase(rest.begin(), rest.begin() + 2);
    }
    if (rest.empty()) {
      return std::nullopt;
    }
    for (const auto* ref : known()) {
      if (ref->group == group && ref->version == version && ref->resource == rest[0]) {
        t.ref = ref;
      }
    }
    if (t.ref == nullptr) {
      return std::nullopt;
    }
    t.name = rest.size() > 1 ? decoded(rest[1]) : "";
    t.subresource = rest.size() > 2 ? rest[2] : "";
    if (q != std::string::npos) {
      for (const std::string& pair : split(raw.substr(q + 1), '&')) {
        const std::size_t eq = pair.find('=');
        t.query[decoded(pair.substr(0, eq))] =
            eq == std::string::npos ? "" : decoded(pair.substr(eq + 1));
      }
    }
    return t;
  }

  static Reply status(int code, const std::string& reason, const std::string& message) {
    const Json body = {{"kind", "Status"},   {"apiVersion", "v1"}, {"status", "Failure"},
                       {"message", message}, {"reason", reason},   {"code", code}};
    return Reply{.status = code, .body = body.dump()};
  }

  // A field selector as the API server reads it: "path=value" terms joined by commas, each path
  // dotted into the object ("type=Warning,reason=FailedMount", "involvedObject.kind=Pod").
  static bool fieldSelected(const Json& object, const std::string& selector) {
    for (const std::string& term : split(selector, ',')) {
      const std::size_t eq = term.find('=');
      if (term.empty() || eq == std::string::npos) {
        continue;
      }
      const Json* at = &object;
      for (const std::string& key : split(term.substr(0, eq), '.')) {
        at = at->is_object() && at->contains(key) ? &(*at)[key] : nullptr;
        if (at == nullptr) {
          break;
        }
      }
      if (at == nullptr || !at->is_string() || at->get<std::string>() != term.substr(eq + 1)) {
        return false;
      }
    }
    return true;
  }

  // Only what the operator's informers select: "key" or "key=value".
  static bool selected(const Json& object, const std::string& selector) {
    if (selector.empty()) {
      return true;
    }
    const Json labels = object["metadata"].value("labels", Json::object());
    const std::size_t eq = selector.find('=');
    const std::string key = selector.substr(0, eq);
    if (!labels.contains(key)) {
      return false;
    }
    return eq == std::string::npos || labels[key] == selector.substr(eq + 1);
  }

  const Json& store(const kube::ResourceRef& ref, const std::string& key, Json object,
                    const std::string& type) {
    object["metadata"]["resourceVersion"] = std::to_string(++resourceVersion_);
    log_.push_back({resourceVersion_, resourceKey(ref), type, object});
    Stored& s = objects_[key];
    s.ref = ref;
    s.object = std::move(object);
    deliver();
    return s.object;
  }

  // Records the request's field manager in metadata.managedFields (one entry per manager and
  // operation, as the API server keeps them).
  static void setManager(Json& object, const std::map<std::string, std::string>& query,
                         const std::string& operation) {
    const auto manager = query.find("fieldManager");
    if (manager == query.end()) {
      return;
    }
    Json& entries = object["metadata"]["managedFields"];
    for (const Json& e : entries) {
      if (e.value("manager", "") == manager->second && e.value("operation", "") == operation) {
        return;
      }
    }
    entries.push_back({{"manager", manager->second},
                       {"operation", operation},
                       {"apiVersion", object.value("apiVersion", "")},
                       {"fieldsType", "FieldsV1"}});
  }

  static Json withoutMetaAndStatus(Json o) {
    o.erase("metadata");
    o.erase("status");
    o.erase("apiVersion");
    o.erase("kind");
    return o;
  }

  Reply handle(const Request& r) {
    if (intercept_) {
      if (std::optional<Reply> instead = intercept_(r)) {
        return std::move(*instead);
      }
    }
    const std::optional<Target> t = parse(r.target);
    if (!t) {
      return status(404, "NotFound", "no such resource: " + r.target);
    }
    const kube::ResourceRef& ref = *t->ref;
    if (r.method == "GET" && t->name.empty()) {
      return t->query.contains("watch") ? watch(*t) : list(*t);
    }
    const std::string key = keyOf(ref, t->ns, t->name);
    const auto it = objects_.find(key);
    if (r.method == "GET") {
      return it == objects_.end() ? status(404, "NotFound", key + " not found")
                                  : Reply{.body = it->second.object.dump()};
    }
    if (r.method == "DELETE") {
      const auto delay = onDelete_ ? onDelete_(r) : std::chrono::milliseconds(0);
      // DeleteOptions' preconditions, as the API server checks them.
      const Json options = r.body.empty() ? Json::object() : Json::parse(r.body);
      const Json& uid = options.value("preconditions", Json::object()).value("uid", Json());
      if (it != objects_.end() && uid.is_string() && uid != it->second.object["metadata"]["uid"]) {
        return status(409, "Conflict", key + ": the precondition uid " + uid.dump() + " fails");
      }
      if (!erase(ref, t->ns, t->name)) {
        return status(404, "NotFound", key + " not found");
      }
      return Reply{.body = Json{{"kind", "Status"}, {"status", "Success"}}.dump(), .delay = delay};
    }
    Json body = Json::parse(r.body);
    if (r.method == "POST") {
      if (ref.resource == "events") {
        return Reply{.status = 201, .body = body.dump()};
      }
      const std::string name = body["metadata"].value("name", "");
      if (!t->ns.empty()) {
        body["metadata"]["namespace"] = t->ns;
      }
      const std::string created = keyOf(ref, t->ns, name);
      if (objects_.contains(created)) {
        return status(409, "AlreadyExists", created + " already exists");
      }
      body["metadata"]["uid"] = newUid();
      body["metadata"]["generation"] = 1;
      body["metadata"]["managedFields"] = Json::array();
      setManager(body, t->query, "Update");
      body["apiVersion"] = ref.apiVersion();
      body["kind"] = ref.kind;
      return Reply{.status = 201, .body = store(ref, created, std::move(body), "ADDED").dump()};
    }
    if (r.method == "PATCH") {
      const std::string type = r.headers.count("content-type") ? r.headers.at("content-type") : "";
      if (type == "application/json-patch+json" || type == "application/merge-patch+json") {
        if (it == objects_.end()) {
          return status(404, "NotFound", key + " not found");
        }
        Json patched = it->second.object;
        if (type == "application/merge-patch+json") {
          patched.merge_patch(body);
        } else {
          try {
            patched = patched.patch(body);
          } catch (const nlohmann::json::exception& e) {
            return status(422, "Invalid", std::string("the patch does not apply: ") + e.what());
          }
        }
        Json& meta = patched["metadata"];
        if (meta.contains("deletionTimestamp") && meta.value("finalizers", Json::array()).empty()) {
          erase(ref, t->ns, t->name);
          return Reply{.body = patched.dump()};
        }
        return Reply{.body = store(ref, key, std::move(patched), "MODIFIED").dump()};
      }
      if (type != "application/apply-patch+yaml") {
        return status(415, "UnsupportedMediaType", "the fake API serves no " + type);
      }
      if (!t->ns.empty()) {
        body["metadata"]["namespace"] = t->ns;
      }
      body["apiVersion"] = ref.apiVersion();
      body["kind"] = ref.kind;
      if (it == objects_.end()) {
        body["metadata"]["uid"] = newUid();
        body["metadata"]["generation"] = 1;
        body["metadata"]["managedFields"] = Json::array();
        setManager(body, t->query, "Apply");
        return Reply{.status = 201, .body = store(ref, key, std::move(body), "ADDED").dump()};
      }
      const Json& was = it->second.object;
      body["metadata"]["uid"] = was["metadata"]["uid"];
      body["metadata"]["managedFields"] = was["metadata"].value("managedFields", Json::array());
      setManager(body, t->query, "Apply");
      const std::int64_t generation = was["metadata"].value("generation", std::int64_t{1});
      body["metadata"]["generation"] =
          withoutMetaAndStatus(was) == withoutMetaAndStatus(body) ? generation : generation + 1;
      if (was.contains("status")) {
        body["status"] = was["status"];
      }
      return Reply{.body = store(ref, key, std::move(body), "MODIFIED").dump()};
    }
    if (r.method == "PUT") {
      if (it == objects_.end()) {
        return status(404, "NotFound", key + " not found");
      }
      const Json& was = it->second.object;
      if (body["metadata"].value("resourceVersion", "") != was["metadata"]["resourceVersion"]) {
        return status(409, "Conflict",
                      "Operation cannot be fulfilled on " + key +
                          ": the object has been modified; please apply your changes to the "
                          "latest version and try again");
      }
      Json updated = was;
      if (t->subresource == "status") {
        updated["status"] = body.value("status", Json::object());
      } else {
        updated = body;
        if (was.contains("status")) {
          updated["status"] = was["status"];
        }
      }
      return Reply{.body = store(ref, key, std::move(updated), "MODIFIED").dump()};
    }
    return status(405, "MethodNotAllowed", r.method);
  }

  Reply list(const Target& t) const {
    Json items = Json::array();
    for (const auto& [key, s] : objects_) {
      if (resourceKey(s.ref) == resourceKey(*t.ref) &&
          (t.ns.empty() || s.object["metadata"].value("namespace", "") == t.ns) &&
          selected(s.object, t.query.count("labelSelector") ? t.query.at("labelSelector") : "") &&
          fieldSelected(s.object,
                        t.query.count("fieldSelector") ? t.query.at("fieldSelector") : "")) {
        items.push_back(s.object);
      }
    }
    const Json body = {{"kind", t.ref->kind + "List"},
                       {"apiVersion", t.ref->apiVersion()},
                       {"metadata", {{"resourceVersion", std::to_string(resourceVersion_)}}},
                       {"items", std::move(items)}};
    return Reply{.body = body.dump()};
  }

  Reply watch(const Target& t) {
    Watcher w{.ref = t.ref,
              .selector = t.query.count("labelSelector") ? t.query.at("labelSelector") : "",
              .fieldSelector = t.query.count("fieldSelector") ? t.query.at("fieldSelector") : "",
              .sent =
                  t.query.count("resourceVersion") ? std::stoll(t.query.at("resourceVersion")) : 0,
              .feed = std::make_shared<kube::testing::ChunkFeed>()};
    std::vector<std::string> lines = unsent(w);
    const std::shared_ptr<kube::testing::ChunkFeed> feed = w.feed;
    watchers_.push_back(std::move(w));
    return Reply{.chunks = std::move(lines), .feed = feed};
  }

  // What `w` has not been sent yet (nothing while its resource is held): the events it
  // selects, then a bookmark at the server's resourceVersion.
  std::vector<std::string> unsent(Watcher& w) const {
    std::vector<std::string> lines;
    if (held_.contains(resourceKey(*w.ref)) || w.sent >= resourceVersion_) {
      return lines;
    }
    for (const Event& e : log_) {
      if (e.resourceVersion > w.sent && e.resource == resourceKey(*w.ref) &&
          selected(e.object, w.selector) && fieldSelected(e.object, w.fieldSelector)) {
        lines.push_back(Json{{"type", e.type}, {"object", e.object}}.dump() + "\n");
      }
    }
    const Json bookmark = {{"kind", w.ref->kind},
                           {"apiVersion", w.ref->apiVersion()},
                           {"metadata", {{"resourceVersion", std::to_string(resourceVersion_)}}}};
    lines.push_back(Json{{"type", "BOOKMARK"}, {"object", bookmark}}.dump() + "\n");
    w.sent = resourceVersion_;
    return lines;
  }

  // Pushes to every open watch what it has not been sent (a watch that has ended goes).
  void deliver() {
    std::erase_if(watchers_, [](const Watcher& w) { return w.feed->ended(); });
    for (Watcher& w : watchers_) {
      for (std::string& line : unsent(w)) {
        w.feed->push(std::move(line));
      }
    }
  }

  // As long as the API server's (a UUID): held on the heap, as a real one is, so that a view of
  // a copy that has gone reads freed memory under the sanitizers rather than a stale copy.
  std::string newUid() {
    const std::string n = std::to_string(++uids_);
    return "00000000-0000-4000-8000-" + std::string(12 - n.size(), '0') + n;
  }

  kube::testing::TestServer server_;
  std::map<std::string, Stored> objects_; // by keyOf()
  std::vector<Event> log_;
  std::set<std::string> held_;
  std::vector<Watcher> watchers_;
  DeleteHook onDelete_;
  Intercept intercept_;
  DelayHook delay_;
  std::int64_t resourceVersion_ = 1000;
  int uids_ = 0;
};

} // namespace csiop::driverdeployment::testing
