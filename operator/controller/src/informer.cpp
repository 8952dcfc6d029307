#include <csiop/controller/informer.hpp>

#include <algorithm>
#include <random>
#include <stdexcept>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <csiop/api/json_access.hpp>
#include <csiop/controller/field_ownership.hpp>

namespace csiop::controller {
namespace {

namespace asio = boost::asio;

std::chrono::milliseconds nextBackoff(std::chrono::milliseconds current) {
  return std::min(current * 2, std::chrono::milliseconds(30'000));
}

// Watches end on the server's side after a jittered 5..10 minutes, like
// client-go's reflector, so connections are recycled across apiserver restarts
// and load balancers.
int watchTimeoutSeconds() {
  static std::minstd_rand rng{std::random_device{}()};
  return 300 + static_cast<int>(rng() % 300);
}

// Objects per list page. client-go's 500 leaves the heap at the peak of 500 whole objects
// parsed at once (a pod is ~8 KiB of JSON, several times that parsed), with the kept parts
// scattered through it; 100 bounds that peak at the cost of a few more requests at start
// (5,100 pods: 51 instead of 11). Measured after a restart against operator_bench's 100
// DriverDeployments on 50 nodes, with malloc_trim after each list: 55 MB of anonymous memory
// with pages of 500, 36 MB with 100.
constexpr std::int64_t kListPage = 100;

// A list parses whole objects a page at a time and keeps a cut-down part of each; the allocator
// keeps what was freed for reuse, scattered between what is kept. Hand the free pages back to
// the system, so that a start or a relist of many objects does not leave the process at its
// peak for good (glibc: malloc_trim returns free pages from the middle of the heap too).
void releaseFreedMemory() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

} // namespace

Informer::Informer(kube::Client& client, kube::ResourceRef ref, std::string labelSelector)
    : client_(client), ref_(std::move(ref)), labelSelector_(std::move(labelSelector)),
      timer_(std::make_unique<asio::steady_timer>(client.executor())) {}

Informer::~Informer() = default;

std::string Informer::keyOf(const Json& object) {
  const std::string ns = api::metadataField(object, "namespace");
  const std::string name = api::metadataField(object, "name");
  return ns.empty() ? name : ns + "/" + name;
}

const Json* Informer::get(const std::string& ns, const std::string& name) const {
  const auto it = store_.find(ns.empty() ? name : ns + "/" + name);
  return it == store_.end() ? nullptr : &it->second;
}

std::vector<const Json*> Informer::list() const {
  std::vector<const Json*> out;
  out.reserve(store_.size());
  for (const auto& [k, v] : store_) {
    out.push_back(&v);
  }
  return out;
}

void Informer::addIndex(std::string name, IndexValues values) {
  indexes_[std::move(name)] = Index{std::move(values), {}};
}

const std::set<std::string>* Informer::indexed(const std::string& index,
                                               const std::string& value) const {
  const auto i = indexes_.find(index);
  if (i == indexes_.end()) {
    throw std::logic_error("informer " + ref_.resource + " has no index " + index);
  }
  const auto v = i->second.keys.find(value);
  return v == i->second.keys.end() ? nullptr : &v->second;
}

std::vector<const Json*> Informer::byIndex(const std::string& index,
                                           const std::string& value) const {
  std::vector<const Json*> out;
  if (const auto* keys = indexed(index, value)) {
    out.reserve(keys->size());
    for (const auto& key : *keys) {
      out.push_back(&store_.at(key));
    }
  }
  return out;
}

std::size_t Informer::countByIndex(const std::string& index, const std::string& value) const {
  const auto* keys = indexed(index, value);
  return keys == nullptr ? 0 : keys->size();
}

void Informer::indexAdd(const std::string& key, const Json& object) {
  for (auto& [name, index] : indexes_) {
    for (auto& value : index.values(object)) {
      index.keys[std::move(value)].insert(key);
    }
  }
}

void Informer::indexRemove(const std::string& key, const Json& object) {
  for (auto& [name, index] : indexes_) {
    for (const auto& value : index.values(object)) {
      if (const auto v = index.keys.find(value); v != index.keys.end()) {
        v->second.erase(key);
        if (v->second.empty()) {
          index.keys.erase(v);
        }
      }
    }
  }
}

void Informer::notify(const Json* old, const Json* updated) {
  for (const auto& h : handlers_) {
    h(old, updated);
  }
}

namespace {

// What the cache keeps of an object's metadata.managedFields: who manages it and how, without
// the field sets (often a third of an object's size, never read), as client-go's
// TransformStripManagedFields but for the names the operator needs to take over what it
// created (field_ownership.hpp). Updates that omit it leave it unchanged.
void trim(Json& object) {
  if (const auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
    if (const auto fields = meta->find("managedFields"); fields != meta->end()) {
      *fields = managerSummary(*fields);
    }
  }
}

// Whether two versions of an object differ in more than their resourceVersion: with a
// transform, most updates (a kubelet's status heartbeat, a node's) change only what the
// transform cut away, and the handlers need not hear of them.
bool sameButVersion(const Json& a, const Json& b) {
  const auto withoutVersion = [](Json o) {
    if (const auto meta = o.find("metadata"); meta != o.end() && meta->is_object()) {
      meta->erase("resourceVersion");
    }
    return o;
  };
  return withoutVersion(a) == withoutVersion(b);
}

} // namespace

// What the cache keeps of a listed or watched object, or false to keep none of it.
bool Informer::prepare(Json& object) const {
  // List items carry no apiVersion/kind; keep objects self-describing.
  object["apiVersion"] = ref_.apiVersion();
  object["kind"] = ref_.kind;
  trim(object);
  return !transform_ || transform_(object);
}

void Informer::replaceAll(std::vector<Json> items) {
  std::map<std::string, Json> fresh;
  for (auto& item : items) {
    std::string key = keyOf(item);
    fresh.emplace(std::move(key), std::move(item));
  }
  std::map<std::string, Json> old = std::move(store_);
  store_ = std::move(fresh);
  for (auto& [name, index] : indexes_) {
    index.keys.clear();
  }
  for (const auto& [key, object] : store_) {
    indexAdd(key, object);
  }
  for (const auto& [key, object] : old) {
    if (!store_.contains(key)) {
      notify(&object, nullptr);
    }
  }
  for (const auto& [key, object] : store_) {
    const auto it = old.find(key);
    if (it == old.end()) {
      notify(nullptr, &object);
    } else if (api::metadataField(it->second, "resourceVersion") !=
                   api::metadataField(object, "resourceVersion") &&
               !(transform_ && sameButVersion(it->second, object))) {
      notify(&it->second, &object);
    }
  }
}

void Informer::applyEvent(const kube::WatchEvent& event) {
  using T = kube::WatchEventType;
  if (event.type == T::Bookmark || event.type == T::Error) {
    return;
  }
  Json object = event.object;
  const std::string key = keyOf(object);
  const auto it = store_.find(key);
  const bool kept = prepare(object);
  if (event.type == T::Deleted || !kept) {
    if (it != store_.end()) {
      const Json old = std::move(it->second);
      store_.erase(it);
      indexRemove(key, old);
      notify(&old, nullptr);
    }
    return;
  }
  if (it == store_.end()) {
    const auto [inserted, ok] = store_.emplace(key, std::move(object));
    indexAdd(key, inserted->second);
    notify(nullptr, &inserted->second);
  } else if (transform_ && sameButVersion(it->second, object)) {
    it->second = std::move(object); // nothing the handlers can see changed
  } else {
    const Json old = std::exchange(it->second, std::move(object));
    indexRemove(key, old);
    indexAdd(key, it->second);
    notify(&old, &it->second);
  }
}

asio::awaitable<void> Informer::sleep(std::chrono::milliseconds delay) {
  if (stopped_) {
    co_return; // stop() came while a request was in flight: its cancel() found no wait
  }
  timer_->expires_after(delay);
  boost::system::error_code ec;
  co_await timer_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<void> Informer::run() {
  std::chrono::milliseconds backoff{200};
  // co_await is not allowed in a handler: failures set `wait` and sleep after.
  const auto failed = [&](const char* what, const std::exception& e) {
    spdlog::warn("{} {}: {}; retrying in {} ms", what, ref_.resource, e.what(), backoff.count());
  };
  while (!stopped_) {
    std::string resourceVersion;
    bool listed = false;
    try {
      // Cut down page by page, in pages of kListPage: a cache of a few fields of many objects
      // never holds more than one small page of them whole.
      const kube::Client::ItemFilter keep = [this](Json& item) { return prepare(item); };
      auto result = co_await client_.listAll(
          ref_, "", {.labelSelector = labelSelector_, .limit = kListPage}, keep);
      if (stopped_) {
        break;
      }
      ++relists_;
      resourceVersion = result.resourceVersion;
      replaceAll(std::move(result.items));
      result = {};
      releaseFreedMemory();
      synced_ = true;
      listed = true;
      backoff = std::chrono::milliseconds(200);
    } catch (const kube::ApiError& e) {
      failed("list", e);
    } catch (const kube::TransportError& e) {
      failed("list", e);
    }
    if (!listed) {
      co_await sleep(backoff);
      backoff = nextBackoff(backoff);
      continue;
    }
    // Watch from the list's version until the server says it is gone.
    bool relist = false;
    while (!stopped_ && !relist) {
      bool wait = false;
      try {
        auto w = co_await client_.watch(ref_, "",
                                        {.resourceVersion = resourceVersion,
                                         .labelSelector = labelSelector_,
                                         .allowWatchBookmarks = true,
                                         .timeoutSeconds = watchTimeoutSeconds()});
        ++watches_;
        if (stopped_) {
          co_return; // stop() came while the watch was opening: nothing would cancel it
        }
        watch_ = &w;
        try {
          while (auto event = co_await w.next()) {
            applyEvent(*event);
          }
        } catch (const kube::TransportError& e) {
          spdlog::info("watch {} broke: {}", ref_.resource, e.what());
        }
        watch_ = nullptr;
        if (!w.resourceVersion().empty()) {
          resourceVersion = w.resourceVersion();
        }
        const auto end = w.end();
        if (end == kube::WatchEnd::Cancelled || stopped_) {
          co_return;
        }
        if (end == kube::WatchEnd::Expired || end == kube::WatchEnd::Error) {
          spdlog::info("watch {} from {}: {}; relisting", ref_.resource, resourceVersion,
                       kube::toString(end));
          relist = true;
          // An expiry is routine; an error event is the server in trouble: back off first.
          wait = end == kube::WatchEnd::Error;
        } else if (end == kube::WatchEnd::Broken) {
          wait = true;
        } else {
          backoff = std::chrono::milliseconds(200);
        }
      } catch (const kube::ApiError& e) {
        watch_ = nullptr;
        relist = true;
        wait = !e.isGone();
        if (wait) {
          failed("watch", e);
        } else {
          spdlog::info("watch {} from {}: {}; relisting", ref_.resource, resourceVersion,
                       kube::toString(kube::WatchEnd::Expired));
        }
      } catch (const kube::TransportError& e) {
        watch_ = nullptr;
        wait = true;
        failed("watch", e);
      }
      if (wait) {
        co_await sleep(backoff);
        backoff = nextBackoff(backoff);
      }
    }
  }
}

void Informer::stop() {
  stopped_ = true;
  if (watch_ != nullptr) {
    watch_->cancel();
  }
  timer_->cancel();
}

} // namespace csiop::controller
