#include <csiop/kube/watch.hpp>

#include <deque>

#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>

namespace csiop::kube {
namespace {

std::string excerpt(std::string_view text) {
  constexpr std::size_t max = 200;
  return text.size() <= max ? std::string(text) : std::string(text.substr(0, max)) + "...";
}

std::optional<WatchEventType> typeFromString(std::string_view type) {
  if (type == "ADDED")
    return WatchEventType::Added;
  if (type == "MODIFIED")
    return WatchEventType::Modified;
  if (type == "DELETED")
    return WatchEventType::Deleted;
  if (type == "BOOKMARK")
    return WatchEventType::Bookmark;
  if (type == "ERROR")
    return WatchEventType::Error;
  return std::nullopt;
}

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

} // namespace

std::string_view toString(WatchEventType type) {
  switch (type) {
  case WatchEventType::Added:
    return "ADDED";
  case WatchEventType::Modified:
    return "MODIFIED";
  case WatchEventType::Deleted:
    return "DELETED";
  case WatchEventType::Bookmark:
    return "BOOKMARK";
  case WatchEventType::Error:
    return "ERROR";
  }
  return "?";
}

std::string_view toString(WatchEnd end) {
  switch (end) {
  case WatchEnd::Open:
    return "open";
  case WatchEnd::Closed:
    return "closed";
  case WatchEnd::Expired:
    return "expired";
  case WatchEnd::Error:
    return "error";
  case WatchEnd::Cancelled:
    return "cancelled";
  case WatchEnd::Broken:
    return "broken";
  }
  return "?";
}

bool WatchEvent::isExpired() const {
  if (type != WatchEventType::Error)
    return false;
  const Status status = Status::fromJson(object);
  return status.code == 410 || status.reason == "Expired" || status.reason == "Gone";
}

ApiError WatchEvent::error() const {
  Status status = Status::fromJson(object);
  const int code = status.code;
  return ApiError(code, std::move(status), "watch ERROR event");
}

namespace {

// eventFields: FieldMask::within("object", <the object's mask>, {"type"}), or nullptr.
WatchEvent parseEvent(std::string_view line, const FieldMask* eventFields) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
    line.remove_suffix(1);
  Json json = parseOrDiscard(line, eventFields);
  if (eventFields != nullptr && json.is_object() && json.value("type", Json()) == "ERROR")
    return parseEvent(line, nullptr); // a Status, not the watched kind: all of it
  if (json.is_discarded() || !json.is_object())
    throw TransportError(TransportError::Kind::Protocol,
                         "watch: not a JSON event: " + excerpt(line));
  const auto type = json.find("type");
  const auto object = json.find("object");
  if (type == json.end() || !type->is_string())
    throw TransportError(TransportError::Kind::Protocol,
                         "watch: event without a type: " + excerpt(line));
  const auto parsed = typeFromString(type->get<std::string>());
  if (!parsed)
    throw TransportError(TransportError::Kind::Protocol,
                         "watch: unknown event type '" + type->get<std::string>() + "'");
  if (object == json.end() || !object->is_object())
    throw TransportError(TransportError::Kind::Protocol,
                         "watch: event without an object: " + excerpt(line));
  return WatchEvent{*parsed, std::move(*object)};
}

} // namespace

WatchEvent parseWatchEvent(std::string_view line) {
  return parseEvent(line, nullptr);
}

WatchDecoder::WatchDecoder(std::size_t maxLineBytes, const FieldMask* objectFields)
    : maxLineBytes_(maxLineBytes) {
  if (objectFields != nullptr)
    objectFields_ = FieldMask::within("object", *objectFields, {"type"});
}

WatchEvent WatchDecoder::parse(std::string_view line) const {
  return parseEvent(line, objectFields_ ? &*objectFields_ : nullptr);
}

std::vector<WatchEvent> WatchDecoder::feed(std::string_view bytes) {
  std::vector<WatchEvent> events;
  for (;;) {
    const auto newline = bytes.find('\n');
    if (newline == std::string_view::npos)
      break;
    const std::string_view piece = bytes.substr(0, newline);
    bytes.remove_prefix(newline + 1);
    if (partial_.empty()) {
      if (!blank(piece))
        events.push_back(parse(piece));
    } else {
      partial_.append(piece);
      std::string line = std::move(partial_);
      partial_.clear();
      if (!blank(line))
        events.push_back(parse(line));
    }
  }
  if (partial_.size() + bytes.size() > maxLineBytes_)
    throw TransportError(TransportError::Kind::Protocol,
                         "watch: event longer than " + std::to_string(maxLineBytes_) + " bytes");
  partial_.append(bytes);
  return events;
}

