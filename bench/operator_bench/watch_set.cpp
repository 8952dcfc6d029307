#include "watch_set.hpp"

#include <iostream>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "async.hpp"

namespace csiop::bench {

namespace asio = boost::asio;

void WatchSet::start(kube::ResourceRef ref, std::string labelSelector, Handlers handlers,
                     std::optional<kube::FieldMask> fields) {
  ++loops_;
  ++started_;
  asio::co_spawn(
      client_.executor(),
      loop(std::move(ref), std::move(labelSelector), std::move(handlers), std::move(fields)),
      asio::detached);
}

void WatchSet::stop() {
  stopping_ = true;
  for (auto& [resource, watch] : watches_) {
    watch->cancel();
  }
}

asio::awaitable<void> WatchSet::loop(kube::ResourceRef ref, std::string selector, Handlers handlers,
                                     std::optional<kube::FieldMask> fields) {
  const kube::FieldMask* mask = fields ? &*fields : nullptr;
  std::chrono::milliseconds backoff{200};
  while (!stopping_) {
    std::string resourceVersion;
    bool listed = false;
    try {
      kube::ListOptions listOptions;
      listOptions.labelSelector = selector;
      listOptions.fields = mask;
      const kube::ListResult list = co_await client_.listAll(ref, "", listOptions);
      handlers.listed(list.items, Clock::now());
      resourceVersion = list.resourceVersion;
      synced_.insert(ref.resource);
      listed = true;
    } catch (const std::exception& e) {
      std::cerr << "bench: list " << ref.resource << ": " << e.what() << "\n";
    }
    if (!listed) {
      co_await pause(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
      continue;
    }
    bool relist = false;
    while (!stopping_ && !relist) {
      bool wait = false;
      try {
        kube::WatchOptions watchOptions;
        watchOptions.resourceVersion = resourceVersion;
        watchOptions.labelSelector = selector;
        watchOptions.timeoutSeconds = 300;
        watchOptions.fields = mask;
        kube::Watch w = co_await client_.watch(ref, "", watchOptions);
        watches_[ref.resource] = &w;
        if (stopping_) {
          w.cancel();
        }
        try {
          while (auto event = co_await w.next()) {
            const auto at = Clock::now();
            ++events_;
            using T = kube::WatchEventType;
            if (event->type == T::Added || event->type == T::Modified) {
              handlers.upserted(event->object, at);
            } else if (event->type == T::Deleted) {
              handlers.deleted(event->object, at);
            }
          }
        } catch (const kube::TransportError& e) {
          std::cerr << "bench: watch " << ref.resource << " broke: " << e.what() << "\n";
        } catch (...) {
          watches_.erase(ref.resource);
          throw;
        }
        watches_.erase(ref.resource);
        if (!w.resourceVersion().empty()) {
          resourceVersion = w.resourceVersion();
        }
        switch (w.end()) {
        case kube::WatchEnd::Expired:
        case kube::WatchEnd::Error:
          relist = true;
          break;
        case kube::WatchEnd::Broken:
          wait = true;
          break;
        default:
          break;
        }
      } catch (const kube::ApiError& e) {
        watches_.erase(ref.resource);
        relist = true;
        wait = !e.isGone();
      } catch (const std::exception& e) {
        watches_.erase(ref.resource);
        std::cerr << "bench: watch " << ref.resource << ": " << e.what() << "\n";
        relist = true;
        wait = true;
      }
      if (wait && !stopping_) {
        co_await pause(std::chrono::milliseconds(200));
      }
    }
  }
  --loops_;
}

} // namespace csiop::bench
