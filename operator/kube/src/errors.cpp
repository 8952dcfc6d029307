#include <csiop/kube/errors.hpp>

#include <algorithm>
#include <charconv>

namespace csiop::kube {
namespace {

std::string str(const Json& object, std::string_view key) {
  if (object.is_object()) {
    const auto it = object.find(key);
    if (it != object.end() && it->is_string())
      return it->get<std::string>();
  }
  return {};
}

const Json* member(const Json& object, std::string_view key) {
  if (!object.is_object())
    return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// The reason client-go gives a response that carries no Status (NewGenericServerResponse).
std::string reasonForCode(int code) {
  switch (code) {
  case 400:
    return "BadRequest";
  case 401:
    return "Unauthorized";
  case 403:
    return "Forbidden";
  case 404:
    return "NotFound";
  case 405:
    return "MethodNotAllowed";
  case 406:
    return "NotAcceptable";
  case 409:
    return "Conflict";
  case 410:
    return "Gone";
  case 413:
    return "RequestEntityTooLarge";
  case 415:
    return "UnsupportedMediaType";
  case 422:
    return "Invalid";
  case 429:
    return "TooManyRequests";
  case 500:
    return "InternalError";
  case 503:
    return "ServiceUnavailable";
  case 504:
    return "Timeout";
  default:
    return code >= 500 ? "InternalError" : "Unknown";
  }
}

std::string firstLine(std::string_view body, std::size_t max = 200) {
  const auto end = body.find_first_of("\r\n");
  std::string line(body.substr(0, end == std::string_view::npos ? body.size() : end));
  if (line.size() > max)
    line = line.substr(0, max) + "...";
  return line;
}

std::string describe(int code, const Status& status, const std::string& context) {
  std::string out = context.empty() ? std::string() : context + ": ";
  out += std::to_string(code);
  if (!status.reason.empty())
    out += " " + status.reason;
  if (!status.message.empty())
    out += ": " + status.message;
  return out;
}

} // namespace

bool Status::isStatus(const Json& json) {
  return str(json, "kind") == "Status";
}

Status Status::fromJson(const Json& json) {
  Status s;
  s.status = str(json, "status");
  s.message = str(json, "message");
  s.reason = str(json, "reason");
  if (const Json* code = member(json, "code"); code && code->is_number_integer())
    s.code = code->get<int>();
  if (const Json* details = member(json, "details"); details && details->is_object()) {
    s.details.name = str(*details, "name");
    s.details.group = str(*details, "group");
    s.details.kind = str(*details, "kind");
    s.details.uid = str(*details, "uid");
    if (const Json* retry = member(*details, "retryAfterSeconds");
        retry && retry->is_number_integer())
      s.details.retryAfterSeconds = retry->get<std::int64_t>();
    if (const Json* causes = member(*details, "causes"); causes && causes->is_array())
      for (const Json& c : *causes)
        s.details.causes.push_back({str(c, "reason"), str(c, "message"), str(c, "field")});
  }
  return s;
}

Status statusFromResponse(int httpCode, std::string_view body) {
  Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded() && Status::isStatus(json)) {
    Status s = Status::fromJson(json);
    if (s.code == 0)
      s.code = httpCode;
    if (s.reason.empty())
      s.reason = reasonForCode(httpCode);
    return s;
  }
  Status s;
  s.status = "Failure";
  s.code = httpCode;
  s.reason = reasonForCode(httpCode);
  s.message = body.empty() ? "the server answered " + std::to_string(httpCode) + " with no body"
                           : firstLine(body);
  return s;
}

std::optional<std::chrono::seconds> parseRetryAfter(std::string_view header) {
  while (!header.empty() && (header.front() == ' ' || header.front() == '\t'))
    header.remove_prefix(1);
  while (!header.empty() && (header.back() == ' ' || header.back() == '\t'))
    header.remove_suffix(1);
  std::int64_t seconds = 0;
  const auto* end = header.data() + header.size();
  const auto [ptr, ec] = std::from_chars(header.data(), end, seconds);
  if (header.empty() || ec != std::errc() || ptr != end || seconds < 0)
    return std::nullopt;
  return std::chrono::seconds(seconds);
}

ApiError::ApiError(int code, Status status, std::string context,
                   std::optional<std::chrono::seconds> retryAfter)
    : std::runtime_error(describe(code, status, context)), code_(code), status_(std::move(status)),
      context_(std::move(context)), retryAfter_(retryAfter) {
  if (!retryAfter_ && status_.details.retryAfterSeconds && *status_.details.retryAfterSeconds >= 0)
    retryAfter_ = std::chrono::seconds(*status_.details.retryAfterSeconds);
}

std::chrono::seconds ApiError::retryWait() const noexcept {
  if (!retryAfter_ || (code_ != 429 && code_ < 500))
    return std::chrono::seconds::zero();
  return std::min(*retryAfter_, kMaxRetryAfter);
}

bool ApiError::reasonIs(std::string_view reason, int code) const noexcept {
  if (status_.reason == reason)
    return true;
  // Unknown reasons (and none) fall back to the code, as apierrors.ReasonForError does.
  const bool known = !status_.reason.empty() && status_.reason != "Unknown";
  return !known && code_ == code;
}

bool ApiError::isNotFound() const noexcept {
  return reasonIs("NotFound", 404);
}
bool ApiError::isAlreadyExists() const noexcept {
  return reasonIs("AlreadyExists", 409);
}
bool ApiError::isConflict() const noexcept {
  return !isAlreadyExists() && reasonIs("Conflict", 409);
}
bool ApiError::isGone() const noexcept {
  return reasonIs("Expired", 410) || reasonIs("Gone", 410);
}
bool ApiError::isInvalid() const noexcept {
  return reasonIs("Invalid", 422);
}
bool ApiError::isBadRequest() const noexcept {
  return reasonIs("BadRequest", 400);
}
bool ApiError::isUnauthorized() const noexcept {
  return reasonIs("Unauthorized", 401);
}
bool ApiError::isForbidden() const noexcept {
  return reasonIs("Forbidden", 403);
}
bool ApiError::isTooManyRequests() const noexcept {
  return reasonIs("TooManyRequests", 429) || code_ == 429;
}
bool ApiError::isServerError() const noexcept {
  return code_ >= 500 && code_ <= 599;
}

TransportError::TransportError(Kind kind, const std::string& message)
    : std::runtime_error(message), kind_(kind) {}

std::string_view toString(TransportError::Kind kind) {
  switch (kind) {
  case TransportError::Kind::Connect:
    return "connect";
  case TransportError::Kind::Tls:
    return "tls";
  case TransportError::Kind::Timeout:
    return "timeout";
  case TransportError::Kind::Closed:
    return "closed";
  case TransportError::Kind::Protocol:
    return "protocol";
  }
  return "unknown";
}

} // namespace csiop::kube