// --- Watch -----------------------------------------------------------------------------------

struct Watch::Impl {
  std::optional<HttpStream> stream;
  std::chrono::milliseconds idleTimeout{0};
  std::string description;
  WatchDecoder decoder;
  std::deque<WatchEvent> pending;
  std::string resourceVersion;
  WatchEnd end = WatchEnd::Open;
  bool cancelRequested = false;

  void close() {
    if (stream)
      stream->cancel();
  }

  void finish(WatchEnd how) {
    end = how;
    pending.clear();
    close();
  }

  // Bookkeeping for an event about to be returned.
  void account(const WatchEvent& event) {
    if (event.type == WatchEventType::Error) {
      finish(event.isExpired() ? WatchEnd::Expired : WatchEnd::Error);
      return;
    }
    const auto metadata = event.object.find("metadata");
    if (metadata != event.object.end() && metadata->is_object()) {
      const auto rv = metadata->find("resourceVersion");
      if (rv != metadata->end() && rv->is_string() && !rv->get<std::string>().empty())
        resourceVersion = rv->get<std::string>();
    }
  }

  boost::asio::awaitable<std::optional<WatchEvent>> next() {
    for (;;) {
      if (cancelRequested && end == WatchEnd::Open)
        finish(WatchEnd::Cancelled);
      if (!pending.empty()) {
        WatchEvent event = std::move(pending.front());
        pending.pop_front();
        account(event);
        co_return event;
      }
      if (end != WatchEnd::Open || !stream)
        co_return std::nullopt;
      std::optional<std::string> bytes;
      try {
        bytes = co_await stream->read(idleTimeout);
      } catch (const boost::system::system_error& e) {
        if (e.code() != boost::asio::error::operation_aborted)
          throw;
        finish(WatchEnd::Cancelled); // cancel(), or the awaiting coroutine was cancelled
        co_return std::nullopt;
      } catch (const TransportError&) {
        finish(WatchEnd::Broken);
        throw;
      }
      if (!bytes) {
        if (decoder.hasPartialLine()) {
          finish(WatchEnd::Broken);
          throw TransportError(TransportError::Kind::Protocol,
                               description + ": the stream ended inside an event");
        }
        finish(WatchEnd::Closed);
        co_return std::nullopt;
      }
      try {
        for (auto& event : decoder.feed(*bytes))
          pending.push_back(std::move(event));
      } catch (const TransportError& e) {
        finish(WatchEnd::Broken);
        throw TransportError(e.kind(), description + ": " + e.what());
      }
    }
  }
};

Watch::Watch(HttpStream stream, std::string resourceVersion, std::chrono::milliseconds idleTimeout,
             std::string description, const FieldMask* fields)
    : impl_(std::make_unique<Impl>()) {
  impl_->decoder = WatchDecoder(WatchDecoder::kDefaultMaxLineBytes, fields);
  impl_->stream.emplace(std::move(stream));
  impl_->resourceVersion = std::move(resourceVersion);
  impl_->idleTimeout = idleTimeout;
  impl_->description = std::move(description);
}

Watch::Watch(WatchEvent error, std::string resourceVersion, std::string description)
    : impl_(std::make_unique<Impl>()) {
  impl_->pending.push_back(std::move(error));
  impl_->resourceVersion = std::move(resourceVersion);
  impl_->description = std::move(description);
}

Watch::Watch(Watch&&) noexcept = default;
Watch& Watch::operator=(Watch&&) noexcept = default;
Watch::~Watch() = default;

boost::asio::awaitable<std::optional<WatchEvent>> Watch::next() {
  return impl_->next();
}

void Watch::cancel() {
  impl_->cancelRequested = true;
  impl_->close();
}

WatchEnd Watch::end() const {
  return impl_->end;
}
const std::string& Watch::resourceVersion() const {
  return impl_->resourceVersion;
}

} // namespace csiop::kube
