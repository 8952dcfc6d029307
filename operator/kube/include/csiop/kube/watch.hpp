// Watching a resource: the API server streams one JSON object per line,
// {"type": "ADDED|MODIFIED|DELETED|BOOKMARK|ERROR", "object": {...}}.
//
//   auto w = co_await client.watch(resources::configmaps, "ns", {.resourceVersion = rv});
//   while (auto event = co_await w.next()) { ... }
//   switch (w.end()) {
//   case WatchEnd::Expired: relist;                         // 410: rv left the watch window
//   case WatchEnd::Closed: watch again from w.resourceVersion(); ...
//   }
//
// The watch tracks the resourceVersion of the last ADDED/MODIFIED/DELETED/BOOKMARK event.
// cancel() (from another coroutine on the same executor, e.g. at shutdown or on losing
// leadership) makes a pending or later next() return std::nullopt with end() == Cancelled;
// cancelling the awaiting coroutine through asio's cancellation slot does the same.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include <csiop/kube/errors.hpp>
#include <csiop/kube/field_mask.hpp>
#include <csiop/kube/http.hpp>

namespace csiop::kube {

enum class WatchEventType { Added, Modified, Deleted, Bookmark, Error };
std::string_view toString(WatchEventType type);

struct WatchEvent {
  WatchEventType type = WatchEventType::Added;
  Json object = {}; // the object; for Error events a metav1.Status

  // An Error event saying the requested resourceVersion is too old (410 Gone / Expired).
  bool isExpired() const;
  // The Status of an Error event as an ApiError (code = Status.code).
  ApiError error() const;
};

// One line (without the newline). Throws TransportError(Protocol) if it is not a watch event.
WatchEvent parseWatchEvent(std::string_view line);

// Splits the body of a watch response into events, whatever the chunking: a line split over
// several reads is kept until its newline arrives. Blank lines are skipped.
class WatchDecoder {
public:
  static constexpr std::size_t kDefaultMaxLineBytes = std::size_t{64} << 20;
  // `objectFields`: what to build of each event's object (field_mask.hpp; nullptr: all of it;
  // copied); an ERROR event's Status is built whole.
  explicit WatchDecoder(std::size_t maxLineBytes = kDefaultMaxLineBytes,
                        const FieldMask* objectFields = nullptr);
  // The events completed by these bytes. Throws TransportError(Protocol) for a malformed line
  // or a line longer than maxLineBytes.
  std::vector<WatchEvent> feed(std::string_view bytes);
  bool hasPartialLine() const { return !partial_.empty(); }

private:
  WatchEvent parse(std::string_view line) const;

  std::size_t maxLineBytes_;
  std::optional<FieldMask> objectFields_;
  std::string partial_;
};

// Views and scalars (see "Options" in client.hpp); the watch copies what it keeps.
struct WatchOptions {
  std::string_view resourceVersion = {}; // start after this version ("" : from now; "0": any,
                                         // with the current objects first as ADDED)
  std::string_view labelSelector = {};
  std::string_view fieldSelector = {};
  bool allowWatchBookmarks = true;
  std::optional<int> timeoutSeconds = {}; // the server ends the stream after this
  bool sendInitialEvents = false;         // streaming list: current objects as ADDED, then a
                                          // BOOKMARK annotated k8s.io/initial-events-end
  std::chrono::milliseconds idleTimeout =
      std::chrono::minutes(5);       // nothing received for
                                     // this long: TransportError(Timeout); 0: no limit
  const FieldMask* fields = nullptr; // what to build of each object (nullptr: all); copied
};

enum class WatchEnd {
  Open,      // still streaming
  Closed,    // the server ended the stream (timeoutSeconds, apiserver shutdown, ...): watch
             // again from resourceVersion()
  Expired,   // ERROR 410: resourceVersion() is too old; relist, then watch from the list's
  Error,     // another ERROR event (returned by next(); see WatchEvent::error())
  Cancelled, // cancel() or asio cancellation
  Broken,    // next() threw TransportError (connection lost mid-stream)
};
std::string_view toString(WatchEnd end);

class Watch {
public:
  // Used by Client::watch: starts at resourceVersion, fails after idleTimeout of silence.
  Watch(HttpStream stream, std::string resourceVersion, std::chrono::milliseconds idleTimeout,
        std::string description, const FieldMask* fields = nullptr);
  // A watch that ends at once with this ERROR event (the server refused the watch with 410).
  Watch(WatchEvent error, std::string resourceVersion, std::string description);
  Watch(Watch&&) noexcept;
  Watch& operator=(Watch&&) noexcept;
  ~Watch();

  // The next event, or std::nullopt once the watch has ended (then see end()). An ERROR event
  // is returned and ends the watch. Throws TransportError if the stream breaks.
  boost::asio::awaitable<std::optional<WatchEvent>> next();
  void cancel();

  WatchEnd end() const;
  bool expired() const { return end() == WatchEnd::Expired; }
  const std::string& resourceVersion() const; // of the last event that carried one

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace csiop::kube
